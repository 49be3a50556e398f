package kstreams

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/props"
)

func oauthProps(extra map[string]string) map[string]string {
	p := map[string]string{"application.id": "oauth-app", "bootstrap.servers": "a:1",
		"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// claimsOf decodes a JWT's payload (independently of the package's own decoder).
func claimsOf(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// Java's unsecured login (sasl.login.callback.handler.class unset): the JAAS options make the
// token; New's configuration hands sarama one token cache for all its connections.
func TestConfigFromPropertiesOAuthUnsecured(t *testing.T) {
	c, err := ConfigFromProperties(oauthProps(map[string]string{
		"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="alice" unsecuredLoginLifetimeSeconds=120 unsecuredLoginExtension_traceId="t-1";`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.SASLOAuthBearerTokenProvider == nil {
		t.Fatal("no token provider")
	}
	tok, err := c.SASLOAuthBearerTokenProvider(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cl := claimsOf(t, tok.Value)
	if cl["sub"] != "alice" || cl["exp"].(float64)-cl["iat"].(float64) != 120 || tok.Extensions["traceId"] != "t-1" {
		t.Fatalf("claims %v, extensions %v", cl, tok.Extensions)
	}
	d := c.withDefaults()
	sc1, sc2 := d.saramaConfig(), d.saramaConfig()
	if sc1.Net.SASL.Mechanism != "OAUTHBEARER" || sc1.Net.SASL.TokenProvider == nil || sc1.Net.SASL.TokenProvider != sc2.Net.SASL.TokenProvider {
		t.Fatalf("sarama SASL %+v: want OAUTHBEARER with one shared token provider", sc1.Net.SASL)
	}
	if err := sc1.Validate(); err != nil {
		t.Fatalf("sarama rejects the configuration: %v", err)
	}
	at, err := sc1.Net.SASL.TokenProvider.Token()
	if err != nil || claimsOf(t, at.Token)["sub"] != "alice" || at.Extensions["traceId"] != "t-1" {
		t.Fatalf("sarama's token: %+v %v", at, err)
	}
}

// KIP-768's client-credentials grant: client id, secret and scope from the JAAS options or
// the sasl.oauthbearer.* properties (which win), as Java's OAuthBearerLoginModule reads them.
func TestConfigFromPropertiesOAuthClientCredentials(t *testing.T) {
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	payload, _ := json.Marshal(map[string]any{"sub": "svc", "exp": exp.Unix()})
	access := "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(payload) + ".c2ln"
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		u, p, _ := r.BasicAuth()
		mu.Lock()
		seen = append(seen, u+":"+p+" scope="+r.PostForm.Get("scope")+" grant="+r.PostForm.Get("grant_type"))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"access_token":"`+access+`"}`)
	}))
	defer srv.Close()
	jaas := `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="jaas-id" clientSecret="jaas-secret" scope="s1" extension_logicalCluster="lkc-9";`
	for _, tc := range []struct {
		name  string
		extra map[string]string
		want  string
	}{
		{"JAAS options", nil, "jaas-id:jaas-secret scope=s1 grant=client_credentials"},
		{"properties win", map[string]string{"sasl.oauthbearer.client.credentials.client.id": "prop-id",
			"sasl.oauthbearer.client.credentials.client.secret": "prop-secret", "sasl.oauthbearer.scope": "s2"},
			"prop-id:prop-secret scope=s2 grant=client_credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := oauthProps(map[string]string{"sasl.jaas.config": jaas,
				"sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
				"sasl.oauthbearer.token.endpoint.url": srv.URL})
			for k, v := range tc.extra {
				p[k] = v
			}
			c, err := ConfigFromProperties(p)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			seen = nil
			mu.Unlock()
			tok, err := c.SASLOAuthBearerTokenProvider(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 1 || seen[0] != tc.want {
				t.Fatalf("requests %q, want %q", seen, tc.want)
			}
			if tok.Value != access || !tok.Expiry.Equal(exp) || tok.Extensions["logicalCluster"] != "lkc-9" {
				t.Fatalf("token %+v", tok)
			}
		})
	}
	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "token.jwt")
		if err := os.WriteFile(path, []byte(access+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := ConfigFromProperties(oauthProps(map[string]string{
			"sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
			"sasl.oauthbearer.token.endpoint.url": "file://" + path, "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;"}))
		if err != nil {
			t.Fatal(err)
		}
		tok, err := c.SASLOAuthBearerTokenProvider(context.Background())
		if err != nil || tok.Value != access {
			t.Fatalf("%+v %v", tok, err)
		}
	})
}

func TestOAuthConfigErrors(t *testing.T) {
	handler := "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
	for _, tc := range []struct {
		name     string
		props    map[string]string
		property string // of the *ConfigError
	}{
		{"no principal", map[string]string{"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`}, props.SASLJAASConfig},
		{"a Java class", map[string]string{"sasl.login.callback.handler.class": "com.example.MyHandler"}, props.SASLLoginCallbackHandlerClassConfig},
		{"no endpoint", map[string]string{"sasl.login.callback.handler.class": handler}, props.SASLOAuthBearerTokenEndpointURLConfig},
		{"endpoint without the handler", map[string]string{"sasl.oauthbearer.token.endpoint.url": "https://idp/token"}, props.SASLLoginCallbackHandlerClassConfig},
		{"no client id", map[string]string{"sasl.login.callback.handler.class": handler, "sasl.oauthbearer.token.endpoint.url": "https://idp/token"},
			props.SASLOAuthBearerClientIDConfig},
		{"assertion grant", map[string]string{"sasl.login.callback.handler.class": handler, "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
			"sasl.oauthbearer.jwt.retriever.class": "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever"}, props.SASLOAuthBearerJwtRetrieverClassConfig},
		{"refresh factor out of range", map[string]string{"sasl.jaas.config": `x required unsecuredLoginStringClaim_sub="a";`,
			"sasl.login.refresh.window.factor": "0.3"}, props.SASLLoginRefreshWindowFactorConfig},
		{"min period not an integer", map[string]string{"sasl.jaas.config": `x required unsecuredLoginStringClaim_sub="a";`,
			"sasl.login.refresh.min.period.seconds": "1.5"}, props.SASLLoginRefreshMinPeriodSecondsConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ConfigFromProperties(oauthProps(tc.props))
			if err == nil {
				err = c.Validate()
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Property != tc.property {
				t.Fatalf("got %v, want a ConfigError for %s", err, tc.property)
			}
			if strings.Contains(err.Error(), "secret") && strings.Contains(err.Error(), "jaas") {
				t.Errorf("the error shows the JAAS config: %v", err)
			}
		})
	}
	// A Go configuration without a provider.
	c := Config{ApplicationID: "a", BootstrapServers: []string{"a:1"}, SecurityProtocol: "SASL_SSL", SASLMechanism: "OAUTHBEARER"}
	var ce *ConfigError
	if err := c.Validate(); !errors.As(err, &ce) || !strings.Contains(err.Error(), "SASLOAuthBearerTokenProvider") {
		t.Fatalf("without a provider: %v", err)
	}
}
