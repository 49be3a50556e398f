// Package avrotest is test support for the Avro serde: Registry, an in-process Schema
// Registry that speaks the Confluent REST API over HTTP (on an httptest server), for unit
// tests and TopologyTestDriver tests that need a registry without a JVM or a network.
//
// It keeps what a serde relies on faithful to the Confluent server: global schema ids that
// start at 1 and are shared by every subject that registers the same schema, versions per
// subject starting at 1, registering an existing schema returns its id without a new
// version, compatibility checks under the subject's level (default BACKWARD) with Avro's
// schema-resolution rules, and the documented status codes and error bodies
// ({"error_code": 40401, "message": ...}), so a serde's failures against it are the
// registry.Error values it gets from a real registry. Only Avro schemas are accepted;
// schema references are stored but not resolved.
//
// Typical use in a TopologyTestDriver test, with the same serdes in the topology and in the
// test topics:
//
//	reg := avrotest.NewRegistry(t)                   // closed when the test ends
//	orders, err := avro.New[Order](reg.Client(), orderSchemaJSON)
//	...
//	in := testdriver.CreateInputTopic(d, "orders", serde.String(), serde.Serializer[Order](orders))
//
// Java counterpart: io.confluent.kafka.schemaregistry.client.MockSchemaRegistryClient (used
// with the "mock://" URL scheme), which works in-process rather than over HTTP.
package avrotest

import (
	"testing"

	"github.com/kstreams-go/kstreams/serde/avro/internal/fakesr"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
)

// Registry is an in-process Schema Registry on a loopback port. Create it with NewRegistry
// (tied to a test) or Start; it is safe for concurrent use.
type Registry struct {
	r *fakesr.Registry
}

// Option configures a Registry.
type Option struct {
	apply fakesr.Option
}

// WithBasicAuth makes the registry require HTTP basic authentication with the given
// credentials; other requests get HTTP 401 with error code 401 (registry.ErrUnauthorized).
// Registry.Client sends them. Java: basic.auth.user.info.
func WithBasicAuth(user, password string) Option {
	return Option{fakesr.WithBasicAuth(user, password)}
}

// WithCompatibility sets the global compatibility level: NONE, BACKWARD (the default, as
// Confluent's), BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL or FULL_TRANSITIVE.
// Registering a schema the level refuses fails with registry.ErrRejected (error code 409).
func WithCompatibility(level string) Option { return Option{fakesr.WithCompatibility(level)} }

func apply(opts []Option) []fakesr.Option {
	out := make([]fakesr.Option, len(opts))
	for i, o := range opts {
		out[i] = o.apply
	}
	return out
}

// NewRegistry starts a Registry and closes it when tb's test ends.
func NewRegistry(tb testing.TB, opts ...Option) *Registry {
	tb.Helper()
	return &Registry{fakesr.NewRegistry(tb, apply(opts)...)}
}

// Start starts a Registry outside a test (an example, TestMain); call Close when done.
func Start(opts ...Option) *Registry { return &Registry{fakesr.Start(apply(opts)...)} }

// URL returns the registry's base URL, e.g. "http://127.0.0.1:41234", for
// schema.registry.url in properties given to registry.ConfigFromProperties.
func (r *Registry) URL() string { return r.r.URL() }

// Close stops the registry. Requests afterwards fail with connection refused
// (registry.ErrUnavailable), as against a registry that is down.
func (r *Registry) Close() { r.r.Close() }

// Client returns a new registry client of this registry, with the WithBasicAuth credentials.
func (r *Registry) Client() *registry.Client { return r.r.Client() }

// SetUnavailable makes every request fail with HTTP 500 and error code 50001 (Confluent's
// "error in the backend data store"; registry.ErrUnavailable to a client) until it is turned
// off again.
func (r *Registry) SetUnavailable(on bool) { r.r.SetUnavailable(on) }

// Register registers an Avro schema under subject directly, as POST
// /subjects/{subject}/versions would (e.g. for a serde with auto-registration off), and
// returns its id, or an error naming the registry's error code (409 incompatible, 42201
// invalid schema).
func (r *Registry) Register(subject, schemaText string) (int, error) {
	return r.r.Register(subject, schemaText)
}
