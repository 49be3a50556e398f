package serde

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownClass is wrapped by the error [ForJavaClass] returns for a Java class name that has
// no Go counterpart here.
var ErrUnknownClass = errors.New("unknown Java class")

// JavaSerdesPrefix is the prefix of the Java class names of Kafka's built-in serdes
// (org.apache.kafka.common.serialization.Serdes$StringSerde, ...).
const JavaSerdesPrefix = "org.apache.kafka.common.serialization.Serdes$"

// javaSerdes maps the simple names of Java's built-in serdes (after "Serdes$") to ours.
var javaSerdes = map[string]func() Serde[any]{
	"StringSerde":    func() Serde[any] { return Untyped(String()) },
	"LongSerde":      func() Serde[any] { return Untyped(Long()) },
	"IntegerSerde":   func() Serde[any] { return Untyped(Integer()) },
	"ShortSerde":     func() Serde[any] { return Untyped(Short()) },
	"DoubleSerde":    func() Serde[any] { return Untyped(Double()) },
	"FloatSerde":     func() Serde[any] { return Untyped(Float()) },
	"BooleanSerde":   func() Serde[any] { return Untyped(Boolean()) },
	"ByteArraySerde": func() Serde[any] { return Untyped(ByteArray()) },
	"BytesSerde":     func() Serde[any] { return Untyped(Bytes()) },
	"UUIDSerde":      func() Serde[any] { return Untyped(UUID()) },
	"VoidSerde":      func() Serde[any] { return Untyped(Void()) },
}

// ForJavaClass returns the serde (as Serde[any]) named by a Java serde class name, as Java
// properties give it in default.key.serde and default.value.serde:
// org.apache.kafka.common.serialization.Serdes$XSerde for X in String, Long, Integer, Short,
// Double, Float, Boolean, ByteArray, Bytes, UUID and Void (surrounding spaces are ignored).
// The serdes write the bytes Java's do. Any other name returns an error wrapping
// ErrUnknownClass that lists the names understood. Java: Serdes.serdeFrom / the class loaded
// by StreamsConfig.defaultKeySerde.
func ForJavaClass(className string) (Serde[any], error) {
	name := strings.TrimSpace(className)
	if simple, ok := strings.CutPrefix(name, JavaSerdesPrefix); ok {
		if f, ok := javaSerdes[simple]; ok {
			return f(), nil
		}
	}
	return nil, fmt.Errorf("%w: serde class %q; known: %sXSerde for X in String, Long, Integer, Short, Double, "+
		"Float, Boolean, ByteArray, Bytes, UUID, Void (or set the Go serde in the configuration)", ErrUnknownClass, className, JavaSerdesPrefix)
}
