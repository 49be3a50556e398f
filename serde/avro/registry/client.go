// Package registry is a client of the Confluent Schema Registry REST API (also served by
// Apicurio Registry under /apis/ccompat/v7 and by Karapace): register a schema under a
// subject, look a schema up, fetch a schema by id, by version or the latest version, test
// compatibility and manage a subject's compatibility level. Results are cached as the Java
// CachedSchemaRegistryClient caches them: ids, schemas and versions forever (they never
// change), the latest version of a subject for Config.LatestCacheTTL.
//
// Java counterpart: io.confluent.kafka.schemaregistry.client.CachedSchemaRegistryClient
// and its configuration (schema.registry.url, basic.auth.user.info, schema.registry.ssl.*,
// latest.cache.ttl.sec).
package registry

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ContentType is the media type of Schema Registry requests and responses.
const ContentType = "application/vnd.schemaregistry.v1+json"

// DefaultTimeout bounds one HTTP request when Config.Timeout is zero. It is the Java
// client's default http.read.timeout.ms (60000 ms).
const DefaultTimeout = 60 * time.Second

// Schema is a schema as the registry returns it. Schema holds the schema text (for Avro, its
// JSON); SchemaType is "" or "AVRO" for Avro ("JSON" and "PROTOBUF" are the registry's other
// types). ID, Subject and Version are zero when the call that returned it does not report
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
// This client passes references through; the Protobuf and JSON Schema serdes fetch them to
// compile a schema, the Avro serde does not resolve them.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// API is what the Avro, Protobuf and JSON Schema serdes need from a registry. *Client implements it over HTTP; tests
// may implement it directly. Every method returns an *Error on failure. Java counterpart:
// io.confluent.kafka.schemaregistry.client.SchemaRegistryClient.
type API interface {
	// Register registers schema under subject (POST /subjects/{subject}/versions) and
	// returns its id; registering an already registered schema returns the existing id.
	Register(ctx context.Context, subject string, schema Schema, normalize bool) (int, error)
	// LookUp returns the id and version of schema under subject without registering it
	// (POST /subjects/{subject}).
	LookUp(ctx context.Context, subject string, schema Schema) (Schema, error)
	// SchemaByID returns the schema with the given id (GET /schemas/ids/{id}).
	SchemaByID(ctx context.Context, id int) (Schema, error)
	// Latest returns the latest version under subject (GET /subjects/{subject}/versions/latest).
	Latest(ctx context.Context, subject string) (Schema, error)
	// Version returns one version under subject (GET /subjects/{subject}/versions/{version}).
	Version(ctx context.Context, subject string, version int) (Schema, error)
}

// Config configures a Client. Only URLs is required.
type Config struct {
	// URLs are the registry base URLs, e.g. "http://127.0.0.1:8081" or
	// "http://host:8080/apis/ccompat/v7" for Apicurio. A request goes to the first URL and
	// moves on to the next only when no answer arrives. Java: schema.registry.url (a
	// comma-separated list; Split it or use ConfigFromProperties).
	URLs []string
	// BasicAuthUserInfo is "user:password" for HTTP basic authentication. Credentials in a
	// URL ("http://user:pw@host:8081") are used when this is empty. Java:
	// basic.auth.credentials.source=USER_INFO with basic.auth.user.info (or source URL).
	BasicAuthUserInfo string
	// TLSConfig is used for https URLs (root CAs, client certificates). Nil means the
	// system roots. Java: schema.registry.ssl.truststore.* and schema.registry.ssl.keystore.*.
	TLSConfig *tls.Config
	// Timeout bounds each HTTP request, including reading the body. Zero means
	// DefaultTimeout (60 s). Java: http.connect.timeout.ms and http.read.timeout.ms.
	Timeout time.Duration
	// LatestCacheTTL is how long Latest answers from its cache. Zero means forever (Java's
	// default latest.cache.ttl.sec=-1); negative means never cache. Other answers (by id,
	// by version, register and look-up) are cached forever.
	LatestCacheTTL time.Duration
	// HTTPClient, when set, sends the requests; TLSConfig and Timeout are then ignored
	// (configure them on the client).
	HTTPClient *http.Client
}

// ConfigFromProperties builds a Config from the Java client's property names:
// schema.registry.url (comma-separated), basic.auth.credentials.source (USER_INFO or URL,
// default URL), basic.auth.user.info, latest.cache.ttl.sec (-1 = forever),
// http.read.timeout.ms. Unknown properties are ignored (they belong to the serializer or to
// TLS, which is configured with Config.TLSConfig). It returns an error for a missing URL or
// a malformed number.
func ConfigFromProperties(props map[string]string) (Config, error) {
	var c Config
	for _, u := range strings.Split(props["schema.registry.url"], ",") {
		if u = strings.TrimSpace(u); u != "" {
			c.URLs = append(c.URLs, u)
		}
	}
	if len(c.URLs) == 0 {
		return c, errors.New("schema registry: property schema.registry.url is missing")
	}
	if strings.EqualFold(props["basic.auth.credentials.source"], "USER_INFO") {
		c.BasicAuthUserInfo = props["basic.auth.user.info"]
	}
	if v, ok := props["latest.cache.ttl.sec"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return c, fmt.Errorf("schema registry: property latest.cache.ttl.sec=%q: %w", v, err)
		}
		switch {
		case n < 0:
			c.LatestCacheTTL = 0
		case n == 0:
			c.LatestCacheTTL = -1
		default:
			c.LatestCacheTTL = time.Duration(n) * time.Second
		}
	}
	if v, ok := props["http.read.timeout.ms"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return c, fmt.Errorf("schema registry: property http.read.timeout.ms=%q: %w", v, err)
		}
		c.Timeout = time.Duration(n) * time.Millisecond
	}
	return c, nil
}

// Client is a caching Schema Registry REST client, safe for concurrent use. Create it with
// New.
type Client struct {
	urls    []*url.URL
	auth    string // "user:password" or ""
	http    *http.Client
	timeout time.Duration
	ttl     time.Duration

	mu       sync.Mutex
	byID     map[int]Schema
	bySchema map[string]Schema // subject \x00 schema text -> id, version
	versions map[string]Schema // subject \x00 version -> schema
	latest   map[string]latestEntry
	now      func() time.Time
}

type latestEntry struct {
	s  Schema
	at time.Time
}

var _ API = (*Client)(nil)

// New returns a Client for cfg. It returns an error when cfg has no URL or a URL does not
// parse.
func New(cfg Config) (*Client, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("schema registry: no URL configured (Config.URLs, Java schema.registry.url)")
	}
	c := &Client{auth: cfg.BasicAuthUserInfo, ttl: cfg.LatestCacheTTL, timeout: cfg.Timeout,
		byID: map[int]Schema{}, bySchema: map[string]Schema{}, versions: map[string]Schema{},
		latest: map[string]latestEntry{}, now: time.Now}
	for _, raw := range cfg.URLs {
		u, err := url.Parse(strings.TrimRight(strings.TrimSpace(raw), "/"))
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("schema registry: URL %q is not an http(s) URL", raw)
		}
		if c.auth == "" && u.User != nil {
			pw, _ := u.User.Password()
			c.auth = u.User.Username() + ":" + pw
		}
		u.User = nil
		c.urls = append(c.urls, u)
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	c.http = cfg.HTTPClient
	if c.http == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if cfg.TLSConfig != nil {
			tr.TLSClientConfig = cfg.TLSConfig.Clone()
		}
		c.http = &http.Client{Transport: tr, Timeout: c.timeout}
	}
	return c, nil
}

// URLs returns the registry base URLs the client uses (without credentials).
func (c *Client) URLs() []string {
	out := make([]string, len(c.urls))
	for i, u := range c.urls {
		out[i] = u.String()
	}
	return out
}

// NewFromURL is New with a single URL and otherwise default settings.
func NewFromURL(u string) (*Client, error) { return New(Config{URLs: []string{u}}) }

// errorBody is the registry's JSON error body.
type errorBody struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

// do sends one request and decodes a 2xx JSON answer into out. e is filled with the URL,
// status and cause and returned on failure.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any, e *Error) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			e.Err, e.Cause = ErrBadResponse, err
			return e
		}
	}
	var lastErr error
	for _, base := range c.urls {
		full := base.String() + path
		if len(query) > 0 {
			full += "?" + query.Encode()
		}
		e.URL = full
		rctx, cancel := context.WithTimeout(ctx, c.timeout)
		req, err := http.NewRequestWithContext(rctx, method, full, bytes.NewReader(body))
		if err != nil {
			cancel()
			e.Err, e.Cause = ErrBadResponse, err
			return e
		}
		req.Header.Set("Accept", ContentType+", application/vnd.schemaregistry+json; qs=0.9, application/json; qs=0.5")
		if in != nil {
			req.Header.Set("Content-Type", ContentType)
		}
		if c.auth != "" {
			user, pw, _ := strings.Cut(c.auth, ":")
			req.SetBasicAuth(user, pw)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			cancel()
			lastErr = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		cancel()
		e.Status = resp.StatusCode
		if err != nil {
			e.Err, e.Cause = ErrUnavailable, err
			return e
		}
		if resp.StatusCode/100 != 2 {
			var eb errorBody
			if json.Unmarshal(data, &eb) == nil {
				e.Code, e.Message = eb.Code, eb.Message
			}
			e.Err = sentinelFor(resp.StatusCode, e.Code)
			if e.Message == "" && len(data) > 0 {
				e.Message = strings.TrimSpace(string(data[:min(len(data), 200)]))
			}
			return e
		}
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				e.Err, e.Cause = ErrBadResponse, fmt.Errorf("decoding %q: %w", truncate(data), err)
				return e
			}
		}
		return nil
	}
	e.Status = 0
	e.Err, e.Cause = ErrUnavailable, lastErr
	return e
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// subjectPath returns the escaped path /subjects/{subject}[/rest...] (subjects may contain
// '/', ':' or spaces).
func subjectPath(subject string, rest ...string) string {
	p := "/subjects/" + url.PathEscape(subject)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

func schemaKey(subject string, s Schema) string {
	return subject + "\x00" + s.SchemaType + "\x00" + s.Schema
}

func schemaBody(s Schema) map[string]any {
	body := map[string]any{"schema": s.Schema}
	if s.SchemaType != "" && s.SchemaType != "AVRO" {
		body["schemaType"] = s.SchemaType
	}
	if len(s.References) > 0 {
		body["references"] = s.References
	}
	return body
}

// Register registers schema under subject and returns its id (POST
// /subjects/{subject}/versions, with ?normalize=true when normalize is set). Registering a
// schema the registry already has under the subject returns its id without a new version.
// The answer is cached, so registering the same schema again sends no request. Errors
// (*Error): ErrIncompatible, ErrInvalidSchema, ErrUnauthorized, ErrUnavailable. Java:
// SchemaRegistryClient.register(subject, schema, normalize).
func (c *Client) Register(ctx context.Context, subject string, schema Schema, normalize bool) (int, error) {
	key := schemaKey(subject, schema)
	c.mu.Lock()
	if s, ok := c.bySchema[key]; ok && s.ID != 0 {
		c.mu.Unlock()
		return s.ID, nil
	}
	c.mu.Unlock()
	var q url.Values
	if normalize {
		q = url.Values{"normalize": {"true"}}
	}
	var out struct {
		ID int `json:"id"`
	}
	e := &Error{Op: "register schema under", Subject: subject}
	if err := c.do(ctx, http.MethodPost, subjectPath(subject, "versions"), q, schemaBody(schema), &out, e); err != nil {
		return 0, err
	}
	if out.ID <= 0 {
		e.Err = ErrBadResponse
		e.Cause = fmt.Errorf("no schema id in the answer")
		return 0, e
	}
	c.mu.Lock()
	s := c.bySchema[key]
	s.ID = out.ID
	c.bySchema[key] = s
	if _, ok := c.byID[out.ID]; !ok {
		c.byID[out.ID] = Schema{ID: out.ID, Schema: schema.Schema, SchemaType: schema.SchemaType, References: schema.References}
	}
	c.mu.Unlock()
	return out.ID, nil
}

// LookUp returns the registered id and version of schema under subject without registering
// it (POST /subjects/{subject}). The answer is cached. Errors (*Error): ErrSubjectNotFound,
// ErrSchemaNotFound (not registered under this subject), ErrUnavailable. Java:
// SchemaRegistryClient.getId(subject, schema) / lookUpSubjectVersion.
func (c *Client) LookUp(ctx context.Context, subject string, schema Schema) (Schema, error) {
	key := schemaKey(subject, schema)
	c.mu.Lock()
	if s, ok := c.bySchema[key]; ok && s.ID != 0 && s.Version != 0 {
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	var out Schema
	e := &Error{Op: "look up schema under", Subject: subject}
	if err := c.do(ctx, http.MethodPost, subjectPath(subject), nil, schemaBody(schema), &out, e); err != nil {
		return Schema{}, err
	}
	if out.ID <= 0 {
		e.Err, e.Cause = ErrBadResponse, fmt.Errorf("no schema id in the answer")
		return Schema{}, e
	}
	if out.Subject == "" {
		out.Subject = subject
	}
	c.mu.Lock()
	c.bySchema[key] = out
	c.mu.Unlock()
	return out, nil
}

// SchemaByID returns the schema with the given id (GET /schemas/ids/{id}); ID is set in
// the result, Subject and Version are not. Ids never change, so the answer is cached
// forever. Errors (*Error): ErrSchemaNotFound, ErrUnavailable. Java:
// SchemaRegistryClient.getSchemaById(id).
func (c *Client) SchemaByID(ctx context.Context, id int) (Schema, error) {
	c.mu.Lock()
	if s, ok := c.byID[id]; ok {
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	var out Schema
	e := &Error{Op: "get schema by", ID: id}
	if err := c.do(ctx, http.MethodGet, "/schemas/ids/"+strconv.Itoa(id), nil, nil, &out, e); err != nil {
		return Schema{}, err
	}
	out.ID = id
	c.mu.Lock()
	c.byID[id] = out
	c.mu.Unlock()
	return out, nil
}

// Latest returns the latest version registered under subject (GET
// /subjects/{subject}/versions/latest), cached for Config.LatestCacheTTL. Errors (*Error):
// ErrSubjectNotFound, ErrUnavailable. Java: SchemaRegistryClient.getLatestSchemaMetadata.
func (c *Client) Latest(ctx context.Context, subject string) (Schema, error) {
	c.mu.Lock()
	if l, ok := c.latest[subject]; ok && c.ttl >= 0 && (c.ttl == 0 || c.now().Sub(l.at) < c.ttl) {
		c.mu.Unlock()
		return l.s, nil
	}
	c.mu.Unlock()
	s, err := c.version(ctx, subject, "latest")
	if err != nil {
		return Schema{}, err
	}
	c.mu.Lock()
	if c.ttl >= 0 {
		c.latest[subject] = latestEntry{s: s, at: c.now()}
	}
	c.mu.Unlock()
	return s, nil
}

// Version returns the given version under subject (GET
// /subjects/{subject}/versions/{version}); versions never change, so the answer is cached.
// Errors (*Error): ErrSubjectNotFound, ErrVersionNotFound, ErrInvalidVersion,
// ErrUnavailable. Java: SchemaRegistryClient.getSchemaMetadata(subject, version).
func (c *Client) Version(ctx context.Context, subject string, version int) (Schema, error) {
	key := subject + "\x00" + strconv.Itoa(version)
	c.mu.Lock()
	if s, ok := c.versions[key]; ok {
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	s, err := c.version(ctx, subject, strconv.Itoa(version))
	if err != nil {
		return Schema{}, err
	}
	c.mu.Lock()
	c.versions[key] = s
	c.mu.Unlock()
	return s, nil
}

func (c *Client) version(ctx context.Context, subject, version string) (Schema, error) {
	var out Schema
	e := &Error{Op: "get schema of", Subject: subject, Version: version}
	if err := c.do(ctx, http.MethodGet, subjectPath(subject, "versions", version), nil, nil, &out, e); err != nil {
		return Schema{}, err
	}
	if out.ID <= 0 || out.Schema == "" {
		e.Err, e.Cause = ErrBadResponse, fmt.Errorf("no schema id or text in the answer")
		return Schema{}, e
	}
	c.mu.Lock()
	if _, ok := c.byID[out.ID]; !ok {
		c.byID[out.ID] = Schema{ID: out.ID, Schema: out.Schema, SchemaType: out.SchemaType, References: out.References}
	}
	c.mu.Unlock()
	return out, nil
}

// Versions lists the versions registered under subject (GET /subjects/{subject}/versions).
// Not cached. Errors (*Error): ErrSubjectNotFound, ErrUnavailable. Java:
// SchemaRegistryClient.getAllVersions.
func (c *Client) Versions(ctx context.Context, subject string) ([]int, error) {
	var out []int
	e := &Error{Op: "list versions of", Subject: subject}
	return out, c.do(ctx, http.MethodGet, subjectPath(subject, "versions"), nil, nil, &out, e)
}

// Subjects lists the registered subjects (GET /subjects). Not cached. Java:
// SchemaRegistryClient.getAllSubjects.
func (c *Client) Subjects(ctx context.Context) ([]string, error) {
	var out []string
	e := &Error{Op: "list subjects"}
	return out, c.do(ctx, http.MethodGet, "/subjects", nil, nil, &out, e)
}

// TestCompatibility asks whether schema is compatible with a version under subject (POST
// /compatibility/subjects/{subject}/versions/{version}?verbose=true); version is "latest"
// or a version number. It returns the verdict and the registry's messages (empty when it
// sends none). A subject without versions is compatible. Errors (*Error):
// ErrSubjectNotFound or ErrVersionNotFound for a numbered version that does not exist,
// ErrInvalidSchema, ErrUnavailable. Java: SchemaRegistryClient.testCompatibilityVerbose.
func (c *Client) TestCompatibility(ctx context.Context, subject, version string, schema Schema) (bool, []string, error) {
	var out struct {
		Compatible bool     `json:"is_compatible"`
		Messages   []string `json:"messages"`
	}
	e := &Error{Op: "test compatibility against", Subject: subject, Version: version}
	if err := c.do(ctx, http.MethodPost, "/compatibility"+subjectPath(subject, "versions", version),
		url.Values{"verbose": {"true"}}, schemaBody(schema), &out, e); err != nil {
		return false, nil, err
	}
	return out.Compatible, out.Messages, nil
}

// SetCompatibility sets the compatibility level of subject, or the global level when
// subject is "" (PUT /config/{subject} or PUT /config): one of NONE, BACKWARD,
// BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE. Errors (*Error):
// ErrInvalidCompatibilityLevel, ErrUnavailable. Java: SchemaRegistryClient.updateCompatibility.
func (c *Client) SetCompatibility(ctx context.Context, subject, level string) error {
	path := "/config"
	if subject != "" {
		path += "/" + url.PathEscape(subject)
	}
	e := &Error{Op: "set compatibility level of", Subject: subject}
	return c.do(ctx, http.MethodPut, path, nil, map[string]string{"compatibility": level}, nil, e)
}

// DeleteSubject deletes subject and returns the versions deleted (DELETE
// /subjects/{subject}, with ?permanent=true for a hard delete, which the registry allows
// only after a soft delete). It also drops the subject from the caches. Errors (*Error):
// ErrSubjectNotFound, ErrUnavailable. Java: SchemaRegistryClient.deleteSubject.
func (c *Client) DeleteSubject(ctx context.Context, subject string, permanent bool) ([]int, error) {
	var q url.Values
	if permanent {
		q = url.Values{"permanent": {"true"}}
	}
	var out []int
	e := &Error{Op: "delete", Subject: subject}
	if err := c.do(ctx, http.MethodDelete, subjectPath(subject), q, nil, &out, e); err != nil {
		return nil, err
	}
	c.mu.Lock()
	delete(c.latest, subject)
	for k := range c.bySchema {
		if strings.HasPrefix(k, subject+"\x00") {
			delete(c.bySchema, k)
		}
	}
	for k := range c.versions {
		if strings.HasPrefix(k, subject+"\x00") {
			delete(c.versions, k)
		}
	}
	c.mu.Unlock()
	return out, nil
}
