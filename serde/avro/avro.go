// Package avro is an Avro serde in the Confluent wire format, with a schema registry.
//
// # Wire format
//
// A serialized value is the magic byte 0, the schema id as a 4-byte big-endian integer, then
// the Avro binary encoding of the value with that schema:
//
//	0x00 | id (4 bytes, big-endian) | avro binary body
//
// This is what Confluent's KafkaAvroSerializer writes and KafkaAvroDeserializer reads
// (io.confluent.kafka.serializers), so records pass between Java, the Confluent clients of
// other languages and this package in both directions. Encoding and decoding use
// github.com/linkedin/goavro/v2; schema ids come from a Schema Registry through package
// registry (package avrotest has an in-process registry for tests).
//
// # Generic and typed values
//
// NewGeneric returns a Serde[any] over goavro's native form (Java: GenericRecord through
// KafkaAvroSerde / GenericAvroSerde): a record is a map[string]any of field name to value;
// null is nil; boolean bool; int int32; long int64; float float32; double float64; string
// string; bytes and fixed []byte; enum string (the symbol); array []any; map
// map[string]any; a union value other than null is map[string]any{branch: value} where
// branch is the branch's type name ("string", "long", the full name of a named type, or
// goavro's "long.timestamp-millis", "int.date", "bytes.decimal" for logical types). Logical
// types: date and timestamp-millis/-micros are time.Time (UTC), time-millis/-micros
// time.Duration, decimal *big.Rat, uuid string. When encoding, goavro also accepts plain
// numbers for logical types and fills missing record fields that have a default.
//
// New[T] maps a Go type onto the schema (Java: SpecificAvroSerde / ReflectionAvroSerde):
//
//   - record: a struct; each Avro field takes the exported Go field tagged `avro:"name"`,
//     else the field whose name equals the Avro name, else one equal ignoring case.
//     `avro:"-"` skips a Go field. When encoding, an Avro field without a Go field is
//     written with its schema default (an error if it has none); Go fields the schema
//     does not name are ignored. When decoding, data written with another schema is
//     first resolved to the serde's own schema by Avro's schema-resolution rules, as
//     Java's specific reader does: reader fields the writer lacks take their schema
//     default, writer fields the reader lacks are dropped, int/long/float promote, an
//     unknown enum symbol takes the enum's default; resolution failures are
//     serde.ErrInvalidValue. Struct fields no schema field names keep their zero value. A
//     map[string]V also works.
//   - union ["null", X]: a pointer (or a nil slice/map/interface) for null, else X's form.
//     Other unions: a field of the branch's form (the first branch that accepts the Go
//     value is written), or an interface field, which decodes to the branch value.
//   - int, long: any Go integer kind (range-checked); float, double: float32/float64.
//   - string: string; enum: a string-kinded type holding a symbol; uuid: string or [16]byte.
//   - bytes: []byte; fixed: [N]byte or []byte of length N; decimal: *big.Rat or big.Rat.
//   - date, timestamp-millis, timestamp-micros, local-timestamp-*: time.Time or an integer
//     (days or epoch ms/µs); time-millis, time-micros: time.Duration or an integer.
//   - array: a slice or array; map: a map with string keys.
//
// T = any gives the generic form above (a struct or pointer given to it is mapped as for
// New), and T = map[string]any passes records through.
//
// # Nulls
//
// As Java's serializer does, a nil value (nil interface, pointer, map or slice) serializes
// to nil bytes (a tombstone) without touching the registry, and nil bytes deserialize to
// the zero value of T (nil for nillable types).
//
// # Registry use and configuration
//
// The serializer finds the schema id for the subject its registry.SubjectNameStrategy names (by
// default registry.TopicNameStrategy: "<topic>-value", or "<topic>-key" with AsKey): it registers the
// schema when auto-registration is on (the default), looks it up otherwise, or with
// UseLatestVersion writes with the subject's latest registered schema. The deserializer
// fetches the writer schema by the id in the data. Options correspond to the Java
// serializer configuration: auto.register.schemas, use.latest.version,
// key.subject.name.strategy / value.subject.name.strategy, normalize.schemas; see
// OptionsFromProperties.
package avro

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/linkedin/goavro/v2"

	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/serde/avro/internal/schema"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"github.com/kstreams-go/kstreams/serde/internal/srprops"
	"github.com/kstreams-go/kstreams/serde/internal/wire"
)

type options struct {
	isKey        bool
	autoRegister bool
	useLatest    bool
	latestStrict bool
	normalize    bool
	strategy     registry.SubjectNameStrategy
	ctx          func() context.Context
}

// Option configures a serde made by New or NewGeneric.
type Option func(*options)

// AsKey makes the serde a key serde: registry.TopicNameStrategy then names "<topic>-key". Java: the
// isKey argument of Serializer.configure(configs, isKey).
func AsKey() Option { return func(o *options) { o.isKey = true } }

// WithAutoRegister turns registering the serializer's schema on (the default) or off; when
// off, the schema must already be registered under the subject, else serializing fails
// with registry.ErrNotFound. Java:
// auto.register.schemas (default true).
func WithAutoRegister(on bool) Option { return func(o *options) { o.autoRegister = on } }

// WithUseLatestVersion makes the serializer write with the latest schema registered under
// the subject instead of its own (which may then be omitted); values are mapped onto that
// schema. It implies no auto-registration. Java: use.latest.version (default false), with
// auto.register.schemas=false.
func WithUseLatestVersion(on bool) Option { return func(o *options) { o.useLatest = on } }

// WithLatestCompatibilityStrict turns on (the default) or off the check that, under
// WithUseLatestVersion with a schema of the serde's own, the latest registered schema can
// read data written with the serde's schema (Avro schema resolution); when it cannot,
// serializing fails with ErrInvalidSchema. Java: latest.compatibility.strict (default
// true).
func WithLatestCompatibilityStrict(on bool) Option { return func(o *options) { o.latestStrict = on } }

// WithSubjectNameStrategy sets the subject name strategy: registry.TopicNameStrategy (the
// default), registry.RecordNameStrategy or registry.TopicRecordNameStrategy (the record name
// is the full name of the schema's top-level named type), or a function of the user's. Java:
// key.subject.name.strategy / value.subject.name.strategy.
func WithSubjectNameStrategy(s registry.SubjectNameStrategy) Option {
	return func(o *options) { o.strategy = s }
}

// WithNormalize asks the registry to normalize schemas on registration (?normalize=true).
// Java: normalize.schemas (default false).
func WithNormalize(on bool) Option { return func(o *options) { o.normalize = on } }

// WithContext gives the context registry requests run under (default
// context.Background(); each request is also bounded by the registry client's timeout).
// The serde API has no context parameter, so this is where cancellation enters.
func WithContext(f func() context.Context) Option { return func(o *options) { o.ctx = f } }

// OptionsFromProperties maps the Java serializer properties to options: auto.register.schemas,
// use.latest.version, latest.compatibility.strict, normalize.schemas (true/false), and key.subject.name.strategy (when
// isKey) or value.subject.name.strategy, whose values are the Java class names
// io.confluent.kafka.serializers.subject.TopicNameStrategy, RecordNameStrategy or
// TopicRecordNameStrategy (or just those simple names), mapped to registry's strategies. isKey also adds AsKey. Other
// properties are ignored (the registry client takes its own with
// registry.ConfigFromProperties). It returns an error for an unknown strategy or a value
// that is not true/false.
func OptionsFromProperties(props map[string]string, isKey bool) ([]Option, error) {
	var opts []Option
	if isKey {
		opts = append(opts, AsKey())
	}
	for _, p := range []struct {
		name string
		opt  func(bool) Option
	}{{"auto.register.schemas", WithAutoRegister}, {"use.latest.version", WithUseLatestVersion},
		{"latest.compatibility.strict", WithLatestCompatibilityStrict}, {"normalize.schemas", WithNormalize}} {
		v, ok, err := srprops.Bool(props, p.name)
		if err != nil {
			return nil, fmt.Errorf("avro serde: %w", err)
		}
		if ok {
			opts = append(opts, p.opt(v))
		}
	}
	strategy, ok, err := srprops.Strategy(props, isKey)
	if err != nil {
		return nil, fmt.Errorf("avro serde: %w", err)
	}
	if ok {
		opts = append(opts, WithSubjectNameStrategy(strategy))
	}
	return opts, nil
}

// compiled is a parsed schema and its goavro codecs.
type compiled struct {
	text    string
	typ     *schema.Type
	codec   *goavro.Codec // decodes (and encodes when the schema has no decimal)
	enc     *goavro.Codec // encodes: the schema without decimal logical types
	decimal bool          // the schema has decimals: run encodeDecimals before enc
}

func compile(text string) (*compiled, error) {
	typ, err := schema.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	codec, err := goavro.NewCodec(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	c := &compiled{text: text, typ: typ, codec: codec, enc: codec}
	if hasDecimal(typ, map[*schema.Type]bool{}) {
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
		}
		stripDecimals(v)
		stripped, _ := json.Marshal(v)
		if c.enc, err = goavro.NewCodec(string(stripped)); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
		}
		c.decimal = true
	}
	return c, nil
}

// Serde is the Avro serde for values of type T; create it with New or NewGeneric. It
// implements serde.Serde[T] and is safe for concurrent use. Java counterpart:
// io.confluent.kafka.streams.serdes.avro.GenericAvroSerde / SpecificAvroSerde wrapping
// KafkaAvroSerializer and KafkaAvroDeserializer.
type Serde[T any] struct {
	reg    srapi.Client
	own    *compiled // the serializer's schema; nil with use.latest.version and no schema
	opts   options
	name   string
	native bool // T is any or map[string]any: no mapping

	mu     sync.Mutex
	codecs map[string]*compiled // schema text -> compiled
}

var _ serde.Serde[any] = (*Serde[any])(nil)

// New returns an Avro serde for T with the given registry client and writer schema (the Avro
// schema JSON). schemaText may be "" only together with WithUseLatestVersion(true). The
// package documentation says how T maps onto the schema. It returns an error wrapping
// ErrInvalidSchema for a schema that does not parse or when there is none. Java counterpart:
// new SpecificAvroSerde(client) / ReflectionAvroSerde, then configure(props, isKey).
func New[T any](reg *registry.Client, schemaText string, opts ...Option) (*Serde[T], error) {
	o := options{autoRegister: true, latestStrict: true, strategy: registry.TopicNameStrategy, ctx: context.Background}
	for _, f := range opts {
		f(&o)
	}
	if o.useLatest {
		o.autoRegister = false
	}
	if reg == nil {
		return nil, fmt.Errorf("avro serde: no schema registry client")
	}
	tt := reflect.TypeFor[T]()
	s := &Serde[T]{reg: srapi.Of(reg), opts: o, codecs: map[string]*compiled{},
		native: tt.Kind() == reflect.Interface || tt == reflect.TypeFor[map[string]any]()}
	s.name = "Avro<" + tt.String() + ">"
	if tt.Kind() == reflect.Interface {
		s.name = "Avro"
	}
	if schemaText != "" {
		c, err := compile(schemaText)
		if err != nil {
			return nil, fmt.Errorf("avro serde %s: %w", s.name, err)
		}
		s.own = c
		s.codecs[schemaText] = c
	} else if !o.useLatest {
		return nil, fmt.Errorf("avro serde %s: %w: no schema given (give one or use WithUseLatestVersion)", s.name, ErrInvalidSchema)
	}
	return s, nil
}

// NewGeneric returns an Avro serde over goavro's native values (New[any]); see the package
// documentation for the forms. Java counterpart: GenericAvroSerde.
func NewGeneric(reg *registry.Client, schemaText string, opts ...Option) (*Serde[any], error) {
	return New[any](reg, schemaText, opts...)
}

// String returns the serde's name, "Avro" for the generic serde or "Avro<T>".
func (s *Serde[T]) String() string { return s.name }

func (s *Serde[T]) compiled(text string) (*compiled, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.codecs[text]; ok {
		return c, nil
	}
	c, err := compile(text)
	if err != nil {
		return nil, err
	}
	s.codecs[text] = c
	return c, nil
}

// subject returns the subject the serializer uses for topic; a strategy's error is wrapped
// in ErrInvalidSchema.
func (s *Serde[T]) subject(topic string) (string, error) {
	rn := ""
	if s.own != nil && s.own.typ.Named() {
		rn = s.own.typ.FullName()
	}
	subject, err := s.opts.strategy(topic, s.opts.isKey, rn)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidSchema, err)
	}
	return subject, nil
}

// writer returns the schema id and compiled schema to write with.
func (s *Serde[T]) writer(topic string, e *wire.Failure) (int, *compiled, error) {
	subject, err := s.subject(topic)
	if err != nil {
		return 0, nil, err
	}
	e.Subject = subject
	ctx := s.opts.ctx()
	switch {
	case s.opts.useLatest:
		latest, err := s.reg.Latest(ctx, subject)
		if err != nil {
			return 0, nil, err
		}
		e.SchemaID = latest.ID
		c, err := s.compiled(latest.Schema)
		if err != nil {
			return 0, nil, err
		}
		if s.own != nil && s.opts.latestStrict && s.own.text != c.text {
			if msgs := schema.CanRead(c.typ, s.own.typ); len(msgs) > 0 {
				return 0, nil, fmt.Errorf("%w: the latest schema (id %d, version %d) cannot read data of the serde's schema: %s",
					ErrInvalidSchema, latest.ID, latest.Version, strings.Join(msgs, "; "))
			}
		}
		return latest.ID, c, nil
	case s.opts.autoRegister:
		id, err := s.reg.Register(ctx, subject, srapi.Schema{Schema: s.own.text}, s.opts.normalize)
		e.SchemaID = id
		return id, s.own, err
	default:
		found, err := s.reg.LookUp(ctx, subject, srapi.Schema{Schema: s.own.text})
		e.SchemaID = found.ID
		return found.ID, s.own, err
	}
}

// Serialize encodes data in the Confluent wire format for topic. A nil value (nil
// interface, pointer, map or slice) returns nil bytes without a registry call. headers are
// not used. Errors are a *serde.Error whose message names the subject and schema id, wrapping
// a *registry.Error (registry.ErrRejected when registration is refused, registry.ErrNotFound
// without auto-registration, registry.ErrUnavailable), serde.ErrInvalidValue for a value that
// does not fit the schema, or ErrInvalidSchema. Java: KafkaAvroSerializer.serialize(topic,
// headers, data), whose failures are SerializationExceptions.
func (s *Serde[T]) Serialize(topic string, _ *serde.Headers, data T) ([]byte, error) {
	v := reflect.ValueOf(&data).Elem()
	if isNull(v) {
		return nil, nil
	}
	e := &wire.Failure{Serde: s.name, Op: serde.OpSerialize, Topic: topic, Len: -1}
	id, c, err := s.writer(topic, e)
	if err != nil {
		return nil, e.Wrap(err)
	}
	var native any = data
	if !s.native || v.Kind() == reflect.Interface && (v.Elem().Kind() == reflect.Struct || v.Elem().Kind() == reflect.Pointer) {
		// Typed values, and structs handed to the generic serde, are mapped onto the schema.
		if native, err = toNative(c.typ, v, ""); err != nil {
			return nil, e.Wrap(err)
		}
	}
	if c.decimal {
		if native, err = encodeDecimals(c.typ, native, ""); err != nil {
			return nil, e.Wrap(err)
		}
	}
	out, err := c.enc.BinaryFromNative(wire.AppendHeader(make([]byte, 0, 64), id), native)
	if err != nil {
		return nil, e.Wrap(fmt.Errorf("%w: %v", errMismatch, err))
	}
	return out, nil
}

// Deserialize decodes Confluent wire-format data: it reads the schema id, fetches the
// writer schema from the registry (cached) and decodes the body with it; a typed serde
// then maps the record onto T by field name. Nil data returns the zero value of T (nil
// for the generic serde); headers are not used; bytes after the Avro body are ignored, as
// Java's deserializer ignores them. Errors are a *serde.Error whose message names the schema
// id, wrapping serde.ErrCorrupt (shorter than the 5-byte header, a first byte other than the
// magic byte 0, a body that does not decode with the writer schema), a *registry.Error
// (registry.ErrNotFound for an unknown id, registry.ErrUnavailable), serde.ErrInvalidValue
// when the record does not fit T, or ErrInvalidSchema. Java:
// KafkaAvroDeserializer.deserialize(topic, headers, data).
func (s *Serde[T]) Deserialize(topic string, _ *serde.Headers, data []byte) (T, error) {
	var zero T
	if data == nil {
		return zero, nil
	}
	e := &wire.Failure{Serde: s.name, Op: serde.OpDeserialize, Topic: topic, Len: len(data)}
	id, body, err := wire.ParseHeader(data)
	if err != nil {
		return zero, e.Wrap(fmt.Errorf("%w: %w", serde.ErrCorrupt, err))
	}
	e.SchemaID = id
	found, err := s.reg.SchemaByID(s.opts.ctx(), id)
	if err != nil {
		return zero, e.Wrap(err)
	}
	c, err := s.compiled(found.Schema)
	if err != nil {
		return zero, e.Wrap(err)
	}
	native, _, err := c.codec.NativeFromBinary(body)
	if err != nil {
		return zero, e.Wrap(fmt.Errorf("%w: %v", errDecode, err))
	}
	if s.native {
		if native == nil {
			return zero, nil
		}
		v, ok := native.(T)
		if !ok {
			return zero, e.Wrap(fmt.Errorf("%w: decoded %T, want %T", errMismatch, native, zero))
		}
		return v, nil
	}
	readerType := c.typ
	if s.own != nil && s.own.text != found.Schema {
		// Resolve the writer's data to the serde's own (reader) schema, as Java's
		// SpecificDatumReader does with the specific class's schema.
		readerType = s.own.typ
		if native, err = resolve(readerType, c.typ, native, ""); err != nil {
			return zero, e.Wrap(err)
		}
	}
	var out T
	if err := fromNative(readerType, native, reflect.ValueOf(&out).Elem(), ""); err != nil {
		return zero, e.Wrap(err)
	}
	return out, nil
}
