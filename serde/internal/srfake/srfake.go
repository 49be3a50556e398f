// Package srfake is an in-process Schema Registry for the unit tests of the Protobuf and
// JSON Schema serdes: the part of the Confluent REST API the serdes use (register, look up,
// schema by id, subject versions and latest), served over HTTP on an httptest server, for
// every schema type. Ids are global, start at 1 and are shared by equal schemas (same type,
// text and references); versions count from 1 per subject; registering a schema the
// subject has returns its id. It does not check compatibility nor parse schemas, except
// that text which Invalid rejects gets error 42201.
package srfake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
)

// Registry is the fake registry; create it with New.
type Registry struct {
	srv *httptest.Server

	// Invalid, when set, is asked about every schema registered; a non-empty answer is
	// returned as error 42201 with that message.
	Invalid func(srapi.Schema) string

	mu       sync.Mutex
	schemas  []srapi.Schema   // index = id-1
	subjects map[string][]int // subject -> ids by version-1
	requests int
}

// New starts a Registry and closes it when tb's test ends.
func New(tb testing.TB) *Registry {
	r := &Registry{subjects: map[string][]int{}}
	r.srv = httptest.NewServer(r)
	tb.Cleanup(r.srv.Close)
	return r
}

// URL is the registry's base URL.
func (r *Registry) URL() string { return r.srv.URL }

// Client returns a new client of the registry.
func (r *Registry) Client() *registry.Client {
	c, err := registry.New(registry.Config{URLs: []string{r.srv.URL}})
	if err != nil {
		panic(err)
	}
	return c
}

// Requests returns the number of requests served.
func (r *Registry) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Register registers s under subject directly (no HTTP) and returns its id.
func (r *Registry) Register(subject string, s srapi.Schema) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, _ := r.register(subject, s)
	return id
}

func key(s srapi.Schema) string {
	t := s.SchemaType
	if t == "" {
		t = "AVRO"
	}
	refs, _ := json.Marshal(s.References)
	return t + "\x00" + s.Schema + "\x00" + string(refs)
}

func (r *Registry) idOf(s srapi.Schema) int {
	for i, x := range r.schemas {
		if key(x) == key(s) {
			return i + 1
		}
	}
	return 0
}

func (r *Registry) register(subject string, s srapi.Schema) (id int, version int) {
	id = r.idOf(s)
	if id == 0 {
		s.ID, s.Subject, s.Version = 0, "", 0
		r.schemas = append(r.schemas, s)
		id = len(r.schemas)
	}
	for v, x := range r.subjects[subject] {
		if x == id {
			return id, v + 1
		}
	}
	r.subjects[subject] = append(r.subjects[subject], id)
	return id, len(r.subjects[subject])
}

type apiErr struct {
	status int
	Code   int    `json:"error_code"`
	Msg    string `json:"message"`
}

func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests++
	out, e := r.route(req)
	r.mu.Unlock()
	w.Header().Set("Content-Type", srapi.ContentType)
	if e != nil {
		w.WriteHeader(e.status)
		_ = json.NewEncoder(w).Encode(e)
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (r *Registry) schemaOut(subject string, version int) srapi.Schema {
	id := r.subjects[subject][version-1]
	s := r.schemas[id-1]
	s.ID, s.Subject, s.Version = id, subject, version
	if s.SchemaType == "" {
		s.SchemaType = "AVRO"
	}
	return s
}

func (r *Registry) route(req *http.Request) (any, *apiErr) {
	segs := strings.Split(strings.Trim(req.URL.EscapedPath(), "/"), "/")
	for i, s := range segs {
		segs[i], _ = url.PathUnescape(s)
	}
	notFound := func(code int, msg string) *apiErr { return &apiErr{404, code, msg} }
	switch {
	case req.Method == http.MethodGet && len(segs) == 3 && segs[0] == "schemas" && segs[1] == "ids":
		id, _ := strconv.Atoi(segs[2])
		if id < 1 || id > len(r.schemas) {
			return nil, notFound(40403, "Schema "+segs[2]+" not found")
		}
		s := r.schemas[id-1]
		return srapi.Schema{Schema: s.Schema, SchemaType: s.SchemaType, References: s.References}, nil
	case len(segs) >= 2 && segs[0] == "subjects":
		subject := segs[1]
		if req.Method == http.MethodPost {
			var s srapi.Schema
			if err := json.NewDecoder(req.Body).Decode(&s); err != nil {
				return nil, &apiErr{422, 42201, err.Error()}
			}
			if len(segs) == 3 && segs[2] == "versions" {
				if r.Invalid != nil {
					if msg := r.Invalid(s); msg != "" {
						return nil, &apiErr{422, 42201, msg}
					}
				}
				id, _ := r.register(subject, s)
				return map[string]int{"id": id}, nil
			}
			if len(r.subjects[subject]) == 0 {
				return nil, notFound(40401, "Subject '"+subject+"' not found.")
			}
			id := r.idOf(s)
			for v, x := range r.subjects[subject] {
				if x == id {
					return r.schemaOut(subject, v+1), nil
				}
			}
			return nil, notFound(40403, "Schema not found")
		}
		versions := r.subjects[subject]
		if len(versions) == 0 {
			return nil, notFound(40401, "Subject '"+subject+"' not found.")
		}
		if len(segs) == 4 && segs[2] == "versions" {
			if segs[3] == "latest" {
				return r.schemaOut(subject, len(versions)), nil
			}
			v, err := strconv.Atoi(segs[3])
			if err != nil || v < 1 {
				return nil, &apiErr{422, 42202, "invalid version"}
			}
			if v > len(versions) {
				return nil, notFound(40402, "Version "+segs[3]+" not found.")
			}
			return r.schemaOut(subject, v), nil
		}
	}
	return nil, &apiErr{404, 404, "no route for " + req.Method + " " + req.URL.Path}
}
