package jsonschema_test

import (
	"errors"
	"fmt"

	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/serde/jsonschema"
)

// Validation failures name each failing field by JSON pointer.
func ExampleValidationError() {
	client, _ := registry.New(registry.Config{URLs: []string{"http://localhost:8081"}})
	type Event struct {
		Kind string `json:"kind"`
		At   int64  `json:"at"`
	}
	events, err := jsonschema.New[Event](client, `{"type": "object",
	  "properties": {"kind": {"enum": ["click", "view"]}, "at": {"type": "integer", "minimum": 0}},
	  "required": ["kind", "at"]}`)
	if err != nil {
		panic(err)
	}
	_, err = events.Serialize("events", nil, Event{Kind: "scroll", At: -1})
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		for _, f := range ve.Fields {
			fmt.Println(f.Pointer, f.Keyword)
		}
	}
}
