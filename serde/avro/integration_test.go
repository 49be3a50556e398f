package avro_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/serde/avro"
	"github.com/kstreams-go/kstreams/serde/avro/internal/schema"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
)

// integrationRegistry returns a client for the real schema registry named by
// SCHEMA_REGISTRY_URL (scripts/registry/registry.sh up starts Apicurio Registry and prints
// its Confluent-compatible URL), and a prefix that keeps this run's subjects apart.
func integrationRegistry(t *testing.T) (*registry.Client, string) {
	t.Helper()
	url := os.Getenv("SCHEMA_REGISTRY_URL")
	if url == "" {
		t.Skip("SCHEMA_REGISTRY_URL is not set: start a registry with `scripts/registry/registry.sh up` " +
			"and export SCHEMA_REGISTRY_URL=$(scripts/registry/registry.sh addr)")
	}
	c, err := registry.New(registry.Config{URLs: []string{url}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, fmt.Sprintf("it%d-", time.Now().UnixNano())
}

// TestIntegrationRegistryClient runs the REST client against a real registry: registration,
// look-up, fetch by id, latest and by version, compatibility, and the error codes.
func TestIntegrationRegistryClient(t *testing.T) {
	c, prefix := integrationRegistry(t)
	ctx := context.Background()
	subject := prefix + "users-value"
	v1 := `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"name","type":"string"}]}`
	v2 := `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"name","type":"string"},{"name":"age","type":"int","default":0}]}`
	bad := `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"name","type":"string"},{"name":"email","type":"string"}]}`

	id1, err := srapi.Of(c).Register(ctx, subject, srapi.Schema{Schema: v1}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := srapi.Of(c).SetCompatibility(ctx, subject, "BACKWARD"); err != nil {
		t.Fatal(err)
	}
	id2, err := srapi.Of(c).Register(ctx, subject, srapi.Schema{Schema: v2}, false)
	if err != nil || id2 == id1 {
		t.Fatalf("Register v2 = %d, %v (v1 has %d)", id2, err, id1)
	}
	got, err := srapi.Of(c).LookUp(ctx, subject, srapi.Schema{Schema: v1})
	if err != nil || got.ID != id1 || got.Version != 1 {
		t.Fatalf("LookUp v1 = %+v, %v; want id %d version 1", got, err, id1)
	}
	byID, err := srapi.Of(c).SchemaByID(ctx, id2)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustParse(t, byID.Schema), mustParse(t, v2); len(a.Fields) != len(b.Fields) || a.FullName() != b.FullName() {
		t.Fatalf("SchemaByID(%d) = %s", id2, byID.Schema)
	}
	latest, err := srapi.Of(c).Latest(ctx, subject)
	if err != nil || latest.ID != id2 || latest.Version != 2 {
		t.Fatalf("Latest = %+v, %v; want id %d version 2", latest, err, id2)
	}
	if v, err := srapi.Of(c).Version(ctx, subject, 1); err != nil || v.ID != id1 {
		t.Fatalf("Version(1) = %+v, %v", v, err)
	}
	ok, _, err := srapi.Of(c).TestCompatibility(ctx, subject, "latest", srapi.Schema{Schema: bad})
	if err != nil || ok {
		t.Fatalf("TestCompatibility(bad) = %v, %v; want false", ok, err)
	}

	_, err = srapi.Of(c).Register(ctx, subject, srapi.Schema{Schema: bad}, false)
	if !errors.Is(err, registry.ErrRejected) {
		t.Fatalf("Register(bad) err = %v; want ErrIncompatible", err)
	}
	t.Logf("incompatible: %v", err)
	_, err = srapi.Of(c).SchemaByID(ctx, 1<<30)
	if !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("SchemaByID(unknown) err = %v; want ErrSchemaNotFound", err)
	}
	t.Logf("unknown id: %v", err)
	_, err = srapi.Of(c).Latest(ctx, prefix+"missing-value")
	if !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("Latest(missing) err = %v; want ErrSubjectNotFound", err)
	}
	_, err = srapi.Of(c).Version(ctx, subject, 99)
	if !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("Version(99) err = %v; want ErrVersionNotFound", err)
	}
	_, err = srapi.Of(c).LookUp(ctx, subject, srapi.Schema{Schema: bad})
	if !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("LookUp(unregistered) err = %v; want ErrSchemaNotFound", err)
	}
	_, err = srapi.Of(c).Register(ctx, prefix+"junk-value", srapi.Schema{Schema: "not a schema"}, false)
	if !errors.Is(err, registry.ErrRejected) {
		t.Fatalf("Register(junk) err = %v; want ErrInvalidSchema", err)
	}
}

func mustParse(t *testing.T, text string) *schema.Type {
	t.Helper()
	st, err := schema.Parse(text)
	if err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	return st
}

// TestIntegrationSerde runs the serde against a real registry: typed and generic round
// trips, and the Confluent JavaScript vectors with their schema ids rewritten to the ids
// the registry gives (the schemas pass through the registry's storage and come back as it
// returns them).
func TestIntegrationSerde(t *testing.T) {
	c, prefix := integrationRegistry(t)
	type User struct {
		Name string
		Age  int32
	}
	s, err := avro.New[User](c, userSchema)
	if err != nil {
		t.Fatal(err)
	}
	topic := prefix + "users"
	b, err := s.Serialize(topic, nil, User{Name: "ann", Age: 7})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := registry.New(registry.Config{URLs: srapi.Of(c).URLs()})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := avro.NewGeneric(fresh, userSchema)
	v, err := g.Deserialize(topic, nil, b)
	if err != nil || !reflect.DeepEqual(v, map[string]any{"name": "ann", "age": int32(7)}) {
		t.Fatalf("generic decode via a fresh client = %#v, %v", v, err)
	}
	if _, err := g.Deserialize(topic, nil, []byte{0, 0x3f, 0xff, 0xff, 0xff, 2}); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("unknown id: %v; want registry.ErrNotFound", err)
	}

	vf := loadVectors(t, goldenPath)
	n := 0
	for _, vc := range vf.Cases {
		subject := prefix + vc.Topic + "-value"
		id, err := srapi.Of(c).Register(context.Background(), subject, srapi.Schema{Schema: vc.Schema}, false)
		if err != nil {
			t.Fatalf("%s: %v", vc.Topic, err)
		}
		st := mustParse(t, vc.Schema)
		gs, _ := avro.NewGeneric(fresh, vc.Schema)
		for i, rec := range vc.Records {
			data, _ := hex.DecodeString(rec.Hex)
			binary.BigEndian.PutUint32(data[1:5], uint32(id))
			v, err := gs.Deserialize(prefix+vc.Topic, nil, data)
			if err != nil {
				t.Fatalf("%s[%d]: %v", vc.Topic, i, err)
			}
			if got := jsonRoundTrip(t, canonical(t, st, v)); !reflect.DeepEqual(got, rec.Value) {
				t.Errorf("%s[%d]: decoded %v; want %v", vc.Topic, i, got, rec.Value)
			}
			n++
		}
	}
	t.Logf("decoded %d Confluent JS records with schemas fetched from %s", n, srapi.Of(c).URLs()[0])
}
