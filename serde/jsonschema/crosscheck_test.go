package jsonschema_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/serde/internal/wire"
	"github.com/kstreams-go/kstreams/serde/jsonschema"
)

var jsDir = filepath.Join("..", "avro", "testdata", "js")

// TestIntegrationConfluentJSCrossCheck writes records with the Go serde against a real
// registry (Apicurio, SCHEMA_REGISTRY_URL), then has Confluent's JavaScript JSON Schema
// serializer (validating, with the subject's latest schema) encode the same documents: the
// bytes must be identical, Confluent's validating deserializer must read the Go bytes as
// the same document, and the Go serde must read the JavaScript bytes. Documents that break
// the schema must be refused by both serializers and both deserializers. The order schema
// refers to a second registered schema.
func TestIntegrationConfluentJSCrossCheck(t *testing.T) {
	url := os.Getenv("SCHEMA_REGISTRY_URL")
	if url == "" {
		t.Skip("SCHEMA_REGISTRY_URL is not set: start a registry with `scripts/registry/registry.sh up` " +
			"and export SCHEMA_REGISTRY_URL=$(scripts/registry/registry.sh addr)")
	}
	if _, err := os.Stat(filepath.Join(jsDir, "node_modules", "@confluentinc", "schemaregistry")); err != nil {
		t.Skip("Confluent's JavaScript serdes are not installed: run `npm ci --prefix serde/avro/testdata/js` (Node.js 20+)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH; the cross-check against Confluent's JavaScript serdes needs Node.js 20+")
	}
	c, err := registry.New(registry.Config{URLs: []string{url}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("it%d-", time.Now().UnixNano())

	addrSubject := prefix + "address"
	if _, err := srapi.Of(c).Register(t.Context(), addrSubject, srapi.Schema{SchemaType: "JSON", Schema: addressSchema}, false); err != nil {
		t.Fatal(err)
	}
	orders, err := jsonschema.New[Order](c, orderSchema,
		jsonschema.WithReferences(registry.Reference{Name: "address.schema.json", Subject: addrSubject, Version: 1}))
	if err != nil {
		t.Fatal(err)
	}
	generic, err := jsonschema.New[any](c, `{"type": "object", "properties": {"n": {"type": "array", "items": {"type": "number"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	note := `quote " backslash \ tab 	 html <a href="x">&amp;</a> sep ` + "\u2028\u2029 emoji 🎉 nul \x00"
	type rec struct {
		valid bool
		goVal any
	}
	type jcase struct {
		topic string
		ser   func(any) ([]byte, error)
		de    func([]byte) (any, error)
		recs  []rec
	}
	cases := []jcase{
		{prefix + "orders",
			func(v any) ([]byte, error) { return orders.Serialize(prefix+"orders", nil, v.(Order)) },
			func(b []byte) (any, error) { return orders.Deserialize(prefix+"orders", nil, b) },
			[]rec{
				{true, Order{ID: "o-1", Qty: 1}},
				{true, Order{ID: "o-2", Qty: 250, Note: &note, Lines: []Line{{SKU: "ABC-1"}, {SKU: "XYZ-999"}}, Address: &Address{Zip: "75001"}}},
				{false, Order{ID: "o-3", Qty: 0}},                              // minimum
				{false, Order{ID: "o-4", Qty: 1, Lines: []Line{{SKU: "bad"}}}}, // pattern
				{false, Order{ID: "o-5", Qty: 1, Address: &Address{}}},         // required zip in the reference
			}},
		{prefix + "numbers",
			func(v any) ([]byte, error) { return generic.Serialize(prefix+"numbers", nil, v) },
			func(b []byte) (any, error) { return generic.Deserialize(prefix+"numbers", nil, b) },
			[]rec{
				{true, map[string]any{"n": []any{0, 1, -1, 0.1, 1.5e300, 1e21, 1e20, 1e-7, 1e-6, 123456789012345, math.MaxInt32, -2.5}}},
				{false, map[string]any{"n": []any{"1"}}},
			}},
	}

	type jsRec struct {
		JSON  string `json:"json"`
		GoHex string `json:"goHex"`
	}
	type jsCase struct {
		Topic   string  `json:"topic"`
		Records []jsRec `json:"records"`
	}
	var in struct {
		URL   string   `json:"url"`
		Cases []jsCase `json:"cases"`
	}
	in.URL = url
	var ids = map[string]int{}
	for _, jc := range cases {
		// The first record is valid: it registers the schema and gives its id.
		b, err := jc.ser(jc.recs[0].goVal)
		if err != nil {
			t.Fatalf("%s: %v", jc.topic, err)
		}
		ids[jc.topic], _, _ = wire.ParseHeader(b)
		out := jsCase{Topic: jc.topic}
		for i, r := range jc.recs {
			doc, _ := json.Marshal(r.goVal) // only for invalid records, whose bytes the Go serde refuses
			b, err := jc.ser(r.goVal)
			switch {
			case r.valid && err != nil:
				t.Fatalf("%s[%d]: %v", jc.topic, i, err)
			case !r.valid:
				var ve *jsonschema.ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("%s[%d]: Go serializer accepted an invalid document (%v)", jc.topic, i, err)
				}
				b = append(wire.AppendHeader(nil, ids[jc.topic]), doc...)
			}
			out.Records = append(out.Records, jsRec{JSON: string(b[wire.HeaderSize:]), GoHex: hex.EncodeToString(b)})
		}
		in.Cases = append(in.Cases, out)
	}

	tmp := t.TempDir()
	inPath, outPath := filepath.Join(tmp, "in.json"), filepath.Join(tmp, "out.json")
	data, _ := json.Marshal(in)
	if err := os.WriteFile(inPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "pbjson.js", "json", inPath, outPath)
	cmd.Dir = jsDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node pbjson.js json: %v\n%s", err, out)
	}
	var got struct {
		Cases []struct {
			Records []struct {
				Hex              string `json:"hex"`
				SerializeError   string `json:"serializeError"`
				Decoded          string `json:"decoded"`
				DeserializeError string `json:"deserializeError"`
			} `json:"records"`
		} `json:"cases"`
	}
	raw, _ := os.ReadFile(outPath)
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	valid, invalid := 0, 0
	for ci, jc := range cases {
		for ri, r := range jc.recs {
			js := got.Cases[ci].Records[ri]
			sent := in.Cases[ci].Records[ri]
			name := fmt.Sprintf("%s[%d]", jc.topic, ri)
			goBytes, _ := hex.DecodeString(sent.GoHex)
			if !r.valid {
				if js.SerializeError == "" || js.DeserializeError == "" {
					t.Errorf("%s: Confluent JS accepted an invalid document: serialize %q, deserialize %q", name, js.SerializeError, js.DeserializeError)
				}
				var ve *jsonschema.ValidationError
				if _, err := jc.de(goBytes); !errors.As(err, &ve) {
					t.Errorf("%s: Go deserializer accepted an invalid document: %v", name, err)
				} else {
					t.Logf("%s: both refused; Go: %v; JS: %s", name, ve, firstLine(js.SerializeError))
				}
				invalid++
				continue
			}
			if js.SerializeError != "" || js.DeserializeError != "" {
				t.Errorf("%s: Confluent JS failed: serialize %q, deserialize %q", name, js.SerializeError, js.DeserializeError)
				continue
			}
			if js.Hex != sent.GoHex {
				jb, _ := hex.DecodeString(js.Hex)
				t.Errorf("%s: bytes differ\nConfluent JS: %q\nGo:           %q", name, jb, goBytes)
			}
			if js.Decoded != sent.JSON {
				t.Errorf("%s: Confluent JS decoded the Go bytes as %s; want %s", name, js.Decoded, sent.JSON)
			}
			jsBytes, _ := hex.DecodeString(js.Hex)
			back, err := jc.de(jsBytes)
			if err != nil {
				t.Errorf("%s: Go decoding the JS bytes: %v", name, err)
			} else if a, b := asJSON(t, back), asJSON(t, r.goVal); a != b {
				t.Errorf("%s: Go decoded the JS bytes as %s; want %s", name, a, b)
			}
			valid++
		}
	}
	t.Logf("%d documents written identically by both serializers and read by both deserializers; %d invalid ones refused by all four (registry %s)", valid, invalid, url)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	_ = json.Unmarshal(b, &x)
	b, _ = json.Marshal(x)
	return string(b)
}
