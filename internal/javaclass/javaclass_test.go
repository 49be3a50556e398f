package javaclass

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

func TestSerde(t *testing.T) {
	for _, c := range []struct {
		class string
		value any
		bytes []byte
	}{
		{"org.apache.kafka.common.serialization.Serdes$StringSerde", "hi", []byte("hi")},
		{"org.apache.kafka.common.serialization.Serdes$LongSerde", int64(258), []byte{0, 0, 0, 0, 0, 0, 1, 2}},
		{"org.apache.kafka.common.serialization.Serdes$IntegerSerde", int32(258), []byte{0, 0, 1, 2}},
		{"org.apache.kafka.common.serialization.Serdes$ShortSerde", int16(258), []byte{1, 2}},
		{"org.apache.kafka.common.serialization.Serdes$BooleanSerde", true, []byte{1}},
		{"org.apache.kafka.common.serialization.Serdes$ByteArraySerde", []byte{7}, []byte{7}},
		{" org.apache.kafka.common.serialization.Serdes$DoubleSerde ", 1.0, []byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}},
	} {
		s, err := Serde(c.class)
		if err != nil {
			t.Fatalf("%s: %v", c.class, err)
		}
		b, err := s.Serialize("t", nil, c.value)
		if err != nil || !bytes.Equal(b, c.bytes) {
			t.Errorf("%s: Serialize(%v) = %x, %v; want %x", c.class, c.value, b, err, c.bytes)
		}
	}
	for _, name := range []string{"FloatSerde", "BytesSerde", "UUIDSerde", "VoidSerde"} {
		if _, err := Serde(serdesPrefix + name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err := Serde("org.apache.kafka.common.serialization.Serdes$StringSerdee")
	if !errors.Is(err, serde.ErrUnknownClass) {
		t.Fatalf("unknown class: %v, want ErrUnknownClass", err)
	}
	const want = `unknown Java class: serde class "org.apache.kafka.common.serialization.Serdes$StringSerdee"; ` +
		`known: org.apache.kafka.common.serialization.Serdes$XSerde for X in String, Long, Integer, Short, Double, Float, ` +
		`Boolean, ByteArray, Bytes, UUID, Void (or set the Go serde in the configuration)`
	if err.Error() != want {
		t.Fatalf("message\n got %s\nwant %s", err, want)
	}
}

func TestTimestampExtractor(t *testing.T) {
	for class, want := range map[string]processor.TimestampExtractor{
		"org.apache.kafka.streams.processor.FailOnInvalidTimestamp":             processor.FailOnInvalidTimestamp{},
		"org.apache.kafka.streams.processor.LogAndSkipOnInvalidTimestamp":       processor.LogAndSkipOnInvalidTimestamp{},
		"org.apache.kafka.streams.processor.UsePartitionTimeOnInvalidTimestamp": processor.UsePartitionTimeOnInvalidTimestamp{},
		"org.apache.kafka.streams.processor.WallclockTimestampExtractor":        processor.WallclockTimestampExtractor{},
	} {
		got, err := TimestampExtractor(class)
		if err != nil || reflect.TypeOf(got) != reflect.TypeOf(want) {
			t.Errorf("%s: %T, %v; want %T", class, got, err, want)
		}
	}
	_, err := TimestampExtractor("WallclockTimestampExtractor")
	if !errors.Is(err, serde.ErrUnknownClass) {
		t.Fatalf("short name: %v, want ErrUnknownClass", err)
	}
	const want = `unknown Java class: timestamp extractor class "WallclockTimestampExtractor"; known: ` +
		`org.apache.kafka.streams.processor.X for X in FailOnInvalidTimestamp, LogAndSkipOnInvalidTimestamp, ` +
		`UsePartitionTimeOnInvalidTimestamp, WallclockTimestampExtractor`
	if err.Error() != want {
		t.Fatalf("message\n got %s\nwant %s", err, want)
	}
}
