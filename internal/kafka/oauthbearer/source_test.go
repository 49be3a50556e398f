package oauthbearer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// clock is a settable time for a Source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func newTestSource(p Provider, cfg Refresh, clk *clock) *Source {
	s := NewSource(p, cfg, quiet)
	s.now = clk.Now
	s.rand = func() float64 { return 0 }
	return s
}

// Java's ExpiringCredentialRefreshingLogin rules, worked out by hand for each case: refresh
// at factor (+ jitter) of the lifetime, not later than buffer before expiry, not sooner
// than the minimum period from now; the factor of what is left when both buffers do not fit.
func TestRefreshTime(t *testing.T) {
	for _, tc := range []struct {
		name                string
		factor              float64
		life, min, buf, out time.Duration
	}{
		{"1h token, Java defaults: 0.8 of an hour", 0.8, time.Hour, 60 * time.Second, 300 * time.Second, 48 * time.Minute},
		{"factor 1.0: capped at 300 s before expiry", 1.0, time.Hour, 60 * time.Second, 300 * time.Second, 55 * time.Minute},
		{"10 min token: 8 min would be in the buffer, so 5 min", 0.8, 10 * time.Minute, 60 * time.Second, 300 * time.Second, 5 * time.Minute},
		{"2 min token: buffers do not fit, 0.8 of what is left", 0.8, 2 * time.Minute, 60 * time.Second, 300 * time.Second, 96 * time.Second},
		{"factor 0.5 of 100 s is sooner than the 60 s minimum", 0.5, 100 * time.Second, 60 * time.Second, 0, 60 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSource(nil, Refresh{WindowFactor: tc.factor, MinPeriod: tc.min, Buffer: tc.buf}, &clock{now: t0})
			if got := s.refreshTime(t0, t0, t0.Add(tc.life)).Sub(t0); got != tc.out {
				t.Errorf("refresh after %v, want %v", got, tc.out)
			}
		})
	}
	// The jitter adds up to WindowJitter of the lifetime.
	s := newTestSource(nil, Refresh{WindowFactor: 0.8, WindowJitter: 0.05}, &clock{now: t0})
	s.rand = func() float64 { return 1 }
	if got := s.refreshTime(t0, t0, t0.Add(100*time.Second)).Sub(t0); got != 85*time.Second {
		t.Errorf("with full jitter: refresh after %v, want 85s", got)
	}
}

// counting is a provider of tokens valid for life from the clock's now, or failing while
// fail is set.
type counting struct {
	clk   *clock
	life  time.Duration
	calls atomic.Int32
	fail  atomic.Pointer[error]
}

func (c *counting) provide(ctx context.Context) (Token, error) {
	n := c.calls.Add(1)
	if e := c.fail.Load(); e != nil {
		return Token{}, *e
	}
	return Token{Value: "token-" + string(rune('0'+n)), Expiry: c.clk.Now().Add(c.life)}, nil
}

func TestSourceCachesUntilRefreshTime(t *testing.T) {
	clk := &clock{now: t0}
	p := &counting{clk: clk, life: 100 * time.Second}
	s := newTestSource(p.provide, Refresh{WindowFactor: 0.8}, clk) // refresh at 80 s
	first, err := s.Token()
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(79 * time.Second)
	if again, _ := s.Token(); again.Token != first.Token || p.calls.Load() != 1 {
		t.Fatalf("before the refresh time: token %q after %d calls, want the cached %q", again.Token, p.calls.Load(), first.Token)
	}
	clk.Add(time.Second)
	next, err := s.Token()
	if err != nil || next.Token == first.Token || p.calls.Load() != 2 || s.Fetches() != 2 {
		t.Fatalf("at the refresh time: %q (%v) after %d calls, want a new token", next.Token, err, p.calls.Load())
	}
}

func TestSourceKeepsValidTokenWhenRefreshFails(t *testing.T) {
	clk := &clock{now: t0}
	p := &counting{clk: clk, life: 100 * time.Second}
	s := newTestSource(p.provide, Refresh{WindowFactor: 0.8, RetryBackoff: time.Second, RetryBackoffMax: 4 * time.Second}, clk)
	first, err := s.Token()
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("identity provider down")
	p.fail.Store(&cause)
	clk.Add(80 * time.Second)
	if tok, err := s.Token(); err != nil || tok.Token != first.Token || p.calls.Load() != 2 {
		t.Fatalf("failed refresh with a valid token: %v %v after %d calls, want the cached token", tok, err, p.calls.Load())
	}
	// Within the backoff the provider is not asked again.
	clk.Add(999 * time.Millisecond)
	if _, err := s.Token(); err != nil || p.calls.Load() != 2 {
		t.Fatalf("within the backoff: %v, %d calls, want 2", err, p.calls.Load())
	}
	// After it, it is; the backoff doubles (1 s, 2 s, 4 s, 4 s).
	for i, wait := range []time.Duration{time.Millisecond, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		clk.Add(wait)
		if _, err := s.Token(); err != nil || p.calls.Load() != int32(3+i) {
			t.Fatalf("retry %d: %v, %d calls, want %d", i+1, err, p.calls.Load(), 3+i)
		}
	}
	// Once the token expired, the provider's failure is the error; within the backoff the
	// provider is not asked again and the same error is returned.
	clk.Add(20 * time.Second)
	_, err = s.Token()
	if !errors.Is(err, ErrProvider) || !errors.Is(err, cause) || p.calls.Load() != 7 {
		t.Fatalf("after expiry: %v after %d calls, want ErrProvider wrapping the cause at call 7", err, p.calls.Load())
	}
	p.fail.Store(nil)
	if _, err := s.Token(); !errors.Is(err, cause) || p.calls.Load() != 7 {
		t.Fatalf("within the backoff: %v after %d calls, want the last error and no call", err, p.calls.Load())
	}
	// After it, the recovered provider gives a new token.
	clk.Add(4 * time.Second)
	if tok, err := s.Token(); err != nil || tok.Token == first.Token || p.calls.Load() != 8 {
		t.Fatalf("after recovery: %v %v", tok, err)
	}
}

func TestSourceChecksTokens(t *testing.T) {
	clk := &clock{now: t0}
	jwt := func(claims map[string]any) string {
		b, _ := json.Marshal(claims)
		return "eyJhbGciOiJub25lIn0." + base64.RawURLEncoding.EncodeToString(b) + "."
	}
	for _, tc := range []struct {
		name string
		tok  Token
		want string // error text; "" for a good token
		exp  time.Time
	}{
		{"expiry from the JWT", Token{Value: jwt(map[string]any{"sub": "a", "exp": float64(t0.Unix() + 60)})}, "", t0.Add(time.Minute)},
		{"fractional exp", Token{Value: jwt(map[string]any{"exp": float64(t0.UnixMilli()+1500) / 1000})}, "", t0.Add(1500 * time.Millisecond)},
		{"empty", Token{}, "empty token", time.Time{}},
		{"opaque without expiry", Token{Value: "opaque"}, "not a JWT", time.Time{}},
		{"JWT without exp", Token{Value: jwt(map[string]any{"sub": "a"})}, `no "exp" claim`, time.Time{}},
		{"expired", Token{Value: "x", Expiry: t0.Add(-time.Second)}, "expired", time.Time{}},
		{"auth extension", Token{Value: "x", Expiry: t0.Add(time.Hour), Extensions: map[string]string{"auth": "y"}}, "reserved", time.Time{}},
		{"space", Token{Value: "a b", Expiry: t0.Add(time.Hour)}, "space", time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSource(func(context.Context) (Token, error) { return tc.tok, nil }, Refresh{}, clk)
			got, err := s.Current(context.Background())
			if tc.want == "" {
				if err != nil || !got.Expiry.Equal(tc.exp) {
					t.Fatalf("got %v, %v; want expiry %v", got.Expiry, err, tc.exp)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an ErrProvider error containing %q", err, tc.want)
			}
		})
	}
}

// Many connections ask at once (run with -race): one provider call per refresh, and every
// token handed out is unexpired at the time it was asked for.
func TestSourceConcurrent(t *testing.T) {
	clk := &clock{now: t0}
	// Tokens live 20 s, longer than the 10 s the clock moves in all: a caller descheduled
	// between the provider's clock read and the source's expiry check, while the loop below
	// runs to its end, must still get a token that has not expired (with a 10 s life it got
	// "expired", and every later call the error, inside a backoff the stopped clock never left).
	p := &counting{clk: clk, life: 20 * time.Second}
	s := newTestSource(p.provide, Refresh{WindowFactor: 0.5}, clk) // refresh every 10 s
	var wg sync.WaitGroup
	var bad atomic.Int32
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				// The clock moves on beside the call: a token must be unexpired when the call
				// began (reading the clock after it would race with the advancing loop below).
				began := clk.Now()
				tok, err := s.Current(context.Background())
				if err != nil || !began.Before(tok.Expiry) {
					bad.Add(1)
				}
			}
		}()
	}
	for i := 0; i < 100; i++ {
		clk.Add(100 * time.Millisecond) // 10 s in all: a refresh due at the end
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d tokens expired or failed", bad.Load())
	}
	if n := p.calls.Load(); n < 1 || n > 2 {
		t.Fatalf("%d provider calls for 10 s of 10-s refreshes, want 1 or 2", n)
	}
}

func TestClientCredentials(t *testing.T) {
	jwtExp := t0.Add(time.Hour)
	claims, _ := json.Marshal(map[string]any{"sub": "svc", "exp": jwtExp.Unix()})
	accessJWT := "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(claims) + ".c2ln"
	var mu sync.Mutex
	var got []*http.Request
	var forms []url.Values
	answers := []func(w http.ResponseWriter){}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		got = append(got, r)
		forms = append(forms, r.PostForm)
		a := answers[0]
		if len(answers) > 1 {
			answers = answers[1:]
		}
		mu.Unlock()
		a(w)
	}))
	defer srv.Close()
	reset := func(a ...func(w http.ResponseWriter)) {
		mu.Lock()
		defer mu.Unlock()
		got, forms, answers = nil, nil, a
	}
	ok := func(body string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, body)
		}
	}
	status := func(code int, body string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) { w.WriteHeader(code); _, _ = io.WriteString(w, body) }
	}
	cc := ClientCredentials{URL: srv.URL, ClientID: "my client", ClientSecret: "s3cr:et", Scope: "kafka streams",
		Extensions: map[string]string{"logicalCluster": "lkc-1"}, RetryBackoff: time.Millisecond, RetryBackoffMax: 10 * time.Millisecond}

	t.Run("JWT", func(t *testing.T) {
		reset(ok(`{"access_token":"` + accessJWT + `","token_type":"Bearer","expires_in":60}`))
		tok, err := cc.Provider()(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if tok.Value != accessJWT || !tok.Expiry.Equal(jwtExp) || tok.Extensions["logicalCluster"] != "lkc-1" {
			t.Fatalf("token %+v: want the JWT, expiry %v from its exp claim, the extension", tok, jwtExp)
		}
		r := got[0]
		user, pass, _ := r.BasicAuth()
		if r.Method != http.MethodPost || user != "my client" || pass != "s3cr:et" {
			t.Errorf("request %s with basic auth %q:%q", r.Method, user, pass)
		}
		if f := forms[0]; f.Get("grant_type") != "client_credentials" || f.Get("scope") != "kafka streams" {
			t.Errorf("form %v", f)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
			t.Errorf("Content-Type %q", ct)
		}
	})
	t.Run("URLEncodedHeader", func(t *testing.T) {
		reset(ok(`{"access_token":"` + accessJWT + `"}`))
		c := cc
		c.URLEncodeHeader = true
		if _, err := c.Provider()(context.Background()); err != nil {
			t.Fatal(err)
		}
		raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(got[0].Header.Get("Authorization"), "Basic "))
		if string(raw) != "my+client:s3cr%3Aet" {
			t.Errorf("authorization %q", raw)
		}
	})
	t.Run("OpaqueWithExpiresIn", func(t *testing.T) {
		reset(ok(`{"access_token":"opaque","expires_in":120}`))
		before := time.Now()
		tok, err := cc.Provider()(context.Background())
		if err != nil || tok.Value != "opaque" || tok.Expiry.Before(before.Add(120*time.Second)) || tok.Expiry.After(time.Now().Add(120*time.Second)) {
			t.Fatalf("%+v %v: want expiry 120 s from the answer", tok, err)
		}
	})
	t.Run("RefusedNotRetried", func(t *testing.T) {
		reset(status(401, `{"error":"invalid_client","error_description":"bad secret"}`))
		_, err := cc.Provider()(context.Background())
		if err == nil || !strings.Contains(err.Error(), "invalid_client: bad secret") || !strings.Contains(err.Error(), "401") || len(got) != 1 {
			t.Fatalf("%v after %d requests: want one request and the OAuth error", err, len(got))
		}
	})
	t.Run("UnavailableRetried", func(t *testing.T) {
		reset(status(503, "busy"), ok(`{"access_token":"`+accessJWT+`"}`))
		tok, err := cc.Provider()(context.Background())
		if err != nil || tok.Value != accessJWT || len(got) != 2 {
			t.Fatalf("%v after %d requests: want the token at the second", err, len(got))
		}
	})
	t.Run("UnavailableGivesUp", func(t *testing.T) {
		reset(status(503, "busy"))
		_, err := cc.Provider()(context.Background())
		// Waits 1, 2, 4 ms (7 ms of the 10 allowed; 8 more would pass it): 4 requests.
		if err == nil || !strings.Contains(err.Error(), "503") || len(got) != 4 {
			t.Fatalf("%v after %d requests, want 4 and the 503", err, len(got))
		}
	})
}

func TestUnsecured(t *testing.T) {
	p, err := Unsecured(map[string]string{"unsecuredLoginStringClaim_sub": "alice", "unsecuredLoginNumberClaim_n": "7",
		"unsecuredLoginListClaim_scope": ",a,b", "unsecuredLoginLifetimeSeconds": "90", "unsecuredLoginExtension_traceId": "t1"})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Truncate(time.Millisecond)
	tok, err := p(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok.Value, ".")
	if len(parts) != 3 || parts[2] != "" {
		t.Fatalf("%q: want header.payload. (empty signature)", tok.Value)
	}
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if string(h) != `{"alg":"none"}` {
		t.Errorf("header %s", h)
	}
	var c map[string]any
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	iat, exp := c["iat"].(float64), c["exp"].(float64)
	if c["sub"] != "alice" || c["n"] != 7.0 || exp-iat != 90 || iat < float64(before.UnixMilli())/1000 {
		t.Errorf("claims %v", c)
	}
	if sc, _ := c["scope"].([]any); len(sc) != 2 || sc[0] != "a" || sc[1] != "b" {
		t.Errorf("scope %v", c["scope"])
	}
	if !tok.Expiry.Equal(time.UnixMilli(int64(exp*1000))) || tok.Extensions["traceId"] != "t1" {
		t.Errorf("expiry %v, extensions %v", tok.Expiry, tok.Extensions)
	}
	if _, err := Unsecured(map[string]string{"unsecuredLoginStringClaim_name": "x"}); err == nil || !strings.Contains(err.Error(), "unsecuredLoginStringClaim_sub") {
		t.Errorf("without sub: %v", err)
	}
}
