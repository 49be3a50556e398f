package jsonschema_test

import (
	"context"
	"errors"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"reflect"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/serde/internal/srfake"
	"github.com/kstreams-go/kstreams/serde/jsonschema"
)

const orderSchema = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Order",
  "type": "object",
  "properties": {
    "id": {"type": "string", "minLength": 1},
    "qty": {"type": "integer", "minimum": 1},
    "note": {"type": ["string", "null"]},
    "lines": {"type": "array", "items": {"type": "object",
      "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"}}, "required": ["sku"]}},
    "address": {"$ref": "address.schema.json"}
  },
  "required": ["id", "qty"],
  "additionalProperties": false
}`

const addressSchema = `{"type": "object", "properties": {"zip": {"type": "string", "maxLength": 5}}, "required": ["zip"]}`

type Line struct {
	SKU string `json:"sku"`
}

type Address struct {
	Zip string `json:"zip,omitempty"`
}

type Order struct {
	ID      string   `json:"id"`
	Qty     int      `json:"qty"`
	Note    *string  `json:"note,omitempty"`
	Lines   []Line   `json:"lines,omitempty"`
	Address *Address `json:"address,omitempty"`
}

func newOrders(t *testing.T, reg *srfake.Registry, opts ...jsonschema.Option) *jsonschema.Serde[Order] {
	t.Helper()
	reg.Register("address", srapi.Schema{SchemaType: "JSON", Schema: addressSchema})
	opts = append([]jsonschema.Option{jsonschema.WithReferences(registry.Reference{Name: "address.schema.json", Subject: "address", Version: 1})}, opts...)
	s, err := jsonschema.New[Order](reg.Client(), orderSchema, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoundTripBytes(t *testing.T) {
	reg := srfake.New(t)
	s := newOrders(t, reg)
	note := "a<b & \u2028 ✓"
	o := Order{ID: "o1", Qty: 2, Note: &note, Lines: []Line{{SKU: "ABC-1"}}, Address: &Address{Zip: "12345"}}
	b, err := s.Serialize("orders", nil, o)
	if err != nil {
		t.Fatal(err)
	}
	// id 2: the reference was registered first. No HTML escaping, U+2028 raw, as
	// JSON.stringify and Jackson write them.
	want := "\x00\x00\x00\x00\x02" + `{"id":"o1","qty":2,"note":"a<b & ` + "\u2028" + ` ✓","lines":[{"sku":"ABC-1"}],"address":{"zip":"12345"}}`
	if string(b) != want {
		t.Fatalf("wrote %q\nwant  %q", b, want)
	}
	back, err := s.Deserialize("orders", nil, b)
	if err != nil || !reflect.DeepEqual(back, o) {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	sch, err := srapi.Of(reg.Client()).SchemaByID(context.Background(), 2)
	if err != nil || sch.SchemaType != "JSON" || len(sch.References) != 1 {
		t.Fatalf("registered %+v, %v", sch, err)
	}
	g, _ := jsonschema.New[any](reg.Client(), "")
	v, err := g.Deserialize("orders", nil, b)
	if err != nil || v.(map[string]any)["qty"] != float64(2) {
		t.Fatalf("generic decode %v, %v", v, err)
	}
}

func fields(t *testing.T, err error) map[string]string {
	t.Helper()
	var ve *jsonschema.ValidationError
	var se *serde.Error
	if !errors.As(err, &ve) || !errors.As(err, &se) || !errors.Is(err, serde.ErrInvalidValue) {
		t.Fatalf("err = %v; want a *ValidationError inside a *serde.Error", err)
	}
	out := map[string]string{}
	for _, f := range ve.Fields {
		out[f.Pointer] = f.Keyword
	}
	return out
}

// TestSerializeNamesFailingFields: every failing field is reported by JSON pointer with the
// keyword that failed, nested objects, array items and references included.
func TestSerializeNamesFailingFields(t *testing.T) {
	reg := srfake.New(t)
	s := newOrders(t, reg)
	bad := Order{ID: "", Qty: 0, Lines: []Line{{SKU: "ABC-1"}, {SKU: "nope"}, {}}, Address: &Address{}}
	before := reg.Requests()
	_, err := s.Serialize("orders", nil, bad)
	if reg.Requests() != before {
		t.Errorf("an invalid document made %d registry requests; the serde's own schema decides", reg.Requests()-before)
	}
	got := fields(t, err)
	want := map[string]string{
		"/id":          "minLength",
		"/qty":         "minimum",
		"/lines/1/sku": "pattern",
		"/lines/2/sku": "pattern", // Line{} writes "sku":""
		"/address/zip": "required",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("failing fields %v\nwant %v\n(%v)", got, want, err)
	}
	t.Logf("%v", err)
}

// TestDeserializeValidates reads bytes another writer produced without validation: the
// document is checked against the writer schema the id names.
func TestDeserializeValidates(t *testing.T) {
	reg := srfake.New(t)
	s := newOrders(t, reg)
	if _, err := s.Serialize("orders", nil, Order{ID: "x", Qty: 1}); err != nil {
		t.Fatal(err)
	}
	raw := append([]byte{0, 0, 0, 0, 2}, `{"id":"x","qty":"3","extra":true,"address":{"zip":"1234567"}}`...)
	_, err := s.Deserialize("orders", nil, raw)
	got := fields(t, err)
	want := map[string]string{"/qty": "type", "/extra": "additionalProperties", "/address/zip": "maxLength"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("failing fields %v; want %v (%v)", got, want, err)
	}
	var se *serde.Error
	errors.As(err, &se)
	if !strings.Contains(err.Error(), "schema id 2:") || se.Op != serde.OpDeserialize || se.Topic != "orders" {
		t.Fatalf("error context %+v", se)
	}
	// With validation off the same bytes pass to encoding/json (which then fails on the
	// string quantity).
	off := newOrders(t, reg, jsonschema.WithValidation(false))
	if _, err := off.Deserialize("orders", nil, raw); !errors.Is(err, serde.ErrInvalidValue) {
		t.Fatalf("validation off: %v", err)
	}
}

func TestNullsAndErrors(t *testing.T) {
	reg := srfake.New(t)
	s, err := jsonschema.New[*Order](reg.Client(), `{"type":"object"}`)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s.Serialize("t", nil, nil); b != nil || err != nil {
		t.Fatalf("nil: %q, %v", b, err)
	}
	if v, err := s.Deserialize("t", nil, nil); v != nil || err != nil {
		t.Fatalf("nil bytes: %v, %v", v, err)
	}
	if reg.Requests() != 0 {
		t.Fatalf("%d registry requests for nulls", reg.Requests())
	}
	for data, want := range map[string]error{
		"\x00\x00":               serde.ErrCorrupt,
		"\x07\x00\x00\x00\x01{}": serde.ErrCorrupt,
		"\x00\x00\x00\x00\x09{}": registry.ErrNotFound,
	} {
		if _, err := s.Deserialize("t", nil, []byte(data)); !errors.Is(err, want) {
			t.Errorf("Deserialize(%q) = %v; want %v", data, err, want)
		}
	}
	if _, err := jsonschema.New[any](reg.Client(), `{"type": 12`); !errors.Is(err, jsonschema.ErrInvalidSchema) {
		t.Fatalf("bad schema: %v", err)
	}
	if _, err := jsonschema.New[any](reg.Client(), `{"$ref": "missing.json"}`); !errors.Is(err, jsonschema.ErrInvalidSchema) {
		t.Fatalf("dangling ref: %v", err)
	}
	noSchema, _ := jsonschema.New[any](reg.Client(), "")
	if _, err := noSchema.Serialize("t", nil, 1); !errors.Is(err, jsonschema.ErrInvalidSchema) {
		t.Fatalf("no schema: %v", err)
	}
	ch, _ := jsonschema.New[any](reg.Client(), `{}`)
	if _, err := ch.Serialize("t", nil, make(chan int)); !errors.Is(err, serde.ErrInvalidValue) {
		t.Fatalf("channel: %v", err)
	}
}

func TestStrategiesAndLatest(t *testing.T) {
	reg := srfake.New(t)
	opts, err := jsonschema.OptionsFromProperties(map[string]string{
		"value.subject.name.strategy": "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
		"json.fail.invalid.schema":    "true"}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := newOrders(t, reg, opts...)
	if _, err := s.Serialize("orders", nil, Order{ID: "x", Qty: 1}); err != nil {
		t.Fatal(err)
	}
	if got, err := srapi.Of(reg.Client()).Latest(context.Background(), "orders-Order"); err != nil || got.ID != 2 {
		t.Fatalf("subject orders-Order: %+v, %v", got, err)
	}
	untitled, _ := jsonschema.New[any](reg.Client(), `{}`, opts...)
	if _, err := untitled.Serialize("orders", nil, 1); !errors.Is(err, jsonschema.ErrInvalidSchema) {
		t.Fatalf("no title: %v", err)
	}
	// use.latest.version: written with, and checked against, the latest schema.
	reg.Register("prices-value", srapi.Schema{SchemaType: "JSON", Schema: `{"type":"number","maximum":10}`})
	latest, _ := jsonschema.New[float64](reg.Client(), "", jsonschema.WithUseLatestVersion(true))
	b, err := latest.Serialize("prices", nil, 9.5)
	if err != nil || string(b) != "\x00\x00\x00\x00\x03"+"9.5" {
		t.Fatalf("latest: %q, %v", b, err)
	}
	if _, err := latest.Serialize("prices", nil, 11); fields(t, err)[""] != "maximum" {
		t.Fatalf("over maximum: %v", err)
	}
}

// TestConcurrentUse shares one serde between goroutines (run under -race).
func TestConcurrentUse(t *testing.T) {
	reg := srfake.New(t)
	s := newOrders(t, reg)
	g, _ := jsonschema.New[any](reg.Client(), "")
	done := make(chan error, 8)
	for w := range 8 {
		go func() {
			for i := range 20 {
				o := Order{ID: "o", Qty: w*100 + i + 1}
				b, err := s.Serialize("c", nil, o)
				if err == nil {
					var back Order
					if back, err = s.Deserialize("c", nil, b); err == nil && back.Qty != o.Qty {
						err = errors.New("wrong quantity back")
					}
				}
				if err == nil {
					_, err = g.Deserialize("c", nil, b)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
