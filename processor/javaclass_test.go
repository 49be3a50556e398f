package processor_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

func TestTimestampExtractorForJavaClass(t *testing.T) {
	for class, want := range map[string]processor.TimestampExtractor{
		"org.apache.kafka.streams.processor.FailOnInvalidTimestamp":             processor.FailOnInvalidTimestamp{},
		"org.apache.kafka.streams.processor.LogAndSkipOnInvalidTimestamp":       processor.LogAndSkipOnInvalidTimestamp{},
		"org.apache.kafka.streams.processor.UsePartitionTimeOnInvalidTimestamp": processor.UsePartitionTimeOnInvalidTimestamp{},
		"org.apache.kafka.streams.processor.WallclockTimestampExtractor":        processor.WallclockTimestampExtractor{},
	} {
		got, err := processor.TimestampExtractorForJavaClass(class)
		if err != nil || reflect.TypeOf(got) != reflect.TypeOf(want) {
			t.Errorf("%s: %T, %v; want %T", class, got, err, want)
		}
	}
	_, err := processor.TimestampExtractorForJavaClass("WallclockTimestampExtractor")
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
