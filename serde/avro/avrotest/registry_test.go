package avrotest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/serde/avro/avrotest"
)

const (
	v1 = `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`
	v2 = `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"int","default":0}]}`
	v3 = `{"type":"record","name":"R","fields":[{"name":"b","type":"int","default":0}]}`
)

type reply struct {
	status int
	ctype  string
	body   string
}

func call(t *testing.T, r *avrotest.Registry, method, path, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, r.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header.Get("Content-Type"), strings.TrimSpace(string(b))}
}

func schemaBody(s string) string {
	b, _ := json.Marshal(map[string]string{"schema": s})
	return string(b)
}

// TestDocumentedResponses checks status codes and bodies against the Confluent Schema
// Registry API reference.
func TestDocumentedResponses(t *testing.T) {
	r := avrotest.NewRegistry(t)
	expect := func(got reply, status int, bodyHas string) {
		t.Helper()
		if got.status != status || !strings.Contains(got.body, bodyHas) || got.ctype != "application/vnd.schemaregistry.v1+json" {
			t.Errorf("got %d %q (%s); want %d containing %q", got.status, got.body, got.ctype, status, bodyHas)
		}
	}
	expect(call(t, r, "GET", "/subjects", ""), 200, `[]`)
	expect(call(t, r, "POST", "/subjects/s/versions", schemaBody(v1)), 200, `{"id":1}`)
	expect(call(t, r, "POST", "/subjects/s/versions", schemaBody(v1)), 200, `{"id":1}`)
	expect(call(t, r, "GET", "/subjects/s/versions", ""), 200, `[1]`)
	expect(call(t, r, "GET", "/subjects/s/versions/latest", ""), 200, `"subject":"s","version":1,"id":1`)
	expect(call(t, r, "GET", "/subjects/s/versions/-1", ""), 200, `"version":1`)
	expect(call(t, r, "GET", "/subjects/s/versions/1/schema", ""), 200, v1)
	expect(call(t, r, "GET", "/schemas/ids/1", ""), 200, `"schema":`)
	expect(call(t, r, "GET", "/schemas/ids/1/schema", ""), 200, v1)
	expect(call(t, r, "GET", "/schemas/ids/1/subjects", ""), 200, `["s"]`)
	expect(call(t, r, "GET", "/schemas/ids/2", ""), 404, `"error_code":40403`)
	expect(call(t, r, "GET", "/subjects/x/versions/latest", ""), 404, `"error_code":40401`)
	expect(call(t, r, "GET", "/subjects/s/versions/2", ""), 404, `"error_code":40402`)
	expect(call(t, r, "GET", "/subjects/s/versions/abc", ""), 422, `"error_code":42202`)
	expect(call(t, r, "POST", "/subjects/s", schemaBody(v1)), 200, `"id":1`)
	expect(call(t, r, "POST", "/subjects/s", schemaBody(v2)), 404, `"error_code":40403`)
	expect(call(t, r, "POST", "/subjects/x", schemaBody(v1)), 404, `"error_code":40401`)
	expect(call(t, r, "POST", "/subjects/s/versions", schemaBody(`{"type":"nosuch"}`)), 422, `"error_code":42201`)
	expect(call(t, r, "POST", "/subjects/s/versions", `{"schema":"{}","schemaType":"PROTOBUF"}`), 422, `"error_code":42201`)
	expect(call(t, r, "GET", "/schemas/types", ""), 200, `["AVRO"]`)
	expect(call(t, r, "GET", "/config", ""), 200, `{"compatibilityLevel":"BACKWARD"}`)
	expect(call(t, r, "GET", "/config/s", ""), 404, `"error_code":40408`)
	expect(call(t, r, "GET", "/config/s?defaultToGlobal=true", ""), 200, `BACKWARD`)
	expect(call(t, r, "PUT", "/config/s", `{"compatibility":"FULL"}`), 200, `{"compatibility":"FULL"}`)
	expect(call(t, r, "PUT", "/config/s", `{"compatibility":"MOSTLY"}`), 422, `"error_code":42203`)
	expect(call(t, r, "POST", "/compatibility/subjects/s/versions/latest?verbose=true", schemaBody(v2)), 200, `"is_compatible":true`)
	expect(call(t, r, "POST", "/compatibility/subjects/nope/versions/latest", schemaBody(v2)), 200, `"is_compatible":true`)
	expect(call(t, r, "POST", "/compatibility/subjects/nope/versions/1", schemaBody(v2)), 404, `"error_code":40401`)
	expect(call(t, r, "POST", "/compatibility/subjects/s/versions/9", schemaBody(v2)), 404, `"error_code":40402`)
	expect(call(t, r, "GET", "/no/such/path", ""), 404, `"error_code":404`)
	expect(call(t, r, "DELETE", "/subjects/s", ""), 200, `[1]`)
	expect(call(t, r, "GET", "/subjects/s/versions", ""), 404, `"error_code":40401`)
	expect(call(t, r, "GET", "/schemas/ids/1", ""), 200, `"schema":`)
}

func TestTransitiveCompatibility(t *testing.T) {
	r := avrotest.NewRegistry(t, avrotest.WithCompatibility("FORWARD_TRANSITIVE"))
	for _, s := range []string{v1, v2} {
		if _, err := r.Register("s", s); err != nil {
			t.Fatal(err)
		}
	}
	// v1 cannot read v3's data (a has no default): FORWARD_TRANSITIVE refuses v3.
	if _, err := r.Register("s", v3); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("Register(v3) err = %v; want a 409", err)
	}
	got := call(t, r, "POST", "/compatibility/subjects/s/versions?verbose=true", schemaBody(v3))
	if !strings.Contains(got.body, `"is_compatible":false`) || !strings.Contains(got.body, "fields/a") {
		t.Fatalf("compatibility against all versions: %s", got.body)
	}
	// Against the latest version (v2) alone it is refused too: v2's a has no default either.
	got = call(t, r, "POST", "/compatibility/subjects/s/versions/latest", schemaBody(v3))
	if !strings.Contains(got.body, `"is_compatible":false`) {
		t.Fatalf("compatibility against latest: %s", got.body)
	}
	if _, err := r.Register("t", v3); err != nil {
		t.Fatal(err)
	}
}

func TestUnavailableAndAuth(t *testing.T) {
	r := avrotest.NewRegistry(t, avrotest.WithBasicAuth("u", "p"))
	if got := call(t, r, "GET", "/subjects", ""); got.status != 401 || !strings.Contains(got.body, `"error_code":401`) {
		t.Fatalf("without credentials: %+v", got)
	}
	r.SetUnavailable(true)
	if got := call(t, r, "GET", "/subjects", ""); got.status != 500 || !strings.Contains(got.body, `"error_code":50001`) {
		t.Fatalf("unavailable: %+v", got)
	}
}
