// Package jsonschema is a JSON serde checked against a JSON Schema, in Confluent's
// schema-registry wire format.
//
// # Wire format
//
// A serialized value is the magic byte 0, the schema id as a 4-byte big-endian integer,
// then the document as UTF-8 JSON text:
//
//	0x00 | id (4 bytes, big-endian) | json text
//
// This is what Confluent's KafkaJsonSchemaSerializer writes and KafkaJsonSchemaDeserializer
// reads (io.confluent.kafka.serializers.json), so records pass between Java, Confluent's
// clients of other languages and this package in both directions.
//
// # Values and JSON text
//
// Values are encoded with encoding/json (struct tags apply; struct fields in declaration
// order, map keys sorted), without HTML escaping and with U+2028/U+2029 written as
// themselves, as Java's Jackson and JavaScript's JSON.stringify write them; and decoded
// with encoding/json into T (T = any gives map[string]any, []any, float64, string, bool and
// nil).
//
// # Validation
//
// Unlike Java's serializer (json.fail.invalid.schema, default false), this serde validates
// by default, on both sides: the serializer checks the document against the schema it
// writes with, the deserializer against the writer schema named by the id in the data.
// A failure is a *ValidationError listing each failing field by JSON pointer. WithValidation
// (false) turns both checks off. Validation uses github.com/santhosh-tekuri/jsonschema/v6;
// a schema without "$schema" is read as draft 7, as Confluent's serde reads it. "$ref"s
// resolve within the schema and to its registry references (WithReferences for the
// serializer's own schema), never to files or the network.
//
// # Nulls
//
// As Java's serializer does, a nil value (nil interface, pointer, map or slice) serializes
// to nil bytes (a tombstone) without touching the registry, and nil or empty bytes
// deserialize to the zero value of T.
//
// # Registry use and configuration
//
// The serializer finds the schema id for the subject its registry.SubjectNameStrategy names (by
// default registry.TopicNameStrategy: "<topic>-value", or "<topic>-key" with AsKey; the record name
// of RecordNameStrategy is the schema's "title"): it registers the schema (schemaType
// "JSON") when auto-registration is on (the default), looks it up otherwise, or with
// UseLatestVersion writes with the subject's latest registered schema. Options correspond
// to Java's KafkaJsonSchemaSerializer configuration: auto.register.schemas,
// use.latest.version, normalize.schemas, key.subject.name.strategy /
// value.subject.name.strategy, json.fail.invalid.schema; see OptionsFromProperties.
// Registry access goes through package registry, shared with the Avro serde.
//
// Java counterpart: io.confluent.kafka.streams.serdes.json.KafkaJsonSchemaSerde.
package jsonschema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"github.com/kstreams-go/kstreams/serde/internal/srprops"
	"github.com/kstreams-go/kstreams/serde/internal/wire"
	"github.com/kstreams-go/kstreams/serde/jsonschema/internal/jsschema"
)

// schemaType is the registry's schemaType for JSON Schemas.
const schemaType = "JSON"

type options struct {
	isKey        bool
	autoRegister bool
	useLatest    bool
	normalize    bool
	validate     bool
	strategy     registry.SubjectNameStrategy
	refs         []srapi.Reference
	ctx          func() context.Context
}

// Option configures a serde made by New.
type Option func(*options)

// AsKey makes the serde a key serde: registry.TopicNameStrategy then names "<topic>-key". Java: the
// isKey argument of Serializer.configure(configs, isKey).
func AsKey() Option { return func(o *options) { o.isKey = true } }

// WithAutoRegister turns registering the serializer's schema on (the default) or off; when
// off, the schema must already be registered under the subject, else serializing fails
// with registry.ErrNotFound. Java:
// auto.register.schemas (default true).
func WithAutoRegister(on bool) Option { return func(o *options) { o.autoRegister = on } }

// WithUseLatestVersion makes the serializer write with (and validate against) the latest
// schema registered under the subject instead of its own, which may then be omitted. It
// implies no auto-registration. Java: use.latest.version (default false), with
// auto.register.schemas=false.
func WithUseLatestVersion(on bool) Option { return func(o *options) { o.useLatest = on } }

// WithSubjectNameStrategy sets the subject name strategy: registry.TopicNameStrategy (the
// default), registry.RecordNameStrategy or registry.TopicRecordNameStrategy (the record name
// is the schema's "title"), or a function of the user's. Java:
// key.subject.name.strategy / value.subject.name.strategy.
func WithSubjectNameStrategy(s registry.SubjectNameStrategy) Option {
	return func(o *options) { o.strategy = s }
}

// WithNormalize asks the registry to normalize schemas on registration (?normalize=true).
// Java: normalize.schemas (default false).
func WithNormalize(on bool) Option { return func(o *options) { o.normalize = on } }

// WithValidation turns validating documents against their schema on (the default) or off,
// on both the serializer and the deserializer side. Java: json.fail.invalid.schema
// (default false there).
func WithValidation(on bool) Option { return func(o *options) { o.validate = on } }

// WithReferences gives the registered schemas the serializer's schema refers to with
// "$ref" (Name is the reference as the $ref writes it, e.g. "address.schema.json" or an
// absolute URL); they are fetched to compile the schema and registered with it. Java: the
// references of a JsonSchema.
func WithReferences(refs ...registry.Reference) Option {
	return func(o *options) {
		for _, r := range refs {
			o.refs = append(o.refs, srapi.Reference(r))
		}
	}
}

// WithContext gives the context registry requests run under (default
// context.Background(); each request is also bounded by the registry client's timeout).
func WithContext(f func() context.Context) Option { return func(o *options) { o.ctx = f } }

// OptionsFromProperties maps the Java serializer properties to options:
// auto.register.schemas, use.latest.version, normalize.schemas, json.fail.invalid.schema
// (true/false; note that this serde validates unless the property says false), and
// key.subject.name.strategy (when isKey) or value.subject.name.strategy, whose values are
// the Java class names io.confluent.kafka.serializers.subject.TopicNameStrategy,
// RecordNameStrategy or TopicRecordNameStrategy (or just those simple names). isKey also
// adds AsKey. Other properties are ignored. It returns an error for an unknown strategy or a
// value that is not true/false.
func OptionsFromProperties(props map[string]string, isKey bool) ([]Option, error) {
	var opts []Option
	if isKey {
		opts = append(opts, AsKey())
	}
	for _, p := range []struct {
		name string
		opt  func(bool) Option
	}{{"auto.register.schemas", WithAutoRegister}, {"use.latest.version", WithUseLatestVersion},
		{"normalize.schemas", WithNormalize}, {"json.fail.invalid.schema", WithValidation}} {
		v, ok, err := srprops.Bool(props, p.name)
		if err != nil {
			return nil, fmt.Errorf("json schema serde: %w", err)
		}
		if ok {
			opts = append(opts, p.opt(v))
		}
	}
	strategy, ok, err := srprops.Strategy(props, isKey)
	if err != nil {
		return nil, fmt.Errorf("json schema serde: %w", err)
	}
	if ok {
		opts = append(opts, WithSubjectNameStrategy(strategy))
	}
	return opts, nil
}

// Serde is the JSON Schema serde for values of type T; create it with New. It implements
// serde.Serde[T] and is safe for concurrent use. Java counterpart:
// io.confluent.kafka.streams.serdes.json.KafkaJsonSchemaSerde wrapping
// KafkaJsonSchemaSerializer and KafkaJsonSchemaDeserializer.
type Serde[T any] struct {
	reg  srapi.Client
	opts options
	name string
	text string             // the serializer's schema, "" under use.latest.version without one
	own  *jsschema.Compiled // compiled text

	mu   sync.Mutex
	byID map[int]*jsschema.Compiled
}

var _ serde.Serde[any] = (*Serde[any])(nil)

// New returns a JSON Schema serde for T with the given registry and writer schema (JSON
// Schema text). schemaText may be "" only together with WithUseLatestVersion(true) or for a
// serde that only deserializes. It returns an error wrapping ErrInvalidSchema for a schema
// that does not compile, or a *registry.Error when a reference cannot be fetched.
func New[T any](reg *registry.Client, schemaText string, opts ...Option) (*Serde[T], error) {
	o := options{autoRegister: true, validate: true, strategy: registry.TopicNameStrategy, ctx: context.Background}
	for _, f := range opts {
		f(&o)
	}
	if o.useLatest {
		o.autoRegister = false
	}
	if reg == nil {
		return nil, fmt.Errorf("json schema serde: no schema registry client")
	}
	tt := reflect.TypeFor[T]()
	s := &Serde[T]{reg: srapi.Of(reg), opts: o, text: schemaText, name: "JSONSchema<" + tt.String() + ">", byID: map[int]*jsschema.Compiled{}}
	if tt.Kind() == reflect.Interface {
		s.name = "JSONSchema"
	}
	if schemaText != "" {
		deps := map[string]string{}
		if err := fetchRefs(o.ctx(), s.reg, o.refs, deps); err != nil {
			return nil, fmt.Errorf("json schema serde %s: schema references: %w", s.name, err)
		}
		c, err := jsschema.Compile(schemaText, deps)
		if err != nil {
			return nil, fmt.Errorf("json schema serde %s: %w: %v", s.name, ErrInvalidSchema, err)
		}
		s.own = c
	}
	return s, nil
}

// String returns the serde's name, "JSONSchema" for T = any or "JSONSchema<T>".
func (s *Serde[T]) String() string { return s.name }

func fetchRefs(ctx context.Context, reg srapi.Client, refs []srapi.Reference, into map[string]string) error {
	for _, r := range refs {
		if _, ok := into[r.Name]; ok {
			continue
		}
		var got srapi.Schema
		var err error
		if r.Version <= 0 {
			got, err = reg.Latest(ctx, r.Subject)
		} else {
			got, err = reg.Version(ctx, r.Subject, r.Version)
		}
		if err != nil {
			return err
		}
		into[r.Name] = got.Schema
		if err := fetchRefs(ctx, reg, got.References, into); err != nil {
			return err
		}
	}
	return nil
}

// compiledByID returns the compiled schema with the given id (fetched and compiled once).
func (s *Serde[T]) compiledByID(ctx context.Context, id int, known *srapi.Schema) (*jsschema.Compiled, error) {
	s.mu.Lock()
	c, ok := s.byID[id]
	s.mu.Unlock()
	if ok {
		return c, nil
	}
	var sch srapi.Schema
	if known != nil {
		sch = *known
	} else {
		var err error
		if sch, err = s.reg.SchemaByID(ctx, id); err != nil {
			return nil, err
		}
	}
	if sch.SchemaType != "" && sch.SchemaType != schemaType {
		return nil, fmt.Errorf("%w: schema id %d is of type %s", ErrInvalidSchema, id, sch.SchemaType)
	}
	deps := map[string]string{}
	if err := fetchRefs(ctx, s.reg, sch.References, deps); err != nil {
		return nil, err
	}
	c, err := jsschema.Compile(sch.Schema, deps)
	if err != nil {
		return nil, fmt.Errorf("%w: schema id %d: %v", ErrInvalidSchema, id, err)
	}
	s.mu.Lock()
	s.byID[id] = c
	s.mu.Unlock()
	return c, nil
}

// writer returns the schema id and compiled schema to write with.
func (s *Serde[T]) writer(topic string, e *wire.Failure) (int, *jsschema.Compiled, error) {
	title := ""
	if s.own != nil {
		title = s.own.Title
	}
	subject, err := s.opts.strategy(topic, s.opts.isKey, title)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %w", ErrInvalidSchema, err)
	}
	e.Subject = subject
	ctx := s.opts.ctx()
	if s.opts.useLatest {
		latest, err := s.reg.Latest(ctx, subject)
		if err != nil {
			return 0, nil, err
		}
		e.SchemaID = latest.ID
		c, err := s.compiledByID(ctx, latest.ID, &latest)
		return latest.ID, c, err
	}
	if s.own == nil {
		return 0, nil, fmt.Errorf("%w: no schema given (give a schema or use WithUseLatestVersion)", ErrInvalidSchema)
	}
	sch := srapi.Schema{Schema: s.text, SchemaType: schemaType, References: s.opts.refs}
	var id int
	if s.opts.autoRegister {
		id, err = s.reg.Register(ctx, subject, sch, s.opts.normalize)
	} else {
		var got srapi.Schema
		got, err = s.reg.LookUp(ctx, subject, sch)
		id = got.ID
	}
	e.SchemaID = id
	return id, s.own, err
}

// validate checks the JSON text doc against c.
func validate(c *jsschema.Compiled, id int, doc []byte) error {
	inst, err := jsschema.Instance(doc)
	if err != nil {
		return fmt.Errorf("%w: %v", errDecode, err)
	}
	if err := c.Schema.Validate(inst); err != nil {
		ve := &ValidationError{schemaID: id}
		for _, f := range jsschema.Failures(err) {
			ve.Fields = append(ve.Fields, FieldError{Pointer: f.Pointer, Keyword: f.Keyword, Message: f.Message})
		}
		return ve
	}
	return nil
}

// encode writes v as JSON the way Jackson and JSON.stringify do: no HTML escaping, and
// U+2028/U+2029 unescaped.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
	if !bytes.Contains(b, []byte(`\u202`)) {
		return b, nil
	}
	// encoding/json escapes U+2028 and U+2029 always; undo exactly those escapes (a
	// backslash preceded by an odd number of backslashes is itself escaped).
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+1 < len(b) {
			if b[i+1] == 'u' && i+5 < len(b) && string(b[i+2:i+5]) == "202" && (b[i+5] == '8' || b[i+5] == '9') {
				if b[i+5] == '8' {
					out = append(out, "\u2028"...)
				} else {
					out = append(out, "\u2029"...)
				}
				i += 5
				continue
			}
			out = append(out, b[i], b[i+1])
			i++
			continue
		}
		out = append(out, b[i])
	}
	return out, nil
}

func isNull(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice:
		return v.IsNil()
	}
	return false
}

// Serialize encodes data as JSON in the Confluent wire format for topic, after validating
// it against the schema it is written with (unless validation is off). A nil value (nil
// interface, pointer, map or slice) returns nil bytes without a registry call. headers
// are not used. Errors are a *serde.Error whose message names the subject and schema id,
// wrapping a *ValidationError or another serde.ErrInvalidValue (a value encoding/json cannot
// encode), a *registry.Error (registry.ErrRejected when registration is refused,
// registry.ErrNotFound without auto-registration, registry.ErrUnavailable) or
// ErrInvalidSchema. Java: KafkaJsonSchemaSerializer.serialize(topic, headers, record).
func (s *Serde[T]) Serialize(topic string, _ *serde.Headers, data T) ([]byte, error) {
	if isNull(reflect.ValueOf(&data).Elem()) {
		return nil, nil
	}
	e := &wire.Failure{Serde: s.name, Op: serde.OpSerialize, Topic: topic, Len: -1}
	doc, err := encode(data)
	if err != nil {
		return nil, e.Wrap(fmt.Errorf("%w: %v", errEncode, err))
	}
	// With its own schema the serializer validates before asking the registry, so a bad
	// document fails the same way whether or not the registry answers.
	early := s.opts.validate && !s.opts.useLatest && s.own != nil
	if early {
		if err := validate(s.own, 0, doc); err != nil {
			return nil, e.Wrap(err)
		}
	}
	id, c, err := s.writer(topic, e)
	if err != nil {
		return nil, e.Wrap(err)
	}
	if s.opts.validate && !early {
		if err := validate(c, id, doc); err != nil {
			return nil, e.Wrap(err)
		}
	}
	out := wire.AppendHeader(make([]byte, 0, wire.HeaderSize+len(doc)), id)
	return append(out, doc...), nil
}

// Deserialize decodes Confluent wire-format data: it reads the schema id, fetches the
// writer schema (cached per id), validates the document against it (unless validation is
// off) and decodes it into T with encoding/json. Nil or empty data returns the zero value
// of T; headers are not used. Errors are a *serde.Error whose message names the schema id,
// wrapping serde.ErrCorrupt (shorter than the 5-byte header, a first byte other than the
// magic byte 0), a *registry.Error (registry.ErrNotFound for an unknown id,
// registry.ErrUnavailable), a *ValidationError or another serde.ErrInvalidValue (a body that
// is not JSON or does not decode into T), or ErrInvalidSchema. Java:
// KafkaJsonSchemaDeserializer.deserialize(topic, headers, bytes).
func (s *Serde[T]) Deserialize(topic string, _ *serde.Headers, data []byte) (T, error) {
	var zero T
	if len(data) == 0 {
		return zero, nil
	}
	e := &wire.Failure{Serde: s.name, Op: serde.OpDeserialize, Topic: topic, Len: len(data)}
	id, doc, err := wire.ParseHeader(data)
	if err != nil {
		return zero, e.Wrap(fmt.Errorf("%w: %w", serde.ErrCorrupt, err))
	}
	e.SchemaID = id
	if s.opts.validate {
		c, err := s.compiledByID(s.opts.ctx(), id, nil)
		if err != nil {
			return zero, e.Wrap(err)
		}
		if err := validate(c, id, doc); err != nil {
			return zero, e.Wrap(err)
		}
	} else if _, err := s.reg.SchemaByID(s.opts.ctx(), id); err != nil {
		return zero, e.Wrap(err)
	}
	var out T
	if err := json.Unmarshal(doc, &out); err != nil {
		return zero, e.Wrap(fmt.Errorf("%w: %v", errDecode, err))
	}
	return out, nil
}
