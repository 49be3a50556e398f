// Package registry connects the Avro, Protobuf and JSON Schema serdes to a Confluent Schema
// Registry (also Apicurio Registry under /apis/ccompat/v7, and Karapace): Client is the
// caching REST client a serde registers and fetches its schemas through, Config (or
// ConfigFromProperties, from the Java client's property names) configures it, and the subject
// name strategies name the subject a serde's schema is registered under. Failures are an
// *Error with the HTTP status and the registry's error code, wrapping one of the sentinels
// below.
//
// A client caches as the Java CachedSchemaRegistryClient does: ids, schemas and versions
// forever (they never change), the latest version of a subject for Config.LatestCacheTTL.
//
//	props := map[string]string{"schema.registry.url": "http://schema-registry:8081"}
//	cfg, err := registry.ConfigFromProperties(props)
//	...
//	client, err := registry.New(cfg)
//	...
//	orders, err := avro.New[Order](client, orderSchema, avro.WithSubjectNameStrategy(registry.RecordNameStrategy))
//
// Java counterpart: io.confluent.kafka.schemaregistry.client.CachedSchemaRegistryClient
// and its configuration (schema.registry.url, basic.auth.user.info, schema.registry.ssl.*,
// latest.cache.ttl.sec); io.confluent.kafka.serializers.subject for the strategies.
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

	"github.com/kstreams-go/kstreams/serde/internal/srapi"
)

// defaultTimeout bounds one HTTP request when Config.Timeout is zero. It is the Java
// client's default http.read.timeout.ms (60000 ms).
const defaultTimeout = 60 * time.Second

// Reference names another registered schema that a Protobuf or JSON Schema serde's schema
// refers to (protobuf.WithReferences, jsonschema.WithReferences): Name is how the schema
// refers to it (a Protobuf import path such as "shop/common.proto", a JSON Schema $ref such
// as "address.schema.json"), Subject and Version where it is registered (Version 0 or less
// means the subject's latest version). Java counterpart:
// io.confluent.kafka.schemaregistry.client.rest.entities.SchemaReference.
type Reference struct {
	// Name is the name the referring schema uses: an import path or a $ref.
	Name string
	// Subject is the subject the referenced schema is registered under.
	Subject string
	// Version is the referenced version under Subject; 0 or less means the latest.
	Version int
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

// Client is a caching Schema Registry REST client, safe for concurrent use: create it with New
// (or ConfigFromProperties and New) and give it to the serdes (avro.New, protobuf.New,
// jsonschema.New), which register and fetch their schemas through it. One client can serve
// every serde of an application, sharing its caches. Java counterpart:
// io.confluent.kafka.schemaregistry.client.CachedSchemaRegistryClient, which the Java serdes
// create from schema.registry.url.
type Client struct {
	c *client
}

// client implements srapi.Client over HTTP.
type client struct {
	urls    []*url.URL
	auth    string // "user:password" or ""
	http    *http.Client
	timeout time.Duration
	ttl     time.Duration

	mu       sync.Mutex
	byID     map[int]srapi.Schema
	bySchema map[string]srapi.Schema // subject \x00 schema text -> id, version
	versions map[string]srapi.Schema // subject \x00 version -> schema
	latest   map[string]latestEntry
	now      func() time.Time
}

type latestEntry struct {
	s  srapi.Schema
	at time.Time
}

var _ srapi.Client = (*client)(nil)

func init() {
	srapi.Of = func(c any) srapi.Client { return c.(*Client).c }
}

// New returns a Client for cfg. It returns an error when cfg has no URL or a URL does not
// parse.
func New(cfg Config) (*Client, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("schema registry: no URL configured (Config.URLs, Java schema.registry.url)")
	}
	c := &client{auth: cfg.BasicAuthUserInfo, ttl: cfg.LatestCacheTTL, timeout: cfg.Timeout,
		byID: map[int]srapi.Schema{}, bySchema: map[string]srapi.Schema{}, versions: map[string]srapi.Schema{},
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
		c.timeout = defaultTimeout
	}
	c.http = cfg.HTTPClient
	if c.http == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if cfg.TLSConfig != nil {
			tr.TLSClientConfig = cfg.TLSConfig.Clone()
		}
		c.http = &http.Client{Transport: tr, Timeout: c.timeout}
	}
	return &Client{c: c}, nil
}

// URLs returns the registry base URLs the client uses (without credentials).
func (c *client) URLs() []string {
	out := make([]string, len(c.urls))
	for i, u := range c.urls {
		out[i] = u.String()
	}
	return out
}

// errorBody is the registry's JSON error body.
type errorBody struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

// do sends one request and decodes a 2xx JSON answer into out. e is filled with the URL,
// status and cause and returned on failure.
func (c *client) do(ctx context.Context, method, path string, query url.Values, in, out any, e *Error) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			e.err, e.cause = ErrBadResponse, err
			return e
		}
	}
	var lastErr error
	for _, base := range c.urls {
		full := base.String() + path
		if len(query) > 0 {
			full += "?" + query.Encode()
		}
		e.url = full
		rctx, cancel := context.WithTimeout(ctx, c.timeout)
		req, err := http.NewRequestWithContext(rctx, method, full, bytes.NewReader(body))
		if err != nil {
			cancel()
			e.err, e.cause = ErrBadResponse, err
			return e
		}
		req.Header.Set("Accept", srapi.ContentType+", application/vnd.schemaregistry+json; qs=0.9, application/json; qs=0.5")
		if in != nil {
			req.Header.Set("Content-Type", srapi.ContentType)
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
			e.err, e.cause = ErrUnavailable, err
			return e
		}
		if resp.StatusCode/100 != 2 {
			var eb errorBody
			if json.Unmarshal(data, &eb) == nil {
				e.Code, e.message = eb.Code, eb.Message
			}
			e.err = sentinelFor(resp.StatusCode, e.Code)
			if e.message == "" && len(data) > 0 {
				e.message = strings.TrimSpace(string(data[:min(len(data), 200)]))
			}
			return e
		}
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				e.err, e.cause = ErrBadResponse, fmt.Errorf("decoding %q: %w", truncate(data), err)
				return e
			}
		}
		return nil
	}
	e.Status = 0
	e.err, e.cause = ErrUnavailable, lastErr
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

func schemaKey(subject string, s srapi.Schema) string {
	return subject + "\x00" + s.SchemaType + "\x00" + s.Schema
}

func schemaBody(s srapi.Schema) map[string]any {
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
// (*Error): ErrRejected (incompatible or invalid schema), ErrUnauthorized, ErrUnavailable. Java:
// SchemaRegistryClient.register(subject, schema, normalize).
func (c *client) Register(ctx context.Context, subject string, schema srapi.Schema, normalize bool) (int, error) {
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
	e := &Error{op: "register schema under", subject: subject}
	if err := c.do(ctx, http.MethodPost, subjectPath(subject, "versions"), q, schemaBody(schema), &out, e); err != nil {
		return 0, err
	}
	if out.ID <= 0 {
		e.err = ErrBadResponse
		e.cause = fmt.Errorf("no schema id in the answer")
		return 0, e
	}
	c.mu.Lock()
	s := c.bySchema[key]
	s.ID = out.ID
	c.bySchema[key] = s
	if _, ok := c.byID[out.ID]; !ok {
		c.byID[out.ID] = srapi.Schema{ID: out.ID, Schema: schema.Schema, SchemaType: schema.SchemaType, References: schema.References}
	}
	c.mu.Unlock()
	return out.ID, nil
}

// LookUp returns the registered id and version of schema under subject without registering
// it (POST /subjects/{subject}). The answer is cached. Errors (*Error): ErrNotFound
// (also when the schema is not registered under this subject), ErrUnavailable. Java:
// SchemaRegistryClient.getId(subject, schema) / lookUpSubjectVersion.
func (c *client) LookUp(ctx context.Context, subject string, schema srapi.Schema) (srapi.Schema, error) {
	key := schemaKey(subject, schema)
	c.mu.Lock()
	if s, ok := c.bySchema[key]; ok && s.ID != 0 && s.Version != 0 {
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	var out srapi.Schema
	e := &Error{op: "look up schema under", subject: subject}
	if err := c.do(ctx, http.MethodPost, subjectPath(subject), nil, schemaBody(schema), &out, e); err != nil {
		return srapi.Schema{}, err
	}
	if out.ID <= 0 {
		e.err, e.cause = ErrBadResponse, fmt.Errorf("no schema id in the answer")
		return srapi.Schema{}, e
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
// forever. Errors (*Error): ErrNotFound, ErrUnavailable. Java:
// SchemaRegistryClient.getSchemaById(id).
func (c *client) SchemaByID(ctx context.Context, id int) (srapi.Schema, error) {
	c.mu.Lock()
	if s, ok := c.byID[id]; ok {
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	var out srapi.Schema
	e := &Error{op: "get schema by", id: id}
	if err := c.do(ctx, http.MethodGet, "/schemas/ids/"+strconv.Itoa(id), nil, nil, &out, e); err != nil {
		return srapi.Schema{}, err
	}
	out.ID = id
	c.mu.Lock()
	c.byID[id] = out
	c.mu.Unlock()
	return out, nil
}

// Latest returns the latest version registered under subject (GET
// /subjects/{subject}/versions/latest), cached for Config.LatestCacheTTL. Errors (*Error):
// ErrNotFound, ErrUnavailable. Java: SchemaRegistryClient.getLatestSchemaMetadata.
func (c *client) Latest(ctx context.Context, subject string) (srapi.Schema, error) {
	c.mu.Lock()
	if l, ok := c.latest[subject]; ok && c.ttl >= 0 && (c.ttl == 0 || c.now().Sub(l.at) < c.ttl) {
		c.mu.Unlock()
		return l.s, nil
	}
	c.mu.Unlock()
	s, err := c.version(ctx, subject, "latest")
	if err != nil {
		return srapi.Schema{}, err
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
// Errors (*Error): ErrNotFound, ErrRejected,
// ErrUnavailable. Java: SchemaRegistryClient.getSchemaMetadata(subject, version).
func (c *client) Version(ctx context.Context, subject string, version int) (srapi.Schema, error) {
	key := subject + "\x00" + strconv.Itoa(version)
	c.mu.Lock()
	if s, ok := c.versions[key]; ok {
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	s, err := c.version(ctx, subject, strconv.Itoa(version))
	if err != nil {
		return srapi.Schema{}, err
	}
	c.mu.Lock()
	c.versions[key] = s
	c.mu.Unlock()
	return s, nil
}

func (c *client) version(ctx context.Context, subject, version string) (srapi.Schema, error) {
	var out srapi.Schema
	e := &Error{op: "get schema of", subject: subject, version: version}
	if err := c.do(ctx, http.MethodGet, subjectPath(subject, "versions", version), nil, nil, &out, e); err != nil {
		return srapi.Schema{}, err
	}
	if out.ID <= 0 || out.Schema == "" {
		e.err, e.cause = ErrBadResponse, fmt.Errorf("no schema id or text in the answer")
		return srapi.Schema{}, e
	}
	c.mu.Lock()
	if _, ok := c.byID[out.ID]; !ok {
		c.byID[out.ID] = srapi.Schema{ID: out.ID, Schema: out.Schema, SchemaType: out.SchemaType, References: out.References}
	}
	c.mu.Unlock()
	return out, nil
}

// Versions lists the versions registered under subject (GET /subjects/{subject}/versions).
// Not cached. Errors (*Error): ErrNotFound, ErrUnavailable. Java:
// SchemaRegistryClient.getAllVersions.
func (c *client) Versions(ctx context.Context, subject string) ([]int, error) {
	var out []int
	e := &Error{op: "list versions of", subject: subject}
	return out, c.do(ctx, http.MethodGet, subjectPath(subject, "versions"), nil, nil, &out, e)
}

// Subjects lists the registered subjects (GET /subjects). Not cached. Java:
// SchemaRegistryClient.getAllSubjects.
func (c *client) Subjects(ctx context.Context) ([]string, error) {
	var out []string
	e := &Error{op: "list subjects"}
	return out, c.do(ctx, http.MethodGet, "/subjects", nil, nil, &out, e)
}

// TestCompatibility asks whether schema is compatible with a version under subject (POST
// /compatibility/subjects/{subject}/versions/{version}?verbose=true); version is "latest"
// or a version number. It returns the verdict and the registry's messages (empty when it
// sends none). A subject without versions is compatible. Errors (*Error):
// ErrNotFound for a numbered version that does not exist,
// ErrRejected, ErrUnavailable. Java: SchemaRegistryClient.testCompatibilityVerbose.
func (c *client) TestCompatibility(ctx context.Context, subject, version string, schema srapi.Schema) (bool, []string, error) {
	var out struct {
		Compatible bool     `json:"is_compatible"`
		Messages   []string `json:"messages"`
	}
	e := &Error{op: "test compatibility against", subject: subject, version: version}
	if err := c.do(ctx, http.MethodPost, "/compatibility"+subjectPath(subject, "versions", version),
		url.Values{"verbose": {"true"}}, schemaBody(schema), &out, e); err != nil {
		return false, nil, err
	}
	return out.Compatible, out.Messages, nil
}

// SetCompatibility sets the compatibility level of subject, or the global level when
// subject is "" (PUT /config/{subject} or PUT /config): one of NONE, BACKWARD,
// BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE. Errors (*Error):
// ErrRejected, ErrUnavailable. Java: SchemaRegistryClient.updateCompatibility.
func (c *client) SetCompatibility(ctx context.Context, subject, level string) error {
	path := "/config"
	if subject != "" {
		path += "/" + url.PathEscape(subject)
	}
	e := &Error{op: "set compatibility level of", subject: subject}
	return c.do(ctx, http.MethodPut, path, nil, map[string]string{"compatibility": level}, nil, e)
}

// DeleteSubject deletes subject and returns the versions deleted (DELETE
// /subjects/{subject}, with ?permanent=true for a hard delete, which the registry allows
// only after a soft delete). It also drops the subject from the caches. Errors (*Error):
// ErrNotFound, ErrUnavailable. Java: SchemaRegistryClient.deleteSubject.
func (c *client) DeleteSubject(ctx context.Context, subject string, permanent bool) ([]int, error) {
	var q url.Values
	if permanent {
		q = url.Values{"permanent": {"true"}}
	}
	var out []int
	e := &Error{op: "delete", subject: subject}
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
