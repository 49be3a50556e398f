package registry_test

import (
	"context"
	"errors"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/serde/avro/internal/fakesr"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
)

const (
	userV1 = `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"name","type":"string"}]}`
	// userV2 adds a field with a default: BACKWARD compatible with v1.
	userV2 = `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"name","type":"string"},{"name":"age","type":"int","default":0}]}`
	// userBad adds a field without a default: not BACKWARD compatible with v1.
	userBad = `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"name","type":"string"},{"name":"email","type":"string"}]}`
)

var ctx = context.Background()

func asError(t *testing.T, err error) *registry.Error {
	t.Helper()
	var re *registry.Error
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not a *registry.Error", err, err)
	}
	return re
}

func TestRegisterLookUpFetch(t *testing.T) {
	r := fakesr.NewRegistry(t)
	c := r.Client()

	id, err := srapi.Of(c).Register(ctx, "users-value", srapi.Schema{Schema: userV1}, false)
	if err != nil || id != 1 {
		t.Fatalf("Register = %d, %v; want 1", id, err)
	}
	// Same schema under another subject: same global id (Confluent shares ids by content).
	id2, err := srapi.Of(c).Register(ctx, "other-value", srapi.Schema{Schema: userV1}, false)
	if err != nil || id2 != 1 {
		t.Fatalf("Register under other subject = %d, %v; want 1", id2, err)
	}
	id3, err := srapi.Of(c).Register(ctx, "users-value", srapi.Schema{Schema: userV2}, false)
	if err != nil || id3 != 2 {
		t.Fatalf("Register v2 = %d, %v; want 2", id3, err)
	}

	got, err := srapi.Of(c).LookUp(ctx, "users-value", srapi.Schema{Schema: userV1})
	if err != nil || got.ID != 1 || got.Version != 1 || got.Subject != "users-value" {
		t.Fatalf("LookUp = %+v, %v; want id 1 version 1", got, err)
	}
	byID, err := srapi.Of(c).SchemaByID(ctx, 2)
	if err != nil || byID.Schema != userV2 || byID.ID != 2 {
		t.Fatalf("SchemaByID(2) = %+v, %v", byID, err)
	}
	latest, err := srapi.Of(c).Latest(ctx, "users-value")
	if err != nil || latest.ID != 2 || latest.Version != 2 || latest.Schema != userV2 {
		t.Fatalf("Latest = %+v, %v; want id 2 version 2", latest, err)
	}
	v1, err := srapi.Of(c).Version(ctx, "users-value", 1)
	if err != nil || v1.ID != 1 || v1.Version != 1 {
		t.Fatalf("Version(1) = %+v, %v", v1, err)
	}
	versions, err := srapi.Of(c).Versions(ctx, "users-value")
	if err != nil || len(versions) != 2 || versions[0] != 1 || versions[1] != 2 {
		t.Fatalf("Versions = %v, %v; want [1 2]", versions, err)
	}
	subjects, err := srapi.Of(c).Subjects(ctx)
	if err != nil || strings.Join(subjects, ",") != "other-value,users-value" {
		t.Fatalf("Subjects = %v, %v", subjects, err)
	}
}

func TestCaching(t *testing.T) {
	r := fakesr.NewRegistry(t)
	c := r.Client()
	if _, err := srapi.Of(c).Register(ctx, "s", srapi.Schema{Schema: userV1}, false); err != nil {
		t.Fatal(err)
	}
	n := r.Requests()
	for i := 0; i < 3; i++ {
		if _, err := srapi.Of(c).Register(ctx, "s", srapi.Schema{Schema: userV1}, false); err != nil {
			t.Fatal(err)
		}
		// The id is known from the registration: no request.
		if _, err := srapi.Of(c).SchemaByID(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.Requests(); got != n {
		t.Fatalf("cached calls sent %d requests", got-n)
	}
	if _, err := srapi.Of(c).Latest(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := srapi.Of(c).Latest(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if got := r.Requests(); got != n+1 {
		t.Fatalf("two Latest calls sent %d requests, want 1 (cached forever by default)", got-n)
	}

	// LatestCacheTTL < 0: never cached, so a new version is seen at once.
	nc, err := registry.New(registry.Config{URLs: []string{r.URL()}, LatestCacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srapi.Of(nc).Latest(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register("s", userV2); err != nil {
		t.Fatal(err)
	}
	l, err := srapi.Of(nc).Latest(ctx, "s")
	if err != nil || l.Version != 2 {
		t.Fatalf("uncached Latest = %+v, %v; want version 2", l, err)
	}
}

func TestErrors(t *testing.T) {
	r := fakesr.NewRegistry(t)
	c := r.Client()
	if _, err := srapi.Of(c).Register(ctx, "users-value", srapi.Schema{Schema: userV1}, false); err != nil {
		t.Fatal(err)
	}

	t.Run("unknown id", func(t *testing.T) {
		_, err := srapi.Of(c).SchemaByID(ctx, 42)
		if !errors.Is(err, registry.ErrNotFound) {
			t.Fatalf("err = %v; want ErrNotFound", err)
		}
		re := asError(t, err)
		if !strings.Contains(err.Error(), "id 42:") || re.Status != 404 || re.Code != 40403 {
			t.Fatalf("error = %+v; want id 42, 404, 40403", re)
		}
		if !strings.Contains(err.Error(), "id 42") {
			t.Fatalf("message %q does not name the id", err)
		}
	})
	t.Run("unknown subject", func(t *testing.T) {
		_, err := srapi.Of(c).Latest(ctx, "nope-value")
		if !errors.Is(err, registry.ErrNotFound) || asError(t, err).Code != 40401 {
			t.Fatalf("err = %v; want ErrNotFound 40401", err)
		}
		if !strings.Contains(err.Error(), `subject "nope-value"`) {
			t.Fatalf("message %q does not name the subject", err)
		}
		_, err = srapi.Of(c).LookUp(ctx, "nope-value", srapi.Schema{Schema: userV1})
		if !errors.Is(err, registry.ErrNotFound) {
			t.Fatalf("LookUp err = %v; want ErrNotFound", err)
		}
	})
	t.Run("schema not under subject", func(t *testing.T) {
		_, err := srapi.Of(c).LookUp(ctx, "users-value", srapi.Schema{Schema: userV2})
		if !errors.Is(err, registry.ErrNotFound) || asError(t, err).Code != 40403 {
			t.Fatalf("err = %v; want ErrNotFound 40403", err)
		}
	})
	t.Run("unknown version", func(t *testing.T) {
		_, err := srapi.Of(c).Version(ctx, "users-value", 7)
		if !errors.Is(err, registry.ErrNotFound) || asError(t, err).Code != 40402 {
			t.Fatalf("err = %v; want ErrNotFound 40402", err)
		}
		_, err = srapi.Of(c).Version(ctx, "users-value", 0)
		if !errors.Is(err, registry.ErrRejected) || asError(t, err).Code != 42202 {
			t.Fatalf("err = %v; want ErrRejected 42202", err)
		}
	})
	t.Run("incompatible", func(t *testing.T) {
		_, err := srapi.Of(c).Register(ctx, "users-value", srapi.Schema{Schema: userBad}, false)
		if !errors.Is(err, registry.ErrRejected) {
			t.Fatalf("err = %v; want ErrRejected", err)
		}
		re := asError(t, err)
		if re.Status != 409 || re.Code != 409 || !strings.Contains(err.Error(), `subject "users-value"`) {
			t.Fatalf("error = %+v; want 409/409 on users-value", re)
		}
		ok, msgs, err := srapi.Of(c).TestCompatibility(ctx, "users-value", "latest", srapi.Schema{Schema: userBad})
		if err != nil || ok || len(msgs) == 0 {
			t.Fatalf("TestCompatibility(bad) = %v %v %v; want false with messages", ok, msgs, err)
		}
		ok, _, err = srapi.Of(c).TestCompatibility(ctx, "users-value", "latest", srapi.Schema{Schema: userV2})
		if err != nil || !ok {
			t.Fatalf("TestCompatibility(v2) = %v %v; want true", ok, err)
		}
		// With NONE the same schema registers.
		if err := srapi.Of(c).SetCompatibility(ctx, "users-value", "NONE"); err != nil {
			t.Fatal(err)
		}
		if id, err := srapi.Of(c).Register(ctx, "users-value", srapi.Schema{Schema: userBad}, false); err != nil || id != 2 {
			t.Fatalf("Register under NONE = %d, %v; want 2", id, err)
		}
		err = srapi.Of(c).SetCompatibility(ctx, "users-value", "SIDEWAYS")
		if !errors.Is(err, registry.ErrRejected) {
			t.Fatalf("err = %v; want ErrRejected", err)
		}
	})
	t.Run("invalid schema", func(t *testing.T) {
		_, err := srapi.Of(c).Register(ctx, "x-value", srapi.Schema{Schema: `{"type":"record","name":"X","fields":[{"name":"a","type":"nosuchtype"}]}`}, false)
		if !errors.Is(err, registry.ErrRejected) || asError(t, err).Code != 42201 {
			t.Fatalf("err = %v; want ErrRejected 42201", err)
		}
	})
	t.Run("server error", func(t *testing.T) {
		r.SetUnavailable(true)
		defer r.SetUnavailable(false)
		_, err := srapi.Of(c).Latest(ctx, "fresh-value")
		if !errors.Is(err, registry.ErrUnavailable) || asError(t, err).Code != 50001 {
			t.Fatalf("err = %v; want ErrUnavailable 50001", err)
		}
	})
	t.Run("registry down", func(t *testing.T) {
		down := fakesr.Start()
		url := down.URL()
		down.Close()
		dc, err := registry.New(registry.Config{URLs: []string{url}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = srapi.Of(dc).SchemaByID(ctx, 3)
		if !errors.Is(err, registry.ErrUnavailable) {
			t.Fatalf("err = %v; want ErrUnavailable", err)
		}
		var opErr *net.OpError
		if !errors.As(err, &opErr) {
			t.Fatalf("err = %v; want the *net.OpError as cause", err)
		}
		if re := asError(t, err); re.Status != 0 || !strings.Contains(err.Error(), "id 3:") {
			t.Fatalf("error = %+v; want no status and id 3", re)
		}
	})
}

func TestFailoverToSecondURL(t *testing.T) {
	r := fakesr.NewRegistry(t)
	down := fakesr.Start()
	deadURL := down.URL()
	down.Close()
	c, err := registry.New(registry.Config{URLs: []string{deadURL, r.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := srapi.Of(c).Register(ctx, "s", srapi.Schema{Schema: userV1}, false); err != nil || id != 1 {
		t.Fatalf("Register = %d, %v", id, err)
	}
}

func TestTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	c, err := registry.New(registry.Config{URLs: []string{srv.URL}, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = srapi.Of(c).SchemaByID(ctx, 1)
	if !errors.Is(err, registry.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want ErrUnavailable caused by a deadline", err)
	}
}

func TestBasicAuthAndTLS(t *testing.T) {
	r := fakesr.NewRegistry(t, fakesr.WithBasicAuth("alice", "s3cret"), fakesr.WithTLS())
	if !strings.HasPrefix(r.URL(), "https://") {
		t.Fatalf("URL %s is not https", r.URL())
	}
	c := r.Client()
	if id, err := srapi.Of(c).Register(ctx, "s", srapi.Schema{Schema: userV1}, false); err != nil || id != 1 {
		t.Fatalf("Register with credentials = %d, %v", id, err)
	}

	// Credentials in the URL work too.
	u := strings.Replace(r.URL(), "https://", "https://alice:s3cret@", 1)
	uc, err := registry.New(registry.Config{URLs: []string{u}, TLSConfig: r.Server().Client().Transport.(*http.Transport).TLSClientConfig})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srapi.Of(uc).SchemaByID(ctx, 1); err != nil {
		t.Fatalf("SchemaByID with URL credentials: %v", err)
	}

	wrong, err := registry.New(registry.Config{URLs: []string{r.URL()}, BasicAuthUserInfo: "alice:wrong",
		TLSConfig: r.Server().Client().Transport.(*http.Transport).TLSClientConfig})
	if err != nil {
		t.Fatal(err)
	}
	_, err = srapi.Of(wrong).SchemaByID(ctx, 1)
	if !errors.Is(err, registry.ErrUnauthorized) || asError(t, err).Status != 401 {
		t.Fatalf("err = %v; want ErrUnauthorized 401", err)
	}

	// Without the test CA the TLS handshake fails: unavailable, with the cause.
	untrusted, err := registry.New(registry.Config{URLs: []string{r.URL()}, BasicAuthUserInfo: "alice:s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = srapi.Of(untrusted).SchemaByID(ctx, 1)
	if !errors.Is(err, registry.ErrUnavailable) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("err = %v; want ErrUnavailable from a certificate error", err)
	}
}

func TestSubjectEscaping(t *testing.T) {
	r := fakesr.NewRegistry(t)
	c := r.Client()
	subject := "ns/with space:and-colon-value"
	if _, err := srapi.Of(c).Register(ctx, subject, srapi.Schema{Schema: userV1}, false); err != nil {
		t.Fatal(err)
	}
	got, err := srapi.Of(c).Latest(ctx, subject)
	if err != nil || got.Subject != subject {
		t.Fatalf("Latest = %+v, %v", got, err)
	}
}

func TestDeleteSubject(t *testing.T) {
	r := fakesr.NewRegistry(t)
	c := r.Client()
	if _, err := srapi.Of(c).Register(ctx, "s", srapi.Schema{Schema: userV1}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := srapi.Of(c).DeleteSubject(ctx, "s", true); asError(t, err).Code != 40405 {
		t.Fatalf("hard delete before soft delete: %v; want 40405", err)
	}
	vs, err := srapi.Of(c).DeleteSubject(ctx, "s", false)
	if err != nil || len(vs) != 1 || vs[0] != 1 {
		t.Fatalf("DeleteSubject = %v, %v", vs, err)
	}
	if _, err := srapi.Of(c).Latest(ctx, "s"); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("Latest after delete: %v; want ErrNotFound", err)
	}
	// Ids stay valid after a subject is deleted.
	if _, err := srapi.Of(c).SchemaByID(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

func TestConfigFromProperties(t *testing.T) {
	cfg, err := registry.ConfigFromProperties(map[string]string{
		"schema.registry.url":           "http://a:8081, http://b:8081",
		"basic.auth.credentials.source": "USER_INFO",
		"basic.auth.user.info":          "u:p",
		"latest.cache.ttl.sec":          "30",
		"http.read.timeout.ms":          "1500",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.URLs) != 2 || cfg.URLs[1] != "http://b:8081" || cfg.BasicAuthUserInfo != "u:p" ||
		cfg.LatestCacheTTL != 30*time.Second || cfg.Timeout != 1500*time.Millisecond {
		t.Fatalf("cfg = %+v", cfg)
	}
	if _, err := registry.ConfigFromProperties(map[string]string{}); err == nil {
		t.Fatal("no error without schema.registry.url")
	}
}
