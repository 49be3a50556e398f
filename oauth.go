package kstreams

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kstreams-go/kstreams/internal/kafka/oauthbearer"
	"github.com/kstreams-go/kstreams/internal/props"
)

// OAuthBearerToken is an access token for SASL/OAUTHBEARER (KIP-255), as an
// OAuthBearerTokenProvider returns it.
type OAuthBearerToken struct {
	// Value is the token as the broker receives it, usually a JWT in compact serialization
	// (header.payload.signature). It must not hold spaces or control-A characters.
	Value string
	// Expiry is when the token stops being valid. Zero means: read it from the JWT's "exp"
	// claim (then Value must be a JWT with one). A token whose Expiry has passed is refused.
	Expiry time.Time
	// Extensions are SASL extensions sent with the token (KIP-342), for example a managed
	// cluster's logical cluster and identity pool ids; nil for none. The name "auth" is
	// reserved. Java: OAuthBearerLoginModule's extension_<name> options.
	Extensions map[string]string
}

// OAuthBearerTokenProvider returns a new access token for SASL/OAUTHBEARER. The instance
// calls it when a connection (fetch, produce, group and streams-group coordinator, admin,
// restore: every connection it opens) needs a token and it holds none, or its token has
// reached its refresh time; every connection, and every re-authentication a broker asks for
// (connections.max.reauth.ms, KIP-368), takes the instance's one current token. The refresh
// time follows Java's rules and properties, read from Config.Properties: at
// sasl.login.refresh.window.factor (default 0.8, 0.5..1.0) of the token's lifetime plus a
// random part of sasl.login.refresh.window.jitter (default 0.05, 0..0.25), but no later
// than sasl.login.refresh.buffer.seconds (default 300, 0..3600) before Expiry and no sooner
// than sasl.login.refresh.min.period.seconds (default 60, 0..900) after the token was
// obtained; when these buffers do not fit in the token's lifetime, at the factor of it.
//
// ctx ends after 30 s; calls do not overlap. After an error the provider is asked again
// only after sasl.login.retry.backoff.ms (default 100 ms, doubling after each further error
// up to sasl.login.retry.backoff.max.ms, default 10 s). While the current token is still
// valid an error keeps it in use (logged at WARN); when no valid token is left the error
// fails the connection: Start returns it, or the stream thread fails through the
// uncaught-exception handler (as an authentication failure, which no retry cures); the error
// wraps the provider's (errors.Is/As reach it) and its text names the OAUTHBEARER token
// provider.
//
// Java: sasl.login.callback.handler.class, a login callback handler answering
// OAuthBearerTokenCallback (KIP-255); ConfigFromProperties sets a provider for Java's own
// handlers (KIP-768's client-credentials grant and Kafka's unsecured tokens).
type OAuthBearerTokenProvider func(ctx context.Context) (OAuthBearerToken, error)

// Java class names sasl.login.callback.handler.class may name for OAUTHBEARER.
const (
	javaOAuthLoginHandler       = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
	javaOAuthLoginHandlerLegacy = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"
	javaOAuthUnsecuredHandler   = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler"
	javaJwtRetrieverPrefix      = "org.apache.kafka.common.security.oauthbearer."
)

// jaasOptionAny reads a JAAS option whose value is quoted or a bare word.
var jaasOptionAny = regexp.MustCompile(`(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))`)

// jaasOptions returns the options of a sasl.jaas.config value.
func jaasOptions(v string) map[string]string {
	out := map[string]string{}
	for _, m := range jaasOptionAny.FindAllStringSubmatch(v, -1) {
		val := m[3]
		if m[3] == "" {
			val = strings.ReplaceAll(m[2], `\"`, `"`)
		}
		out[m[1]] = val
	}
	return out
}

// oauthFromProperties sets c.SASLOAuthBearerTokenProvider from Java's OAUTHBEARER properties:
// sasl.login.callback.handler.class unset (Kafka's unsecured tokens from the JAAS options
// unsecuredLogin*), or OAuthBearerLoginCallbackHandler with sasl.oauthbearer.token.endpoint.url
// (https: the client-credentials grant, client id, secret and scope from
// sasl.oauthbearer.client.credentials.client.id / .client.secret / sasl.oauthbearer.scope or
// the JAAS options clientId, clientSecret, scope; file: a token file read at each refresh).
func oauthFromProperties(c *Config, get func(string) (string, bool)) error {
	jaas, _ := get(props.SASLJAASConfig)
	opts := jaasOptions(jaas)
	ext := map[string]string{}
	for k, v := range opts {
		if name, ok := strings.CutPrefix(k, "extension_"); ok {
			ext[name] = v
		}
	}
	if len(ext) == 0 {
		ext = nil
	}
	handler, _ := get(props.SASLLoginCallbackHandlerClassConfig)
	switch handler {
	case "", javaOAuthUnsecuredHandler:
		if _, ok := get(props.SASLOAuthBearerTokenEndpointURLConfig); ok && handler == "" {
			return &ConfigError{Property: props.SASLLoginCallbackHandlerClassConfig, Reason: "sasl.oauthbearer.token.endpoint.url " +
				"needs sasl.login.callback.handler.class=" + javaOAuthLoginHandler + ", as in Java (unset means Kafka's unsecured tokens)"}
		}
		p, err := oauthbearer.Unsecured(opts)
		if err != nil {
			return &ConfigError{Property: props.SASLJAASConfig, Value: "(hidden)", Reason: "OAUTHBEARER unsecured login: " + err.Error()}
		}
		c.SASLOAuthBearerTokenProvider = fromInternalProvider(p)
		return nil
	case javaOAuthLoginHandler, javaOAuthLoginHandlerLegacy:
	default:
		return &ConfigError{Property: props.SASLLoginCallbackHandlerClassConfig, Value: handler,
			Reason: "a Java class cannot run here: set Config.SASLOAuthBearerTokenProvider"}
	}
	if r, ok := get(props.SASLOAuthBearerJwtRetrieverClassConfig); ok {
		switch strings.TrimPrefix(r, javaJwtRetrieverPrefix) {
		case "DefaultJwtRetriever", "ClientCredentialsJwtRetriever", "FileJwtRetriever":
		default:
			return &ConfigError{Property: props.SASLOAuthBearerJwtRetrieverClassConfig, Value: r,
				Reason: "supported: DefaultJwtRetriever, ClientCredentialsJwtRetriever, FileJwtRetriever; for others set Config.SASLOAuthBearerTokenProvider"}
		}
	}
	endpoint, ok := get(props.SASLOAuthBearerTokenEndpointURLConfig)
	if !ok || endpoint == "" {
		return &ConfigError{Property: props.SASLOAuthBearerTokenEndpointURLConfig, Reason: "required by " + handler}
	}
	if path, ok := strings.CutPrefix(endpoint, "file:"); ok {
		path = strings.TrimPrefix(path, "//")
		c.SASLOAuthBearerTokenProvider = fromInternalProvider(oauthbearer.File(path))
		return nil
	}
	if !strings.HasPrefix(endpoint, "https://") && !strings.HasPrefix(endpoint, "http://") {
		return &ConfigError{Property: props.SASLOAuthBearerTokenEndpointURLConfig, Value: endpoint, Reason: "must be an http(s): or file: URL"}
	}
	orJAAS := func(prop, option string) string {
		if v, ok := get(prop); ok {
			return v
		}
		return opts[option]
	}
	cc := oauthbearer.ClientCredentials{URL: endpoint, Extensions: ext,
		ClientID:     orJAAS(props.SASLOAuthBearerClientIDConfig, "clientId"),
		ClientSecret: orJAAS(props.SASLOAuthBearerClientSecretConfig, "clientSecret"),
		Scope:        orJAAS(props.SASLOAuthBearerScopeConfig, "scope")}
	if cc.ClientID == "" {
		return &ConfigError{Property: props.SASLOAuthBearerClientIDConfig, Reason: "the client-credentials grant needs a client id (or clientId in sasl.jaas.config)"}
	}
	if cc.ClientSecret == "" {
		return &ConfigError{Property: props.SASLOAuthBearerClientSecretConfig, Reason: "the client-credentials grant needs a client secret (or clientSecret in sasl.jaas.config)"}
	}
	if v, ok := get(props.SASLOAuthBearerHeaderURLEncodeConfig); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return &ConfigError{Property: props.SASLOAuthBearerHeaderURLEncodeConfig, Value: v, Reason: "must be true or false"}
		}
		cc.URLEncodeHeader = b
	}
	for _, d := range []struct {
		prop string
		to   *time.Duration
	}{{props.SASLLoginConnectTimeoutMsConfig, &cc.ConnectTimeout}, {props.SASLLoginReadTimeoutMsConfig, &cc.ReadTimeout},
		{props.SASLLoginRetryBackoffMsConfig, &cc.RetryBackoff}, {props.SASLLoginRetryBackoffMaxMsConfig, &cc.RetryBackoffMax}} {
		if v, ok := get(d.prop); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return &ConfigError{Property: d.prop, Value: v, Reason: "must be a non-negative integer"}
			}
			*d.to = time.Duration(n) * time.Millisecond
		}
	}
	c.SASLOAuthBearerTokenProvider = fromInternalProvider(cc.Provider())
	return nil
}

func fromInternalProvider(p oauthbearer.Provider) OAuthBearerTokenProvider {
	return func(ctx context.Context) (OAuthBearerToken, error) {
		t, err := p(ctx)
		return OAuthBearerToken{Value: t.Value, Expiry: t.Expiry, Extensions: t.Extensions}, err
	}
}

// oauthRefresh reads the refresh rules from Java's sasl.login.refresh.* and
// sasl.login.retry.backoff.* properties, checking Java's ranges.
func oauthRefresh(p map[string]string) (oauthbearer.Refresh, error) {
	r := oauthbearer.DefaultRefresh()
	for _, f := range []struct {
		prop     string
		lo, hi   float64
		fraction *float64
		seconds  *time.Duration
		millis   *time.Duration
	}{
		{prop: props.SASLLoginRefreshWindowFactorConfig, lo: 0.5, hi: 1.0, fraction: &r.WindowFactor},
		{prop: props.SASLLoginRefreshWindowJitterConfig, lo: 0, hi: 0.25, fraction: &r.WindowJitter},
		{prop: props.SASLLoginRefreshMinPeriodSecondsConfig, lo: 0, hi: 900, seconds: &r.MinPeriod},
		{prop: props.SASLLoginRefreshBufferSecondsConfig, lo: 0, hi: 3600, seconds: &r.Buffer},
		{prop: props.SASLLoginRetryBackoffMsConfig, lo: 0, hi: 1 << 40, millis: &r.RetryBackoff},
		{prop: props.SASLLoginRetryBackoffMaxMsConfig, lo: 0, hi: 1 << 40, millis: &r.RetryBackoffMax},
	} {
		v, ok := p[f.prop]
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n < f.lo || n > f.hi || (f.fraction == nil && n != float64(int64(n))) {
			return r, &ConfigError{Property: f.prop, Value: v, Reason: "must be a number in [" +
				strconv.FormatFloat(f.lo, 'g', -1, 64) + ", " + strconv.FormatFloat(f.hi, 'g', -1, 64) + "]" +
				map[bool]string{true: "", false: " (an integer)"}[f.fraction != nil]}
		}
		switch {
		case f.fraction != nil:
			*f.fraction = n
		case f.seconds != nil:
			*f.seconds = time.Duration(n) * time.Second
		default:
			*f.millis = time.Duration(n) * time.Millisecond
		}
	}
	return r, nil
}

// newTokenSource makes the token cache all connections made from c share.
func (c *Config) newTokenSource() *oauthbearer.Source {
	r, _ := oauthRefresh(c.Properties) // checked by Validate; the defaults otherwise
	p := c.SASLOAuthBearerTokenProvider
	return oauthbearer.NewSource(func(ctx context.Context) (oauthbearer.Token, error) {
		t, err := p(ctx)
		return oauthbearer.Token{Value: t.Value, Expiry: t.Expiry, Extensions: t.Extensions}, err
	}, r, c.Logger)
}

// isOAuthBearer reports whether c authenticates with SASL/OAUTHBEARER.
func (c *Config) isOAuthBearer() bool {
	p := strings.ToUpper(c.SecurityProtocol)
	return (p == "SASL_PLAINTEXT" || p == "SASL_SSL") && strings.EqualFold(c.SASLMechanism, "OAUTHBEARER")
}
