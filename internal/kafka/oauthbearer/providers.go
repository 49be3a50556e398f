package oauthbearer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Unsecured returns the provider of Kafka's unsecured login (Java's
// OAuthBearerUnsecuredLoginCallbackHandler, what OAuthBearerLoginModule uses when
// sasl.login.callback.handler.class is unset): an unsigned JWS ("alg":"none") whose claims
// come from the JAAS options unsecuredLoginStringClaim_<name>, unsecuredLoginNumberClaim_<name>
// and unsecuredLoginListClaim_<name> (the value's first character separates the items), with
// "iat" now and "exp" after unsecuredLoginLifetimeSeconds (default 3600); the principal claim
// (unsecuredLoginPrincipalClaimName, default "sub") must be given. unsecuredLoginExtension_<name>
// options are sent as SASL extensions. Only brokers that validate with Kafka's unsecured
// validator (for tests) accept such tokens.
func Unsecured(opts map[string]string) (Provider, error) {
	const pre = "unsecuredLogin"
	principal := "sub"
	if v, ok := opts[pre+"PrincipalClaimName"]; ok && strings.TrimSpace(v) != "" {
		principal = strings.TrimSpace(v)
	}
	lifetime := 3600 * time.Second
	if v, ok := opts[pre+"LifetimeSeconds"]; ok {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%sLifetimeSeconds %q: must be a positive number of seconds", pre, v)
		}
		lifetime = time.Duration(n * float64(time.Second))
	}
	claims := map[string]any{}
	ext := map[string]string{}
	for k, v := range opts {
		switch {
		case strings.HasPrefix(k, pre+"StringClaim_"):
			claims[strings.TrimPrefix(k, pre+"StringClaim_")] = v
		case strings.HasPrefix(k, pre+"NumberClaim_"):
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("%s %q: not a number", k, v)
			}
			claims[strings.TrimPrefix(k, pre+"NumberClaim_")] = n
		case strings.HasPrefix(k, pre+"ListClaim_"):
			items := []string{}
			if v != "" {
				for _, it := range strings.Split(v[1:], v[:1]) {
					if it != "" {
						items = append(items, it)
					}
				}
			}
			claims[strings.TrimPrefix(k, pre+"ListClaim_")] = items
		case strings.HasPrefix(k, pre+"Extension_"):
			ext[strings.TrimPrefix(k, pre+"Extension_")] = v
		}
	}
	for _, reserved := range []string{"", "iat", "exp"} {
		if _, ok := claims[reserved]; ok {
			return nil, fmt.Errorf("claim %q cannot be set by an option", reserved)
		}
	}
	if s, ok := claims[principal].(string); !ok || strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no principal: set %sStringClaim_%s", pre, principal)
	}
	if len(ext) == 0 {
		ext = nil
	}
	return func(context.Context) (Token, error) {
		now := time.Now()
		exp := now.Add(lifetime)
		c := make(map[string]any, len(claims)+2)
		for k, v := range claims {
			c[k] = v
		}
		c["iat"] = float64(now.UnixMilli()) / 1000
		c["exp"] = float64(exp.UnixMilli()) / 1000
		v, err := UnsecuredJWS(c)
		if err != nil {
			return Token{}, err
		}
		return Token{Value: v, Expiry: time.UnixMilli(exp.UnixMilli()), Extensions: ext}, nil
	}, nil
}

// UnsecuredJWS returns the unsigned JWS (header {"alg":"none"}, empty signature) of claims.
func UnsecuredJWS(claims map[string]any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString(payload) + ".", nil
}

// File returns a provider that reads the token (a JWT) from path at every call (Java's
// FileJwtRetriever, sasl.oauthbearer.token.endpoint.url file:...): something else keeps the
// file fresh.
func File(path string) Provider {
	return func(context.Context) (Token, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return Token{}, err
		}
		return Token{Value: strings.TrimSpace(string(b))}, nil
	}
}

// ClientCredentials is the client-credentials grant (RFC 6749 section 4.4) against a token
// endpoint, Java's ClientCredentialsJwtRetriever.
type ClientCredentials struct {
	URL          string // sasl.oauthbearer.token.endpoint.url
	ClientID     string // sasl.oauthbearer.client.credentials.client.id, or JAAS clientId
	ClientSecret string // sasl.oauthbearer.client.credentials.client.secret, or JAAS clientSecret
	Scope        string // sasl.oauthbearer.scope, or JAAS scope; "" sends none
	// URLEncodeHeader URL-encodes id and secret in the Basic authorization header
	// (sasl.oauthbearer.header.urlencode, RFC 6749 section 2.3.1).
	URLEncodeHeader bool
	Extensions      map[string]string // JAAS extension_<name> options
	// ConnectTimeout and ReadTimeout are sasl.login.connect.timeout.ms and
	// sasl.login.read.timeout.ms; 0 leaves them to the context.
	ConnectTimeout, ReadTimeout time.Duration
	// RetryBackoff and RetryBackoffMax: a failed request (connection failure, 5xx, 408, 429)
	// is retried after RetryBackoff, doubled each time, until the waits would pass
	// RetryBackoffMax (sasl.login.retry.backoff.ms and .max.ms; defaults 100 ms and 10 s).
	RetryBackoff, RetryBackoffMax time.Duration
}

// errPermanent marks an answer no retry changes (4xx other than 408 and 429).
type errPermanent struct{ error }

// Provider returns the provider that asks the endpoint for a token.
func (cc ClientCredentials) Provider() Provider {
	dialer := &net.Dialer{Timeout: cc.ConnectTimeout}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = dialer.DialContext
	tr.ResponseHeaderTimeout = cc.ReadTimeout
	client := &http.Client{Transport: tr}
	if cc.RetryBackoff <= 0 {
		cc.RetryBackoff = 100 * time.Millisecond
	}
	if cc.RetryBackoffMax <= 0 {
		cc.RetryBackoffMax = 10 * time.Second
	}
	return func(ctx context.Context) (Token, error) {
		wait, waited := cc.RetryBackoff, time.Duration(0)
		for {
			t, err := cc.request(ctx, client)
			var perm errPermanent
			if err == nil || errors.As(err, &perm) || waited+wait > cc.RetryBackoffMax {
				return t, err
			}
			select {
			case <-ctx.Done():
				return Token{}, fmt.Errorf("%w (last attempt: %w)", ctx.Err(), err)
			case <-time.After(wait):
			}
			waited += wait
			wait *= 2
		}
	}
}

func (cc ClientCredentials) request(ctx context.Context, client *http.Client) (Token, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if cc.Scope != "" {
		form.Set("scope", cc.Scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cc.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return Token{}, errPermanent{err}
	}
	id, secret := cc.ClientID, cc.ClientSecret
	if cc.URLEncodeHeader {
		id, secret = url.QueryEscape(id), url.QueryEscape(secret)
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(id+":"+secret)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := client.Do(req)
	if err != nil {
		return Token{}, fmt.Errorf("token endpoint %s: %w", cc.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Token{}, fmt.Errorf("token endpoint %s: %w", cc.URL, err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		err := fmt.Errorf("token endpoint %s answered %s: %s", cc.URL, resp.Status, endpointError(body))
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout &&
			resp.StatusCode != http.StatusTooManyRequests {
			return Token{}, errPermanent{err}
		}
		return Token{}, err
	}
	var r struct {
		AccessToken string   `json:"access_token"`
		ExpiresIn   *float64 `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.AccessToken == "" {
		return Token{}, errPermanent{fmt.Errorf("token endpoint %s: no access_token in the answer (%d bytes)", cc.URL, len(body))}
	}
	t := Token{Value: r.AccessToken, Extensions: cc.Extensions}
	if c, err := Claims(r.AccessToken); err == nil {
		if exp, ok := c.Time("exp"); ok {
			t.Expiry = exp
		}
	}
	if t.Expiry.IsZero() && r.ExpiresIn != nil {
		t.Expiry = time.Now().Add(time.Duration(*r.ExpiresIn * float64(time.Second)))
	}
	return t, nil
}

// endpointError is the OAuth error of a refused token request (RFC 6749 section 5.2), or the
// start of the body.
func endpointError(body []byte) string {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		if e.Description != "" {
			return e.Error + ": " + e.Description
		}
		return e.Error
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return strconv.Quote(s)
}
