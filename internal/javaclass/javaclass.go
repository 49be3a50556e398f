// Package javaclass maps the Java class names that Java Kafka Streams properties give
// (default.key.serde, default.value.serde, default.timestamp.extractor) to their Go
// counterparts, for kstreams.ConfigFromProperties and the test driver's properties. Unknown
// names return an error wrapping serde.ErrUnknownClass, the sentinel users check.
package javaclass

import (
	"fmt"
	"strings"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// serdesPrefix is the prefix of the Java class names of Kafka's built-in serdes
// (org.apache.kafka.common.serialization.Serdes$StringSerde, ...).
const serdesPrefix = "org.apache.kafka.common.serialization.Serdes$"

// javaSerdes maps the simple names of Java's built-in serdes (after "Serdes$") to ours.
var javaSerdes = map[string]func() serde.Serde[any]{
	"StringSerde":    func() serde.Serde[any] { return serde.Untyped(serde.String()) },
	"LongSerde":      func() serde.Serde[any] { return serde.Untyped(serde.Long()) },
	"IntegerSerde":   func() serde.Serde[any] { return serde.Untyped(serde.Integer()) },
	"ShortSerde":     func() serde.Serde[any] { return serde.Untyped(serde.Short()) },
	"DoubleSerde":    func() serde.Serde[any] { return serde.Untyped(serde.Double()) },
	"FloatSerde":     func() serde.Serde[any] { return serde.Untyped(serde.Float()) },
	"BooleanSerde":   func() serde.Serde[any] { return serde.Untyped(serde.Boolean()) },
	"ByteArraySerde": func() serde.Serde[any] { return serde.Untyped(serde.ByteArray()) },
	"BytesSerde":     func() serde.Serde[any] { return serde.Untyped(serde.Bytes()) },
	"UUIDSerde":      func() serde.Serde[any] { return serde.Untyped(serde.UUID()) },
	"VoidSerde":      func() serde.Serde[any] { return serde.Untyped(serde.Void()) },
}

// Serde returns the serde (as serde.Serde[any]) named by a Java serde class name, as Java
// properties give it in default.key.serde and default.value.serde:
// org.apache.kafka.common.serialization.Serdes$XSerde for X in String, Long, Integer, Short,
// Double, Float, Boolean, ByteArray, Bytes, UUID and Void (surrounding spaces are ignored).
// The serdes write the bytes Java's do. Any other name returns an error wrapping
// serde.ErrUnknownClass that lists the names understood. Java: Serdes.serdeFrom / the class loaded
// by StreamsConfig.defaultKeySerde.
func Serde(className string) (serde.Serde[any], error) {
	name := strings.TrimSpace(className)
	if simple, ok := strings.CutPrefix(name, serdesPrefix); ok {
		if f, ok := javaSerdes[simple]; ok {
			return f(), nil
		}
	}
	return nil, fmt.Errorf("%w: serde class %q; known: %sXSerde for X in String, Long, Integer, Short, Double, "+
		"Float, Boolean, ByteArray, Bytes, UUID, Void (or set the Go serde in the configuration)", serde.ErrUnknownClass, className, serdesPrefix)
}

// extractorPrefix is the package of the Java class names [TimestampExtractor]
// understands.
const extractorPrefix = "org.apache.kafka.streams.processor."

// TimestampExtractor returns the extractor named by a Java class name, as Java
// properties give it in default.timestamp.extractor: org.apache.kafka.streams.processor.X for
// X in FailOnInvalidTimestamp, LogAndSkipOnInvalidTimestamp, UsePartitionTimeOnInvalidTimestamp
// and WallclockTimestampExtractor (surrounding spaces are ignored). Any other name returns an
// error wrapping serde.ErrUnknownClass that lists the names understood. Java: the class
// StreamsConfig.defaultTimestampExtractor loads.
func TimestampExtractor(className string) (processor.TimestampExtractor, error) {
	simple, ok := strings.CutPrefix(strings.TrimSpace(className), extractorPrefix)
	if !ok {
		simple = ""
	}
	switch simple {
	case "FailOnInvalidTimestamp":
		return processor.FailOnInvalidTimestamp{}, nil
	case "LogAndSkipOnInvalidTimestamp":
		return processor.LogAndSkipOnInvalidTimestamp{}, nil
	case "UsePartitionTimeOnInvalidTimestamp":
		return processor.UsePartitionTimeOnInvalidTimestamp{}, nil
	case "WallclockTimestampExtractor":
		return processor.WallclockTimestampExtractor{}, nil
	}
	return nil, fmt.Errorf("%w: timestamp extractor class %q; known: %sX for X in FailOnInvalidTimestamp, "+
		"LogAndSkipOnInvalidTimestamp, UsePartitionTimeOnInvalidTimestamp, WallclockTimestampExtractor", serde.ErrUnknownClass,
		className, extractorPrefix)
}
