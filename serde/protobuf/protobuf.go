// Package protobuf is a Protobuf serde in Confluent's schema-registry wire format.
//
// # Wire format
//
// A serialized value is the magic byte 0, the schema id as a 4-byte big-endian integer,
// the message-index array naming which message of the schema file the body is, then the
// protobuf binary encoding of the message:
//
//	0x00 | id (4 bytes, big-endian) | message indexes | protobuf body
//
// The message indexes are the message's position in the file: its index among the
// file's top-level messages, then among each enclosing message's nested messages. They
// are written as a zig-zag varint count followed by the zig-zag varint indexes, except
// that [0] (the first top-level message, the common case) is the single byte 0. So the
// second top-level message is 02 02, and the first message nested in the third top-level
// message is 04 04 00. This is what Confluent's KafkaProtobufSerializer writes and
// KafkaProtobufDeserializer reads (io.confluent.kafka.serializers.protobuf), so records
// pass between Java, Confluent's clients of other languages and this package in both
// directions. Fields are written in field-number order, as protobuf-java writes them,
// with map entries sorted by key.
//
// # Typed and dynamic serdes
//
// New[T] serializes a generated Go message type T (protoc-gen-go). The schema it
// registers is T's .proto file, written back as .proto text from T's descriptor; each
// import other than protoc's standard google/protobuf/*.proto is registered as a schema
// reference under a subject named by its import path (Java's
// DefaultReferenceSubjectNameStrategy; standard imports are skipped, as Java does with
// skip.known.types=true and the JavaScript serializer always does). Deserialize decodes the
// body into a new T whatever message of the writer schema the indexes name (Java:
// specific.protobuf.value.type / derive.type).
//
// NewDynamic works without generated code (Java's DynamicMessage): its serializer takes
// messages of the .proto schema text it is given (dynamicpb messages built from
// Serde.Descriptor, or generated messages of the same name), and its deserializer returns a
// *dynamicpb.Message of the writer's schema, compiled at run time from the text the
// registry holds (with github.com/bufbuild/protocompile; references fetched from the
// registry; google/protobuf/*.proto imports are built in).
//
// # Nulls
//
// A nil message serializes to nil bytes without touching the registry, and nil or empty
// bytes deserialize to the zero value of T (a nil message), as Java's serde does.
//
// # Registry use and configuration
//
// The serializer finds the schema id for the subject its registry.SubjectNameStrategy names (by
// default registry.TopicNameStrategy: "<topic>-value", or "<topic>-key" with AsKey; the record name
// of RecordNameStrategy is the message's full name): it registers the schema when
// auto-registration is on (the default), looks it up otherwise, or with UseLatestVersion
// writes with the subject's latest registered schema (the message indexes are then those
// of the message in that schema). Options correspond to Java's KafkaProtobufSerializer
// configuration: auto.register.schemas, use.latest.version, normalize.schemas,
// key.subject.name.strategy / value.subject.name.strategy; see OptionsFromProperties.
// The deserializer fetches the writer schema by the id in the data. Registry access goes
// through package registry, shared with the Avro serde.
//
// Java counterpart: io.confluent.kafka.streams.serdes.protobuf.KafkaProtobufSerde.
package protobuf

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"github.com/kstreams-go/kstreams/serde/internal/srprops"
	"github.com/kstreams-go/kstreams/serde/internal/wire"
	"github.com/kstreams-go/kstreams/serde/protobuf/internal/pbschema"
	"github.com/kstreams-go/kstreams/serde/protobuf/internal/protoprint"
)

// schemaType is the registry's schemaType for Protobuf schemas.
const schemaType = "PROTOBUF"

type options struct {
	isKey        bool
	autoRegister bool
	useLatest    bool
	normalize    bool
	strategy     registry.SubjectNameStrategy
	refs         []srapi.Reference
	ctx          func() context.Context
}

// Option configures a serde made by New or NewDynamic.
type Option func(*options)

// AsKey makes the serde a key serde: registry.TopicNameStrategy then names "<topic>-key". Java: the
// isKey argument of Serializer.configure(configs, isKey).
func AsKey() Option { return func(o *options) { o.isKey = true } }

// WithAutoRegister turns registering the serializer's schema (and its references) on (the
// default) or off; when off, the schema must already be registered under the subject,
// else serializing fails with registry.ErrNotFound.
// Java: auto.register.schemas (default true).
func WithAutoRegister(on bool) Option { return func(o *options) { o.autoRegister = on } }

// WithUseLatestVersion makes the serializer write with the latest schema registered under
// the subject instead of its own; the message must be declared in that schema under the
// same full name. It implies no auto-registration. Java: use.latest.version (default
// false), with auto.register.schemas=false.
func WithUseLatestVersion(on bool) Option { return func(o *options) { o.useLatest = on } }

// WithSubjectNameStrategy sets the subject name strategy: registry.TopicNameStrategy (the
// default), registry.RecordNameStrategy or registry.TopicRecordNameStrategy (the record name
// is the full name of the message being serialized), or a function of the user's. Java:
// key.subject.name.strategy / value.subject.name.strategy.
func WithSubjectNameStrategy(s registry.SubjectNameStrategy) Option {
	return func(o *options) { o.strategy = s }
}

// WithNormalize asks the registry to normalize schemas on registration (?normalize=true).
// Java: normalize.schemas (default false).
func WithNormalize(on bool) Option { return func(o *options) { o.normalize = on } }

// WithReferences gives the registered schemas that the imports of NewDynamic's schema text
// refer to (Name is the import path, e.g. "shop/common.proto"). They are fetched to compile
// the text and registered with it. New[T] finds its imports itself and ignores this.
// Java: the references of a ProtobufSchema.
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
// auto.register.schemas, use.latest.version, normalize.schemas (true/false), and
// key.subject.name.strategy (when isKey) or value.subject.name.strategy, whose values are
// the Java class names io.confluent.kafka.serializers.subject.TopicNameStrategy,
// RecordNameStrategy or TopicRecordNameStrategy (or just those simple names). isKey also
// adds AsKey. Other properties are ignored (the registry client takes its own with
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
		{"normalize.schemas", WithNormalize}} {
		v, ok, err := srprops.Bool(props, p.name)
		if err != nil {
			return nil, fmt.Errorf("protobuf serde: %w", err)
		}
		if ok {
			opts = append(opts, p.opt(v))
		}
	}
	strategy, ok, err := srprops.Strategy(props, isKey)
	if err != nil {
		return nil, fmt.Errorf("protobuf serde: %w", err)
	}
	if ok {
		opts = append(opts, WithSubjectNameStrategy(strategy))
	}
	return opts, nil
}

// Serde is the Protobuf serde for messages of type T; create it with New or NewDynamic. It
// implements serde.Serde[T] and is safe for concurrent use. Java counterpart:
// io.confluent.kafka.streams.serdes.protobuf.KafkaProtobufSerde wrapping
// KafkaProtobufSerializer and KafkaProtobufDeserializer.
type Serde[T proto.Message] struct {
	reg   srapi.Client
	opts  options
	name  string
	typed bool                        // New[T]: decode into T
	own   protoreflect.FileDescriptor // the serializer's schema file; nil for a dynamic serde without one
	text  string                      // own as .proto text
	deps  map[string]string           // own's imports (path -> text), dynamic serde
	msgT  protoreflect.MessageType    // New[T]: T's type

	mu     sync.Mutex
	ownRef *srapi.Schema                       // own with its resolved references, once known
	byID   map[int]protoreflect.FileDescriptor // compiled writer schemas
}

var _ serde.Serde[proto.Message] = (*Serde[proto.Message])(nil)

func newOptions(opts []Option) options {
	o := options{autoRegister: true, strategy: registry.TopicNameStrategy, ctx: context.Background}
	for _, f := range opts {
		f(&o)
	}
	if o.useLatest {
		o.autoRegister = false
	}
	return o
}

// New returns a Protobuf serde for the generated message type T (a pointer type made by
// protoc-gen-go, e.g. *shoppb.Order). The schema it registers is T's .proto file written
// as text. It returns an error wrapping ErrInvalidSchema when T's file cannot be written as
// .proto text (proto2 groups, editions).
func New[T proto.Message](reg *registry.Client, opts ...Option) (*Serde[T], error) {
	if reg == nil {
		return nil, fmt.Errorf("protobuf serde: no schema registry client")
	}
	var zero T
	if reflect.TypeFor[T]().Kind() == reflect.Interface {
		return nil, fmt.Errorf("protobuf serde: New needs a generated message type, not %v (use NewDynamic)", reflect.TypeFor[T]())
	}
	mt := zero.ProtoReflect().Type()
	fd := mt.Descriptor().ParentFile()
	text, err := protoprint.Print(fd)
	if err != nil {
		return nil, fmt.Errorf("protobuf serde: %w: %v", ErrInvalidSchema, err)
	}
	return &Serde[T]{reg: srapi.Of(reg), opts: newOptions(opts), name: "Protobuf<" + reflect.TypeFor[T]().String() + ">",
		typed: true, own: fd, text: text, msgT: mt, byID: map[int]protoreflect.FileDescriptor{}}, nil
}

// NewDynamic returns a Protobuf serde over messages of schemaText (.proto source; its
// imports are google/protobuf/*.proto or schemas given with WithReferences). It serializes
// any message declared in the schema (top-level or nested), typically *dynamicpb.Message
// values made from Descriptor; it deserializes to *dynamicpb.Message of the writer's
// schema. schemaText may be "" for a serde that only deserializes, or that writes with
// WithUseLatestVersion. It returns an error wrapping ErrInvalidSchema when the text does not
// compile (naming line and column), or a *registry.Error when a reference cannot be
// fetched.
func NewDynamic(reg *registry.Client, schemaText string, opts ...Option) (*Serde[proto.Message], error) {
	if reg == nil {
		return nil, fmt.Errorf("protobuf serde: no schema registry client")
	}
	s := &Serde[proto.Message]{reg: srapi.Of(reg), opts: newOptions(opts), name: "Protobuf", text: schemaText,
		byID: map[int]protoreflect.FileDescriptor{}}
	if schemaText == "" {
		return s, nil
	}
	ctx := s.opts.ctx()
	s.deps = map[string]string{}
	if err := s.fetchRefs(ctx, s.opts.refs, s.deps); err != nil {
		return nil, fmt.Errorf("protobuf serde: schema references: %w", err)
	}
	fd, err := pbschema.Compile(ctx, schemaText, s.deps)
	if err != nil {
		return nil, fmt.Errorf("protobuf serde: %w: %v", ErrInvalidSchema, err)
	}
	s.own = fd
	return s, nil
}

// String returns the serde's name, "Protobuf" for the dynamic serde or "Protobuf<T>".
func (s *Serde[T]) String() string { return s.name }

// Descriptor returns the descriptor of the message with the given full name (e.g.
// "shop.Order" or "shop.Order.Line") in the serializer's schema, or nil; use it with
// dynamicpb.NewMessage to build messages for a dynamic serde.
func (s *Serde[T]) Descriptor(fullName string) protoreflect.MessageDescriptor {
	if s.own == nil {
		return nil
	}
	return pbschema.FindMessage(s.own, protoreflect.FullName(fullName))
}

// fetchRefs puts the text of refs, and of their references in turn, into into (import path
// -> text).
func (s *Serde[T]) fetchRefs(ctx context.Context, refs []srapi.Reference, into map[string]string) error {
	for _, r := range refs {
		if _, ok := into[r.Name]; ok {
			continue
		}
		var got srapi.Schema
		var err error
		if r.Version <= 0 {
			got, err = s.reg.Latest(ctx, r.Subject)
		} else {
			got, err = s.reg.Version(ctx, r.Subject, r.Version)
		}
		if err != nil {
			return err
		}
		into[r.Name] = got.Schema
		if err := s.fetchRefs(ctx, got.References, into); err != nil {
			return err
		}
	}
	return nil
}

// isStandard reports whether path is one of protoc's standard imports, which registries
// know without references.
func isStandard(path string) bool { return strings.HasPrefix(path, "google/protobuf/") }

// ownSchema returns the serializer's schema with its references, registering (or, without
// auto-registration, looking up) the imported files first, once.
func (s *Serde[T]) ownSchema(ctx context.Context) (srapi.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ownRef != nil {
		return *s.ownRef, nil
	}
	var refs []srapi.Reference
	if s.typed {
		var err error
		if refs, err = s.registerImports(ctx, s.own); err != nil {
			return srapi.Schema{}, err
		}
	} else {
		refs = s.opts.refs
	}
	sch := srapi.Schema{Schema: s.text, SchemaType: schemaType, References: refs}
	s.ownRef = &sch
	return sch, nil
}

// registerImports registers (or looks up) each non-standard import of fd under the subject
// named by its path, depth first, and returns the references to them.
func (s *Serde[T]) registerImports(ctx context.Context, fd protoreflect.FileDescriptor) ([]srapi.Reference, error) {
	var refs []srapi.Reference
	imps := fd.Imports()
	for i := range imps.Len() {
		imp := imps.Get(i).FileDescriptor
		if isStandard(imp.Path()) {
			continue
		}
		sub, err := s.registerImports(ctx, imp)
		if err != nil {
			return nil, err
		}
		text, err := protoprint.Print(imp)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
		}
		sch := srapi.Schema{Schema: text, SchemaType: schemaType, References: sub}
		if s.opts.autoRegister {
			if _, err := s.reg.Register(ctx, imp.Path(), sch, s.opts.normalize); err != nil {
				return nil, err
			}
		}
		found, err := s.reg.LookUp(ctx, imp.Path(), sch)
		if err != nil {
			return nil, err
		}
		refs = append(refs, srapi.Reference{Name: imp.Path(), Subject: imp.Path(), Version: found.Version})
	}
	return refs, nil
}

// compiledByID returns the compiled writer schema with the given id (fetched and compiled
// once).
func (s *Serde[T]) compiledByID(ctx context.Context, id int, known *srapi.Schema) (protoreflect.FileDescriptor, error) {
	s.mu.Lock()
	fd, ok := s.byID[id]
	s.mu.Unlock()
	if ok {
		return fd, nil
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
	if err := s.fetchRefs(ctx, sch.References, deps); err != nil {
		return nil, err
	}
	fd, err := pbschema.Compile(ctx, sch.Schema, deps)
	if err != nil {
		return nil, fmt.Errorf("%w: schema id %d: %v", ErrInvalidSchema, id, err)
	}
	s.mu.Lock()
	s.byID[id] = fd
	s.mu.Unlock()
	return fd, nil
}

// writer returns the schema id to write md with and md's message indexes in that schema.
func (s *Serde[T]) writer(topic string, md protoreflect.MessageDescriptor, e *wire.Failure) (int, []int, error) {
	subject, err := s.opts.strategy(topic, s.opts.isKey, string(md.FullName()))
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
		fd, err := s.compiledByID(ctx, latest.ID, &latest)
		if err != nil {
			return 0, nil, err
		}
		found := pbschema.FindMessage(fd, md.FullName())
		if found == nil {
			return 0, nil, fmt.Errorf("%w: the latest schema under %q (id %d, version %d) declares no message %s",
				errMismatch, subject, latest.ID, latest.Version, md.FullName())
		}
		return latest.ID, pbschema.Indexes(found), nil
	}
	if s.own == nil {
		return 0, nil, fmt.Errorf("%w: no schema given (give NewDynamic a schema or use WithUseLatestVersion)", ErrInvalidSchema)
	}
	found := pbschema.FindMessage(s.own, md.FullName())
	if found == nil {
		return 0, nil, fmt.Errorf("%w: the serde's schema declares no message %s", errMismatch, md.FullName())
	}
	sch, err := s.ownSchema(ctx)
	if err != nil {
		return 0, nil, err
	}
	var id int
	if s.opts.autoRegister {
		id, err = s.reg.Register(ctx, subject, sch, s.opts.normalize)
	} else {
		var got srapi.Schema
		got, err = s.reg.LookUp(ctx, subject, sch)
		id = got.ID
	}
	e.SchemaID = id
	return id, pbschema.Indexes(found), err
}

// Serialize encodes msg in the Confluent wire format for topic. A nil message returns nil
// bytes without a registry call. headers are not used. Errors are a *serde.Error whose
// message names the subject, schema id and message, wrapping a *registry.Error
// (registry.ErrRejected when registration is refused, registry.ErrNotFound without
// auto-registration, registry.ErrUnavailable), serde.ErrInvalidValue for a message the
// schema does not declare, or ErrInvalidSchema. Java:
// KafkaProtobufSerializer.serialize(topic, headers, record).
func (s *Serde[T]) Serialize(topic string, _ *serde.Headers, msg T) ([]byte, error) {
	if any(msg) == nil {
		return nil, nil
	}
	m := msg.ProtoReflect()
	if !m.IsValid() {
		return nil, nil
	}
	md := m.Descriptor()
	e := &wire.Failure{Serde: s.name, Op: serde.OpSerialize, Topic: topic, Message: string(md.FullName()), Len: -1}
	id, idx, err := s.writer(topic, md, e)
	if err != nil {
		return nil, e.Wrap(err)
	}
	buf := wire.AppendHeader(make([]byte, 0, 64), id)
	buf = wire.AppendMessageIndexes(buf, idx)
	out, err := pbschema.AppendMarshal(buf, m)
	if err != nil {
		return nil, e.Wrap(fmt.Errorf("%w: %v", errMismatch, err))
	}
	return out, nil
}

// Deserialize decodes Confluent wire-format data: it reads the schema id and the message
// indexes, then decodes the body into a new T (New) or into a *dynamicpb.Message of the
// message the indexes name in the writer schema, fetched from the registry and compiled
// (NewDynamic; cached per id). Nil or empty data returns the zero value of T; headers are
// not used. Errors are a *serde.Error whose message names the schema id and message,
// wrapping serde.ErrCorrupt (a short header, another magic byte, malformed message indexes or
// indexes naming no message, a body that does not decode), a *registry.Error
// (registry.ErrNotFound for an unknown id, registry.ErrUnavailable), or ErrInvalidSchema.
// Java: KafkaProtobufDeserializer.deserialize(topic, headers, bytes).
func (s *Serde[T]) Deserialize(topic string, _ *serde.Headers, data []byte) (T, error) {
	var zero T
	if len(data) == 0 {
		return zero, nil
	}
	e := &wire.Failure{Serde: s.name, Op: serde.OpDeserialize, Topic: topic, Len: len(data)}
	id, rest, err := wire.ParseHeader(data)
	if err != nil {
		return zero, e.Wrap(fmt.Errorf("%w: %w", serde.ErrCorrupt, err))
	}
	e.SchemaID = id
	idx, n, err := wire.ReadMessageIndexes(rest)
	if err != nil {
		return zero, e.Wrap(fmt.Errorf("%w: %v", errIndexes, err))
	}
	body := rest[n:]
	ctx := s.opts.ctx()
	var m protoreflect.Message
	if s.typed {
		// The generated type decides the layout, as for Java's specific deserializer; the
		// writer schema is still fetched, so an unknown id fails as it does in Java.
		if _, err := s.reg.SchemaByID(ctx, id); err != nil {
			return zero, e.Wrap(err)
		}
		m = s.msgT.New()
		e.Message = string(m.Descriptor().FullName())
	} else {
		fd, err := s.compiledByID(ctx, id, nil)
		if err != nil {
			return zero, e.Wrap(err)
		}
		md, err := pbschema.ByIndexes(fd, idx)
		if err != nil {
			return zero, e.Wrap(fmt.Errorf("%w: %v", errIndexes, err))
		}
		e.Message = string(md.FullName())
		m = dynamicpb.NewMessage(md)
	}
	if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(body, m.Interface()); err != nil {
		return zero, e.Wrap(fmt.Errorf("%w: %v", errDecode, err))
	}
	out, ok := m.Interface().(T)
	if !ok {
		return zero, e.Wrap(fmt.Errorf("%w: decoded %T", errMismatch, m.Interface()))
	}
	return out, nil
}
