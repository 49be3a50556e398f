// Package fakesr is the in-process Schema Registry behind package avrotest, with what only
// the library's own tests use besides (Requests, Server, WithTLS, NewHandler). It speaks the
// Confluent REST API over HTTP (on an httptest server).
//
// It keeps what a serde relies on faithful to the Confluent server: global schema ids that
// start at 1 and are shared by every subject that registers the same schema, versions per
// subject starting at 1, registering an existing schema returns its id without a new
// version, compatibility checks under the subject's level (default BACKWARD) with Avro's
// schema-resolution rules, and the documented status codes and error bodies
// ({"error_code": 40401, "message": ...}): 40401 subject not found, 40402 version not found,
// 40403 schema not found, 409 incompatible schema, 42201 invalid schema, 42202 invalid
// version, 42203 invalid compatibility level, 40408 no subject-level compatibility, 401
// unauthorized, 50001 (HTTP 500) while SetUnavailable is on. Only Avro schemas are
// accepted; schema references are stored but not resolved.
package fakesr

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kstreams-go/kstreams/serde/avro/internal/schema"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
)

// Registry is an in-process Schema Registry. Create it with NewRegistry (tied to a test) or
// Start; it is safe for concurrent use. Registry is also an http.Handler, so it can be
// mounted on any server.
type Registry struct {
	srv *httptest.Server

	user, password string
	tls            bool

	mu          sync.Mutex
	schemas     []stored       // index = id-1
	byCanonical map[string]int // canonical text -> id
	subjects    map[string]*subject
	global      string
	unavailable bool
	requests    int
}

type stored struct {
	text string
	refs []srapi.Reference
	typ  *schema.Type
}

type subject struct {
	versions []version
	compat   string // "" = global
}

type version struct {
	number  int
	id      int
	deleted bool
}

// Option configures a Registry.
type Option func(*Registry)

// WithBasicAuth makes the registry require HTTP basic authentication with the given
// credentials; other requests get HTTP 401 with error code 401.
func WithBasicAuth(user, password string) Option {
	return func(r *Registry) { r.user, r.password = user, password }
}

// WithTLS serves HTTPS with httptest's self-signed certificate; Registry.Client trusts it,
// other clients can take the certificate pool from Registry.Server().Client().
func WithTLS() Option { return func(r *Registry) { r.tls = true } }

// WithCompatibility sets the global compatibility level (default BACKWARD, as Confluent's).
func WithCompatibility(level string) Option { return func(r *Registry) { r.global = level } }

// NewRegistry starts a Registry on a loopback port and closes it when tb's test ends.
func NewRegistry(tb testing.TB, opts ...Option) *Registry {
	tb.Helper()
	r := Start(opts...)
	tb.Cleanup(r.Close)
	return r
}

// Start starts a Registry on a loopback port; call Close when done.
func Start(opts ...Option) *Registry {
	r := NewHandler(opts...)
	if r.tls {
		r.srv = httptest.NewTLSServer(r)
	} else {
		r.srv = httptest.NewServer(r)
	}
	return r
}

// NewHandler returns a Registry that is not listening anywhere, to be used as an
// http.Handler; URL, Server and Client need Start or NewRegistry.
func NewHandler(opts ...Option) *Registry {
	r := &Registry{byCanonical: map[string]int{}, subjects: map[string]*subject{}, global: schema.CompatBackward}
	for _, o := range opts {
		o(r)
	}
	return r
}

// URL returns the registry's base URL, e.g. "http://127.0.0.1:41234".
func (r *Registry) URL() string { return r.srv.URL }

// Server returns the underlying httptest server.
func (r *Registry) Server() *httptest.Server { return r.srv }

// Close stops the server. Requests afterwards fail with connection refused, as against a
// registry that is down.
func (r *Registry) Close() { r.srv.Close() }

// Client returns a new registry.Client for this registry, with the configured credentials
// and, under WithTLS, a transport that trusts the test certificate. It panics only if the
// registry was not started.
func (r *Registry) Client() *registry.Client {
	cfg := registry.Config{URLs: []string{r.URL()}}
	if r.user != "" {
		cfg.BasicAuthUserInfo = r.user + ":" + r.password
	}
	if r.tls {
		cfg.HTTPClient = r.srv.Client()
	}
	c, err := registry.New(cfg)
	if err != nil {
		panic("fakesr: " + err.Error())
	}
	return c
}

// SetUnavailable makes every request fail with HTTP 500 and error code 50001 (Confluent's
// "error in the backend data store") until it is turned off again.
func (r *Registry) SetUnavailable(on bool) {
	r.mu.Lock()
	r.unavailable = on
	r.mu.Unlock()
}

// Requests returns the number of HTTP requests served so far (to check client caching).
func (r *Registry) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Register registers an Avro schema under subject directly (as POST
// /subjects/{subject}/versions would) and returns its id, or the registry error.
func (r *Registry) Register(subjectName, schemaText string) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, aerr := r.register(subjectName, schemaText, nil)
	if aerr != nil {
		return 0, fmt.Errorf("fakesr: register under subject %q: error code %d: %s", subjectName, aerr.Code, aerr.Message)
	}
	return id, nil
}

type apiError struct {
	Status  int    `json:"-"`
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func errSubjectNotFound(s string) *apiError {
	return &apiError{404, 40401, fmt.Sprintf("Subject '%s' not found.", s)}
}

func errVersionNotFound(v string) *apiError {
	return &apiError{404, 40402, fmt.Sprintf("Version %s not found.", v)}
}

func canonical(text string) (string, *schema.Type, *apiError) {
	t, err := schema.Parse(text)
	if err != nil {
		return "", nil, &apiError{422, 42201, "Invalid schema: " + err.Error()}
	}
	var v any
	_ = json.Unmarshal([]byte(text), &v)
	b, _ := json.Marshal(v) // sorted keys, no spaces: equal for equal schemas
	return string(b), t, nil
}

func (r *Registry) level(s *subject) string {
	if s != nil && s.compat != "" {
		return s.compat
	}
	return r.global
}

func (r *Registry) live(s *subject) []version {
	if s == nil {
		return nil
	}
	var out []version
	for _, v := range s.versions {
		if !v.deleted {
			out = append(out, v)
		}
	}
	return out
}

func (r *Registry) register(name, text string, refs []srapi.Reference) (int, *apiError) {
	canon, typ, aerr := canonical(text)
	if aerr != nil {
		return 0, aerr
	}
	s := r.subjects[name]
	live := r.live(s)
	if id, ok := r.byCanonical[canon]; ok {
		for _, v := range live {
			if v.id == id {
				return id, nil
			}
		}
	}
	var existing []*schema.Type
	for _, v := range live {
		existing = append(existing, r.schemas[v.id-1].typ)
	}
	if msgs := schema.Compatible(r.level(s), typ, existing); len(msgs) > 0 {
		return 0, &apiError{409, 409, fmt.Sprintf(
			"Schema being registered is incompatible with an earlier schema for subject \"%s\", details: [%s]",
			name, strings.Join(msgs, ", "))}
	}
	id, ok := r.byCanonical[canon]
	if !ok {
		r.schemas = append(r.schemas, stored{text: text, refs: refs, typ: typ})
		id = len(r.schemas)
		r.byCanonical[canon] = id
	}
	if s == nil {
		s = &subject{}
		r.subjects[name] = s
	}
	next := 1
	if n := len(s.versions); n > 0 {
		next = s.versions[n-1].number + 1
	}
	s.versions = append(s.versions, version{number: next, id: id})
	return id, nil
}

// find returns the live version v ("latest", "-1" or a number) of subject.
func (r *Registry) find(name, v string) (version, *apiError) {
	n := -1
	if v != "latest" {
		var err error
		n, err = strconv.Atoi(v)
		if err != nil || n == 0 || n < -1 {
			return version{}, &apiError{422, 42202,
				fmt.Sprintf("The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", v)}
		}
	}
	live := r.live(r.subjects[name])
	if len(live) == 0 {
		return version{}, errSubjectNotFound(name)
	}
	if n == -1 {
		return live[len(live)-1], nil
	}
	for _, x := range live {
		if x.number == n {
			return x, nil
		}
	}
	return version{}, errVersionNotFound(v)
}

type schemaJSON struct {
	Subject    string            `json:"subject,omitempty"`
	Version    int               `json:"version,omitempty"`
	ID         int               `json:"id,omitempty"`
	SchemaType string            `json:"schemaType,omitempty"`
	References []srapi.Reference `json:"references,omitempty"`
	Schema     string            `json:"schema"`
}

type request struct {
	Schema     string            `json:"schema"`
	SchemaType string            `json:"schemaType"`
	References []srapi.Reference `json:"references"`
}

func decodeRequest(req *http.Request) (request, *apiError) {
	var body request
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
		return body, &apiError{422, 422, "Unrecognized field or malformed JSON: " + err.Error()}
	}
	if body.SchemaType != "" && body.SchemaType != "AVRO" {
		return body, &apiError{422, 42201, "Invalid schema: schema type " + body.SchemaType + " is not supported by this registry double"}
	}
	if body.Schema == "" {
		return body, &apiError{422, 42201, "Empty schema"}
	}
	return body, nil
}

// ServeHTTP implements the Confluent Schema Registry REST API.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	out, aerr := r.route(req)
	w.Header().Set("Content-Type", srapi.ContentType)
	if aerr != nil {
		w.WriteHeader(aerr.Status)
		_ = json.NewEncoder(w).Encode(aerr)
		return
	}
	var buf bytes.Buffer
	if s, ok := out.(rawString); ok {
		buf.WriteString(string(s))
	} else {
		_ = json.NewEncoder(&buf).Encode(out)
	}
	_, _ = w.Write(buf.Bytes())
}

type rawString string

func (r *Registry) route(req *http.Request) (any, *apiError) {
	if r.unavailable {
		return nil, &apiError{500, 50001, "Error in the backend data store"}
	}
	if r.user != "" {
		u, p, ok := req.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(r.user)) != 1 ||
			subtle.ConstantTimeCompare([]byte(p), []byte(r.password)) != 1 {
			return nil, &apiError{401, 401, "Unauthorized"}
		}
	}
	segs := strings.Split(strings.Trim(req.URL.EscapedPath(), "/"), "/")
	for i, s := range segs {
		if u, err := unescape(s); err == nil {
			segs[i] = u
		}
	}
	q := req.URL.Query()
	m := req.Method
	switch {
	case m == http.MethodGet && len(segs) == 1 && segs[0] == "subjects":
		names := []string{}
		for n, s := range r.subjects {
			if len(r.live(s)) > 0 {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		return names, nil
	case m == http.MethodGet && len(segs) == 2 && segs[0] == "schemas" && segs[1] == "types":
		return []string{"AVRO"}, nil
	case m == http.MethodGet && len(segs) >= 3 && segs[0] == "schemas" && segs[1] == "ids":
		id, err := strconv.Atoi(segs[2])
		if err != nil || id < 1 || id > len(r.schemas) {
			return nil, &apiError{404, 40403, fmt.Sprintf("Schema %s not found", segs[2])}
		}
		st := r.schemas[id-1]
		if len(segs) == 4 && segs[3] == "schema" {
			return rawString(st.text), nil
		}
		if len(segs) == 4 && segs[3] == "subjects" {
			var names []string
			for n, s := range r.subjects {
				for _, v := range r.live(s) {
					if v.id == id && !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
			sort.Strings(names)
			return names, nil
		}
		return schemaJSON{Schema: st.text, References: st.refs}, nil
	case len(segs) >= 2 && segs[0] == "subjects":
		return r.subjectRoute(m, segs[1], segs[2:], req, q)
	case m == http.MethodPost && len(segs) >= 4 && segs[0] == "compatibility" && segs[1] == "subjects" && segs[3] == "versions":
		body, aerr := decodeRequest(req)
		if aerr != nil {
			return nil, aerr
		}
		_, typ, aerr := canonical(body.Schema)
		if aerr != nil {
			return nil, aerr
		}
		name := segs[2]
		s := r.subjects[name]
		var against []*schema.Type
		level := r.level(s)
		if len(segs) == 5 {
			v, aerr := r.find(name, segs[4])
			if aerr != nil {
				if aerr.Code == 40401 && segs[4] == "latest" {
					return map[string]any{"is_compatible": true, "messages": []string{}}, nil
				}
				return nil, aerr
			}
			against = []*schema.Type{r.schemas[v.id-1].typ}
			level = strings.TrimSuffix(level, "_TRANSITIVE")
		} else {
			for _, v := range r.live(s) {
				against = append(against, r.schemas[v.id-1].typ)
			}
		}
		msgs := schema.Compatible(level, typ, against)
		res := map[string]any{"is_compatible": len(msgs) == 0}
		if q.Get("verbose") == "true" {
			if msgs == nil {
				msgs = []string{}
			}
			res["messages"] = msgs
		}
		return res, nil
	case len(segs) <= 2 && segs[0] == "config":
		var s *subject
		name := ""
		if len(segs) == 2 {
			name = segs[1]
			s = r.subjects[name]
		}
		switch m {
		case http.MethodGet:
			if name == "" {
				return map[string]string{"compatibilityLevel": r.global}, nil
			}
			if s == nil || s.compat == "" {
				if q.Get("defaultToGlobal") == "true" {
					return map[string]string{"compatibilityLevel": r.global}, nil
				}
				return nil, &apiError{404, 40408, fmt.Sprintf("Subject '%s' does not have subject-level compatibility configured", name)}
			}
			return map[string]string{"compatibilityLevel": s.compat}, nil
		case http.MethodPut:
			var body struct {
				Compatibility string `json:"compatibility"`
			}
			if err := json.NewDecoder(req.Body).Decode(&body); err != nil || !schema.ValidLevel(body.Compatibility) {
				return nil, &apiError{422, 42203, "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive"}
			}
			if name == "" {
				r.global = body.Compatibility
			} else {
				if s == nil {
					s = &subject{}
					r.subjects[name] = s
				}
				s.compat = body.Compatibility
			}
			return body, nil
		}
	}
	return nil, &apiError{404, 404, "HTTP 404 Not Found"}
}

func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", err
			}
			b.WriteByte(byte(n))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), nil
}

func (r *Registry) subjectRoute(m, name string, rest []string, req *http.Request, q map[string][]string) (any, *apiError) {
	s := r.subjects[name]
	switch {
	case m == http.MethodPost && len(rest) == 0: // look up
		body, aerr := decodeRequest(req)
		if aerr != nil {
			return nil, aerr
		}
		canon, _, aerr := canonical(body.Schema)
		if aerr != nil {
			return nil, aerr
		}
		live := r.live(s)
		if len(live) == 0 {
			return nil, errSubjectNotFound(name)
		}
		if id, ok := r.byCanonical[canon]; ok {
			for _, v := range live {
				if v.id == id {
					st := r.schemas[id-1]
					return schemaJSON{Subject: name, Version: v.number, ID: id, Schema: st.text, References: st.refs}, nil
				}
			}
		}
		return nil, &apiError{404, 40403, "Schema not found"}
	case m == http.MethodDelete && len(rest) == 0:
		live := r.live(s)
		nums := []int{}
		if len(q["permanent"]) > 0 && q["permanent"][0] == "true" {
			if s == nil {
				return nil, errSubjectNotFound(name)
			}
			if len(live) > 0 {
				return nil, &apiError{404, 40405, fmt.Sprintf("Subject '%s' was not deleted first before being permanently deleted", name)}
			}
			for _, v := range s.versions {
				nums = append(nums, v.number)
			}
			delete(r.subjects, name)
			return nums, nil
		}
		if len(live) == 0 {
			return nil, errSubjectNotFound(name)
		}
		for i := range s.versions {
			if !s.versions[i].deleted {
				nums = append(nums, s.versions[i].number)
				s.versions[i].deleted = true
			}
		}
		return nums, nil
	case m == http.MethodPost && len(rest) == 1 && rest[0] == "versions":
		body, aerr := decodeRequest(req)
		if aerr != nil {
			return nil, aerr
		}
		id, aerr := r.register(name, body.Schema, body.References)
		if aerr != nil {
			return nil, aerr
		}
		return map[string]int{"id": id}, nil
	case m == http.MethodGet && len(rest) == 1 && rest[0] == "versions":
		live := r.live(s)
		if len(live) == 0 {
			return nil, errSubjectNotFound(name)
		}
		nums := []int{}
		for _, v := range live {
			nums = append(nums, v.number)
		}
		return nums, nil
	case m == http.MethodGet && (len(rest) == 2 || len(rest) == 3 && rest[2] == "schema") && rest[0] == "versions":
		v, aerr := r.find(name, rest[1])
		if aerr != nil {
			return nil, aerr
		}
		st := r.schemas[v.id-1]
		if len(rest) == 3 {
			return rawString(st.text), nil
		}
		return schemaJSON{Subject: name, Version: v.number, ID: v.id, Schema: st.text, References: st.refs}, nil
	}
	return nil, &apiError{404, 404, "HTTP 404 Not Found"}
}
