package protobuf_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/serde/internal/wire"
	"github.com/kstreams-go/kstreams/serde/protobuf"
	"github.com/kstreams-go/kstreams/serde/protobuf/internal/pbschema"
	"github.com/kstreams-go/kstreams/serde/protobuf/internal/testpb"
)

// jsDir holds Confluent's JavaScript serdes (installed by scripts/test.sh with npm ci).
var jsDir = filepath.Join("..", "avro", "testdata", "js")

// integrationRegistry returns a client of the registry named by SCHEMA_REGISTRY_URL
// (scripts/registry/registry.sh up starts Apicurio Registry and prints it), its URL, and a
// prefix that keeps this run's subjects apart.
func integrationRegistry(t *testing.T) (*registry.Client, string, string) {
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
	return c, url, fmt.Sprintf("it%d-", time.Now().UnixNano())
}

func nodeOrSkip(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(jsDir, "node_modules", "@confluentinc", "schemaregistry")); err != nil {
		t.Skip("Confluent's JavaScript serdes are not installed: run `npm ci --prefix serde/avro/testdata/js` (Node.js 20+)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH; the cross-check against Confluent's JavaScript serdes needs Node.js 20+")
	}
	return node
}

type jsRecord struct {
	JSON  string `json:"json"`
	GoHex string `json:"goHex"`
}

type jsCase struct {
	Topic         string         `json:"topic"`
	Message       string         `json:"message"`
	DescriptorSet string         `json:"descriptorSet"`
	Serialized    map[string]any `json:"serialized"`
	Records       []jsRecord     `json:"records"`
}

type jsOut struct {
	Cases []struct {
		Topic   string `json:"topic"`
		Records []struct {
			Hex              string `json:"hex"`
			SerializeError   string `json:"serializeError"`
			Decoded          string `json:"decoded"`
			DecodedType      string `json:"decodedType"`
			DeserializeError string `json:"deserializeError"`
		} `json:"records"`
	} `json:"cases"`
}

// runNode runs pbjson.js in mode on in and returns its output.
func runNode(t *testing.T, node, mode string, in any) jsOut {
	t.Helper()
	tmp := t.TempDir()
	inPath, outPath := filepath.Join(tmp, "in.json"), filepath.Join(tmp, "out.json")
	data, _ := json.Marshal(in)
	if err := os.WriteFile(inPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	cmd := exec.Command(node, "pbjson.js", mode, abs(inPath), abs(outPath))
	cmd.Dir = jsDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node pbjson.js %s: %v\n%s", mode, err, out)
	}
	var out jsOut
	raw, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// registered fetches the schema with id from the registry, compiles the text the registry
// returns (with its references), and returns the descriptor set of the file and its
// imports, and the serialized-format answers for Confluent's JavaScript deserializer.
func registered(t *testing.T, c *registry.Client, id int) (protoreflect.FileDescriptor, string, map[string]any) {
	t.Helper()
	ctx := context.Background()
	sch, err := srapi.Of(c).SchemaByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	serialized := map[string]any{}
	deps := map[string]string{}
	var walk func(refs []srapi.Reference)
	walk = func(refs []srapi.Reference) {
		for _, r := range refs {
			got, err := srapi.Of(c).Version(ctx, r.Subject, r.Version)
			if err != nil {
				t.Fatal(err)
			}
			deps[r.Name] = got.Schema
			walk(got.References)
		}
	}
	walk(sch.References)
	fd, err := pbschema.Compile(ctx, sch.Schema, deps)
	if err != nil {
		t.Fatalf("the registry's text of schema %d does not compile: %v\n%s", id, err, sch.Schema)
	}
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		imps := f.Imports()
		for i := range imps.Len() {
			add(imps.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	add(fd)
	b64 := func(f protoreflect.FileDescriptor) string {
		b, _ := proto.Marshal(protodesc.ToFileDescriptorProto(f))
		return base64.StdEncoding.EncodeToString(b)
	}
	serialized[strconv.Itoa(id)] = map[string]any{"schema": b64(fd), "schemaType": "PROTOBUF", "references": sch.References}
	var refs func(f protoreflect.FileDescriptor, rs []srapi.Reference)
	refs = func(f protoreflect.FileDescriptor, rs []srapi.Reference) {
		for _, r := range rs {
			imp := f.Imports()
			for i := range imp.Len() {
				if imp.Get(i).Path() == r.Name {
					got, _ := srapi.Of(c).Version(ctx, r.Subject, r.Version)
					serialized[fmt.Sprintf("%s/%d", r.Subject, r.Version)] = map[string]any{
						"schema": b64(imp.Get(i).FileDescriptor), "schemaType": "PROTOBUF", "references": got.References}
					refs(imp.Get(i).FileDescriptor, got.References)
				}
			}
		}
	}
	refs(fd, sch.References)
	setBytes, _ := proto.Marshal(set)
	return fd, base64.StdEncoding.EncodeToString(setBytes), serialized
}

// TestIntegrationConfluentJSCrossCheck writes records with the Go serde against a real
// registry (Apicurio), then has Confluent's JavaScript Protobuf serializer encode the same
// records with the schema the Go serde registered (its latest version under the subject):
// the bytes must be identical. Confluent's deserializer decodes the Go bytes to the same
// messages, and the Go serde decodes the JavaScript bytes. Cases: generated types
// (references, a standard import, nested messages at depth 1 and 2, a oneof between other
// fields, maps, packed repeated doubles, sint32, optional, bytes, enum, timestamp) and a
// dynamic schema with a message declared after a map field.
func TestIntegrationConfluentJSCrossCheck(t *testing.T) {
	c, url, prefix := integrationRegistry(t)
	node := nodeOrSkip(t)

	type goCase struct {
		topic string
		s     interface {
			Serialize(string, proto.Message) ([]byte, error)
			Deserialize(string, []byte) (proto.Message, error)
		}
		msgs []proto.Message
	}
	now := time.Date(2026, 12, 3, 10, 20, 30, 123456789, time.UTC)
	full := &testpb.Order{Id: "o-1", Payment: &testpb.Order_Card{Card: "4111"}, Quantity: -3,
		Lines: []*testpb.Order_Line{{Sku: "A", Qty: 2, Price: 1 << 40, Detail: &testpb.Order_Line_Detail{Text: "gift wrap ✓"}}, {Sku: "B"}},
		Tags:  map[string]string{"z": "last", "a": "first", "m": ""}, Total: &testpb.Money{Currency: "EUR", Units: -12, Nanos: -500000000},
		PlacedAt: timestamppb.New(now), Status: testpb.Order_STATUS_SHIPPED, Gift: proto.Bool(false),
		Weights: []float64{0.5, -1e300, 3}, Note: []byte{0, 0xff, 0x10}}
	cases := []goCase{
		{prefix + "customers", typed[*testpb.Customer](t, c), []proto.Message{
			&testpb.Customer{Id: "c1", Name: "Ann"}, &testpb.Customer{}, &testpb.Customer{Name: "Zoë \u2028 \x00"}}},
		{prefix + "orders", typed[*testpb.Order](t, c), []proto.Message{
			full, &testpb.Order{Id: "o-2", Payment: &testpb.Order_Bank_{Bank: &testpb.Order_Bank{Iban: "DE00"}}, Gift: proto.Bool(true)}, &testpb.Order{}}},
		{prefix + "details", typed[*testpb.Order_Line_Detail](t, c), []proto.Message{&testpb.Order_Line_Detail{Text: "nested twice"}}},
		{prefix + "banks", typed[*testpb.Order_Bank](t, c), []proto.Message{&testpb.Order_Bank{Iban: "after a map field"}}},
	}
	dyn, err := protobuf.NewDynamic(c, `syntax = "proto3";
package kstreams.test.dyn;
message A { int32 x = 1; }
message B {
  map<string, A> m = 1;
  repeated sint64 v = 2;
  message C { message D { string s = 1; } }
  message E { bool f = 1; oneof k { string name = 3; int64 num = 2; } uint64 big = 4; }
}
`)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name, js string) proto.Message {
		m := dynamicpb.NewMessage(dyn.Descriptor(name))
		if err := protojson.Unmarshal([]byte(js), m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	cases = append(cases, goCase{prefix + "dynamic", dynAdapter{dyn}, []proto.Message{
		mk("kstreams.test.dyn.B.E", `{"f": true, "num": "-7", "big": "18446744073709551615"}`),
		mk("kstreams.test.dyn.B.C.D", `{"s": "d"}`),
		mk("kstreams.test.dyn.B", `{"m": {"k2": {"x": 2}, "k1": {}}, "v": ["-1", "1", "-9223372036854775808"]}`),
		mk("kstreams.test.dyn.A", `{"x": -2147483648}`),
	}})

	var in struct {
		URL   string   `json:"url"`
		Cases []jsCase `json:"cases"`
	}
	in.URL = url
	goBytes := map[string][][]byte{}
	for _, gc := range cases {
		jc := jsCase{Topic: gc.topic}
		for i, m := range gc.msgs {
			b, err := gc.s.Serialize(gc.topic, m)
			if err != nil {
				t.Fatalf("%s[%d]: %v", gc.topic, i, err)
			}
			goBytes[gc.topic] = append(goBytes[gc.topic], b)
			js, err := protojson.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			jc.Records = append(jc.Records, jsRecord{JSON: string(js), GoHex: hex.EncodeToString(b)})
			if i == 0 {
				id, _, _ := wire.ParseHeader(b)
				_, jc.DescriptorSet, jc.Serialized = registered(t, c, id)
				jc.Message = string(m.ProtoReflect().Descriptor().FullName())
			}
		}
		in.Cases = append(in.Cases, jc)
	}
	// pbjson.js builds one message type per case; the dynamic case's records are of several
	// messages, so split it by message.
	var split []jsCase
	for ci, jc := range in.Cases {
		for ri, r := range jc.Records {
			one := jc
			one.Records = []jsRecord{r}
			one.Message = string(cases[ci].msgs[ri].ProtoReflect().Descriptor().FullName())
			split = append(split, one)
		}
	}
	in.Cases = split
	out := runNode(t, node, "protobuf", in)
	if len(out.Cases) != len(split) {
		t.Fatalf("node answered %d cases of %d", len(out.Cases), len(split))
	}
	n := 0
	k := 0
	for _, gc := range cases {
		for ri, want := range gc.msgs {
			rec := out.Cases[k].Records[0]
			k++
			goHex := hex.EncodeToString(goBytes[gc.topic][ri])
			name := fmt.Sprintf("%s[%d] %s", gc.topic, ri, want.ProtoReflect().Descriptor().FullName())
			if rec.SerializeError != "" || rec.DeserializeError != "" {
				t.Errorf("%s: Confluent JS failed: serialize %q, deserialize %q", name, rec.SerializeError, rec.DeserializeError)
				continue
			}
			if rec.Hex != goHex {
				t.Errorf("%s: bytes differ\nConfluent JS: %s\nGo:           %s", name, rec.Hex, goHex)
			}
			// Confluent's deserializer read the Go bytes as the same message.
			back := want.ProtoReflect().New().Interface()
			if rec.DecodedType != string(want.ProtoReflect().Descriptor().FullName()) {
				t.Errorf("%s: Confluent JS decoded a %s", name, rec.DecodedType)
			} else if err := protojson.Unmarshal([]byte(rec.Decoded), back); err != nil || !proto.Equal(back, want) {
				t.Errorf("%s: Confluent JS decoded %s (%v); want %v", name, rec.Decoded, err, want)
			}
			// The Go serde reads the JavaScript bytes.
			jsBytes, _ := hex.DecodeString(rec.Hex)
			got, err := gc.s.Deserialize(gc.topic, jsBytes)
			if err != nil {
				t.Errorf("%s: Go decoding the JS bytes: %v", name, err)
			} else if a, b := mustJSON(t, got), mustJSON(t, want); a != b {
				t.Errorf("%s: Go decoded the JS bytes as %s; want %s", name, a, b)
			}
			n++
		}
	}
	t.Logf("%d records: Confluent's JavaScript serializer wrote the Go serde's bytes, and each side decoded the other's (registry %s)", n, url)
}

func mustJSON(t *testing.T, m proto.Message) string {
	t.Helper()
	b, err := protojson.MarshalOptions{}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	_ = json.Unmarshal(b, &v)
	out, _ := json.Marshal(v)
	return string(out)
}

type typedAdapter[T proto.Message] struct{ s *protobuf.Serde[T] }

func (a typedAdapter[T]) Serialize(topic string, m proto.Message) ([]byte, error) {
	return a.s.Serialize(topic, nil, m.(T))
}

func (a typedAdapter[T]) Deserialize(topic string, b []byte) (proto.Message, error) {
	return a.s.Deserialize(topic, nil, b)
}

func typed[T proto.Message](t *testing.T, c *registry.Client) typedAdapter[T] {
	t.Helper()
	s, err := protobuf.New[T](c)
	if err != nil {
		t.Fatal(err)
	}
	return typedAdapter[T]{s}
}

type dynAdapter struct {
	s *protobuf.Serde[proto.Message]
}

func (a dynAdapter) Serialize(topic string, m proto.Message) ([]byte, error) {
	return a.s.Serialize(topic, nil, m)
}

func (a dynAdapter) Deserialize(topic string, b []byte) (proto.Message, error) {
	return a.s.Deserialize(topic, nil, b)
}
