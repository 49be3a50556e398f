package serde

import (
	"encoding/json"
	"fmt"
)

// JSON returns a serde of Go values as JSON text, using encoding/json
// (json.Marshal and json.Unmarshal, so struct tags apply). Its name is
// "JSON<T>". There is no Kafka built-in counterpart; the bytes are what a
// Java Jackson ObjectMapper reads and writes for the same document.
//
// Null: when T is a pointer, map, slice or interface type, a nil value
// serializes to nil bytes (not the text "null") and nil bytes deserialize to
// the zero value (nil). For other T, nil bytes deserialize to the zero value
// too. The text "null" deserializes as json.Unmarshal does (nil for nillable
// T). Input json.Unmarshal rejects, including empty bytes, gives an *Error
// wrapping ErrCorrupt, ErrInvalidValue and the encoding/json error; a value
// json.Marshal rejects gives one wrapping ErrUnsupported and it.
func JSON[T any]() Serde[T] {
	return &jsonSerde[T]{nillable: nillable[T](), name: "JSON<" + typeName[T]() + ">"}
}

type jsonSerde[T any] struct {
	nillable bool
	name     string
}

func (j *jsonSerde[T]) String() string { return j.name }

func (j *jsonSerde[T]) Serialize(topic string, _ *Headers, data T) ([]byte, error) {
	if j.nillable && isNil(data) {
		return nil, nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, serErr(j.name, topic, fmt.Errorf("%w: %w", ErrUnsupported, err))
	}
	return b, nil
}

func (j *jsonSerde[T]) Deserialize(topic string, _ *Headers, data []byte) (T, error) {
	var v T
	if data == nil {
		return v, nil
	}
	if err := json.Unmarshal(data, &v); err != nil {
		var zero T
		return zero, deserErr(j.name, topic, data, fmt.Errorf("%w: %w: %w", ErrCorrupt, ErrInvalidValue, err))
	}
	return v, nil
}
