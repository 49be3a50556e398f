// Package srapi is the contract between package registry (the public Schema Registry client
// users create) and the library's other packages that talk to a registry: the Avro, Protobuf
// and JSON Schema serdes, the fake registries of the tests. Users hold a *registry.Client and
// hand it to a serde; the serde reaches the client's operations through Of, which package
// registry sets when it is initialized (registry imports this package, so this package cannot
// name registry.Client).
package srapi

import "context"

// ContentType is the media type of Schema Registry requests and responses.
const ContentType = "application/vnd.schemaregistry.v1+json"

// Schema is a schema as the registry returns it. Schema holds the schema text (for Avro, its
// JSON); SchemaType is "" or "AVRO" for Avro, "JSON" or "PROTOBUF" for the registry's other
// types. ID, Subject and Version are zero when the call that returned it does not report
// them. Java counterpart: io.confluent.kafka.schemaregistry.client.SchemaMetadata /
// rest.entities.Schema.
type Schema struct {
	ID         int         `json:"id,omitempty"`
	Subject    string      `json:"subject,omitempty"`
	Version    int         `json:"version,omitempty"`
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
}

// Reference names another registered schema that a schema refers to (Java:
// rest.entities.SchemaReference): Name is how the schema refers to it (an Avro type name, a
// Protobuf import path, a JSON Schema $ref), Subject and Version where it is registered.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Client is what the serdes and the library's tests do with a registry. Every method returns
// a *registry.Error on failure. Java counterpart:
// io.confluent.kafka.schemaregistry.client.SchemaRegistryClient.
type Client interface {
	// Register registers schema under subject (POST /subjects/{subject}/versions, with
	// ?normalize=true when normalize is set) and returns its id; registering an already
	// registered schema returns the existing id. Cached.
	Register(ctx context.Context, subject string, schema Schema, normalize bool) (int, error)
	// LookUp returns the id and version of schema under subject without registering it
	// (POST /subjects/{subject}). Cached.
	LookUp(ctx context.Context, subject string, schema Schema) (Schema, error)
	// SchemaByID returns the schema with the given id (GET /schemas/ids/{id}); ID is set,
	// Subject and Version are not. Cached forever.
	SchemaByID(ctx context.Context, id int) (Schema, error)
	// Latest returns the latest version under subject (GET
	// /subjects/{subject}/versions/latest), cached for the client's latest.cache.ttl.sec.
	Latest(ctx context.Context, subject string) (Schema, error)
	// Version returns one version under subject (GET
	// /subjects/{subject}/versions/{version}). Cached.
	Version(ctx context.Context, subject string, version int) (Schema, error)
	// Versions lists the versions registered under subject (GET
	// /subjects/{subject}/versions). Not cached.
	Versions(ctx context.Context, subject string) ([]int, error)
	// Subjects lists the registered subjects (GET /subjects). Not cached.
	Subjects(ctx context.Context) ([]string, error)
	// TestCompatibility asks whether schema is compatible with version ("latest" or a
	// number) under subject (POST
	// /compatibility/subjects/{subject}/versions/{version}?verbose=true) and returns the
	// verdict and the registry's messages.
	TestCompatibility(ctx context.Context, subject, version string, schema Schema) (bool, []string, error)
	// SetCompatibility sets the compatibility level of subject, or the global level when
	// subject is "" (PUT /config/{subject} or PUT /config).
	SetCompatibility(ctx context.Context, subject, level string) error
	// DeleteSubject deletes subject (DELETE /subjects/{subject}, ?permanent=true for a hard
	// delete) and returns the versions deleted; it drops the subject from the caches.
	DeleteSubject(ctx context.Context, subject string, permanent bool) ([]int, error)
	// URLs returns the registry base URLs the client uses (without credentials).
	URLs() []string
}

// Of returns the operations of a *registry.Client (given as any: this package cannot import
// registry). Package registry sets it in its init; it panics for another type.
var Of func(client any) Client
