// Package oauthbearer gets the access tokens of SASL/OAUTHBEARER (KIP-255, KIP-768) for every
// connection the library opens: a Source caches the token a Provider returns and asks for a
// new one once the cached one reaches its refresh time (Java's sasl.login.refresh.* rules), so
// that new connections and re-authentications (KIP-368) always present an unexpired token.
// Providers for the Java properties live here too: a client-credentials grant against a token
// endpoint, a token file, and Kafka's unsecured JWS (for test brokers).
package oauthbearer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// Token is an access token, when it expires and the SASL extensions sent with it.
type Token struct {
	Value      string
	Expiry     time.Time // zero: read from the JWT's "exp" claim
	Extensions map[string]string
}

// Provider returns a new token. ctx ends after Refresh.Timeout.
type Provider func(ctx context.Context) (Token, error)

// ErrProvider marks every error of a Source whose provider failed while it had no unexpired
// token: no connection can authenticate, which no retry of the connection cures.
var ErrProvider = errors.New("OAUTHBEARER token provider failed")

// Refresh are the refresh rules, Java's sasl.login.refresh.* and sasl.login.retry.backoff.*.
type Refresh struct {
	WindowFactor float64       // sasl.login.refresh.window.factor, 0.5..1.0; default 0.8
	WindowJitter float64       // sasl.login.refresh.window.jitter, 0..0.25; default 0.05
	MinPeriod    time.Duration // sasl.login.refresh.min.period.seconds, 0..900 s; default 60 s
	Buffer       time.Duration // sasl.login.refresh.buffer.seconds, 0..3600 s; default 300 s
	// RetryBackoff is the wait after a failed refresh while the cached token is still valid,
	// doubled after each failure up to RetryBackoffMax (sasl.login.retry.backoff.ms and
	// .max.ms; defaults 100 ms and 10 s).
	RetryBackoff, RetryBackoffMax time.Duration
	// Timeout bounds one call of the provider; default 30 s.
	Timeout time.Duration
}

// DefaultRefresh are Java's defaults.
func DefaultRefresh() Refresh {
	return Refresh{WindowFactor: 0.8, WindowJitter: 0.05, MinPeriod: 60 * time.Second, Buffer: 300 * time.Second,
		RetryBackoff: 100 * time.Millisecond, RetryBackoffMax: 10 * time.Second, Timeout: 30 * time.Second}
}

// Source caches a provider's token for all connections of an application instance; it is
// sarama's Net.SASL.TokenProvider. Safe for concurrent use.
type Source struct {
	provider Provider
	cfg      Refresh
	log      *slog.Logger
	now      func() time.Time
	rand     func() float64

	mu        sync.Mutex
	tok       Token
	refreshAt time.Time // when tok is to be replaced
	retryAt   time.Time // after a failed refresh: no new attempt before
	backoff   time.Duration
	lastErr   error // the last failure when no valid token was left
	fetches   int   // provider calls that returned a token
}

// NewSource returns a Source over p; zero fields of cfg take DefaultRefresh's values, logger
// nil means slog.Default().
func NewSource(p Provider, cfg Refresh, logger *slog.Logger) *Source {
	d := DefaultRefresh()
	if cfg.WindowFactor == 0 {
		cfg.WindowFactor = d.WindowFactor
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = d.RetryBackoff
	}
	if cfg.RetryBackoffMax <= 0 {
		cfg.RetryBackoffMax = d.RetryBackoffMax
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = d.Timeout
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Source{provider: p, cfg: cfg, log: logger, now: time.Now, rand: rand.Float64}
}

// Token returns the cached token, asking the provider for a new one first when the cached
// one has reached its refresh time (or there is none). After a failure the provider is not
// asked again before a backoff (RetryBackoff, doubling up to RetryBackoffMax): while the
// cached token has not expired it is returned (the failure is logged); without an unexpired
// token the error wraps ErrProvider and the provider's error. It implements
// sarama.AccessTokenProvider.
func (s *Source) Token() (*sarama.AccessToken, error) {
	t, err := s.Current(context.Background())
	if err != nil {
		return nil, err
	}
	return &sarama.AccessToken{Token: t.Value, Extensions: t.Extensions}, nil
}

// Current is Token with a context and our token type.
func (s *Source) Current(ctx context.Context) (Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	valid := s.tok.Value != "" && now.Before(s.tok.Expiry)
	if valid && (now.Before(s.refreshAt) || now.Before(s.retryAt)) {
		return s.tok, nil
	}
	if !valid && s.lastErr != nil && now.Before(s.retryAt) {
		return Token{}, s.lastErr // within the backoff: the provider is not asked again yet
	}
	t, err := s.fetch(ctx)
	now = s.now()
	if err != nil {
		if s.backoff == 0 {
			s.backoff = s.cfg.RetryBackoff
		} else {
			s.backoff = min(2*s.backoff, s.cfg.RetryBackoffMax)
		}
		s.retryAt = now.Add(s.backoff)
		if valid && now.Before(s.tok.Expiry) {
			s.log.Warn("OAUTHBEARER token refresh failed; the current token is used until it expires",
				"expires", s.tok.Expiry, "retry_in", s.backoff, "err", err)
			return s.tok, nil
		}
		s.lastErr = fmt.Errorf("%w: %w", ErrProvider, err)
		return Token{}, s.lastErr
	}
	s.fetches++
	s.tok, s.backoff, s.retryAt, s.lastErr = t, 0, time.Time{}, nil
	s.refreshAt = s.refreshTime(now, now, t.Expiry)
	s.log.Debug("OAUTHBEARER token obtained", "expires", t.Expiry, "refresh_at", s.refreshAt)
	return t, nil
}

// Fetches returns how many tokens the provider has returned to s.
func (s *Source) Fetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

// fetch calls the provider within the timeout and checks its token: a value, an expiry in
// the future (from the JWT's exp claim when the provider left it zero), no "auth" extension.
func (s *Source) fetch(ctx context.Context) (Token, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	t, err := s.provider(ctx)
	if err != nil {
		return Token{}, err
	}
	if t.Value == "" {
		return Token{}, errors.New("the provider returned an empty token")
	}
	if strings.ContainsAny(t.Value, "\x01 ") {
		return Token{}, errors.New("the token holds a space or a control-A, which OAUTHBEARER cannot carry")
	}
	if _, ok := t.Extensions["auth"]; ok {
		return Token{}, errors.New(`the extension name "auth" is reserved (RFC 7628)`)
	}
	if t.Expiry.IsZero() {
		c, err := Claims(t.Value)
		if err != nil {
			return Token{}, fmt.Errorf("the token has no Expiry and is not a JWT: %w", err)
		}
		exp, ok := c.Time("exp")
		if !ok {
			return Token{}, errors.New(`the token has no Expiry and its JWT has no "exp" claim`)
		}
		t.Expiry = exp
	}
	if !t.Expiry.After(s.now()) {
		return Token{}, fmt.Errorf("the provider returned a token that expired at %s", t.Expiry.Format(time.RFC3339Nano))
	}
	return t, nil
}

// refreshTime is when a token valid from start to expiry, obtained at now, is to be replaced:
// at WindowFactor (plus up to WindowJitter) of its lifetime, but not later than Buffer before
// expiry and not sooner than MinPeriod from now; when MinPeriod and Buffer do not both fit
// in what is left of the lifetime, at the factor of what is left. Java:
// ExpiringCredentialRefreshingLogin's rules.
func (s *Source) refreshTime(now, start, expiry time.Time) time.Time {
	pct := s.cfg.WindowFactor + s.cfg.WindowJitter*s.rand()
	if now.Add(s.cfg.MinPeriod + s.cfg.Buffer).After(expiry) {
		return now.Add(time.Duration(float64(expiry.Sub(now)) * pct))
	}
	at := start.Add(time.Duration(float64(expiry.Sub(start)) * pct))
	if end := expiry.Add(-s.cfg.Buffer); at.After(end) {
		return end
	}
	if first := now.Add(s.cfg.MinPeriod); at.Before(first) {
		return first
	}
	return at
}

// JWTClaims are the claims of a JWT's payload.
type JWTClaims map[string]any

// Claims decodes the payload of a JWT in compact serialization (header.payload.signature,
// base64url); the signature is not checked.
func Claims(jwt string) (JWTClaims, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("a JWT has 3 dot-separated parts, this one %d", len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil, fmt.Errorf("JWT payload: %w", err)
	}
	var c JWTClaims
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("JWT payload: %w", err)
	}
	return c, nil
}

// Time reads a NumericDate claim (seconds since the epoch, possibly fractional).
func (c JWTClaims) Time(name string) (time.Time, bool) {
	v, ok := c[name].(float64)
	if !ok {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(v * 1000)), true
}
