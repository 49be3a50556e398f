package integration_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// The word count through SASL/OAUTHBEARER on the secured Apache Kafka node's OAUTHBEARER
// listener, whose sessions end when their token expires (connections.max.reauth.ms): tokens
// live 8 s, so within the test every connection the instance opens (admin, group or
// streams-group coordinator, fetch, produce, restore) has to re-authenticate, or be opened
// anew, with a refreshed token, several times.

// oauthLifetime is the lifetime of the test's tokens.
const oauthLifetime = 8 * time.Second

// tokenEvents records what a test's token provider and the instance's connections did, in
// order.
type tokenEvents struct {
	mu     sync.Mutex
	issued []issuedToken // by the provider
	auths  []authUse     // tokens presented by the connections (each authentication)
}

type issuedToken struct {
	at, expiry time.Time
	value      string
}

type authUse struct {
	at, expiry time.Time
}

// provider returns unsecured tokens for sub, living oauthLifetime.
func (ev *tokenEvents) provider(t testing.TB, sub string) kstreams.OAuthBearerTokenProvider {
	return func(ctx context.Context) (kstreams.OAuthBearerToken, error) {
		v, exp := kafkatest.UnsecuredToken(t, sub, oauthLifetime)
		ev.mu.Lock()
		defer ev.mu.Unlock()
		ev.issued = append(ev.issued, issuedToken{at: time.Now(), expiry: exp, value: v})
		return kstreams.OAuthBearerToken{Value: v, Expiry: exp}, nil
	}
}

// watch is a Config.Sarama hook that records every token a connection presents.
func (ev *tokenEvents) watch(sc *sarama.Config) {
	fastSarama(sc)
	inner := sc.Net.SASL.TokenProvider
	if inner == nil {
		return
	}
	sc.Net.SASL.TokenProvider = tokenFunc(func() (*sarama.AccessToken, error) {
		at, err := inner.Token()
		if err != nil {
			return nil, err
		}
		ev.mu.Lock()
		defer ev.mu.Unlock()
		use := authUse{at: time.Now()}
		for _, is := range ev.issued {
			if is.value == at.Token {
				use.expiry = is.expiry
			}
		}
		ev.auths = append(ev.auths, use)
		return at, nil
	})
}

type tokenFunc func() (*sarama.AccessToken, error)

func (f tokenFunc) Token() (*sarama.AccessToken, error) { return f() }

func (ev *tokenEvents) snapshot() ([]issuedToken, []authUse) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return append([]issuedToken(nil), ev.issued...), append([]authUse(nil), ev.auths...)
}

func TestIntegrationOAuthBearer(t *testing.T) {
	sb := kafkatest.Secure(t)
	if len(sb.OAuthBearer) == 0 {
		t.Skip("the secured broker has no OAUTHBEARER listener (started by an older scripts/kafka/kafka.sh)")
	}
	e := newSecureEnv(t, sb)
	admin := e.adminClient(t)
	for _, protocol := range []kstreams.GroupProtocol{kstreams.GroupProtocolClassic, kstreams.GroupProtocolStreams} {
		t.Run("WordCount/"+string(protocol), func(t *testing.T) { oauthWordCount(t, e, admin, protocol) })
	}
	t.Run("ProviderFails", func(t *testing.T) {
		a := e.newSecureApp(t, "oauth-fail")
		cause := errors.New("identity provider unreachable")
		a.security = func(c *kstreams.Config) {
			c.BootstrapServers, c.SecurityProtocol, c.SASLMechanism, c.TLS = sb.OAuthBearer, "SASL_SSL", "OAUTHBEARER", sb.TrustingTLS()
			c.SASLOAuthBearerTokenProvider = func(context.Context) (kstreams.OAuthBearerToken, error) {
				return kstreams.OAuthBearerToken{}, cause
			}
		}
		e.expectFailure(t, a, failure{words: []string{"OAUTHBEARER token provider", cause.Error()}, is: cause})
	})
	t.Run("ProviderFailsLater", func(t *testing.T) { oauthProviderFailsLater(t, e, admin) })
}

// oauthProviderFailsLater: the provider gives one token, then fails. The instance counts a
// batch with that token, keeps it while refreshes fail, and once it has expired fails (ERROR)
// with an error that names the OAUTHBEARER token provider and wraps the provider's error.
func oauthProviderFailsLater(t *testing.T, e *secureEnv, admin sarama.ClusterAdmin) {
	a := e.newSecureApp(t, "oauth-fail-later")
	sub := kafkatest.Name(t, "oauth-user")
	e.grant(t, admin, "User:"+sub, streamsACLs("User:"+sub, a.appID, a.input, a.output, fullGrant))
	cause := errors.New("identity provider gone")
	var mu sync.Mutex
	var expiry time.Time
	var failures int
	a.security = func(c *kstreams.Config) {
		c.BootstrapServers, c.SecurityProtocol, c.SASLMechanism, c.TLS = e.sb.OAuthBearer, "SASL_SSL", "OAUTHBEARER", e.sb.TrustingTLS()
		c.SASLOAuthBearerTokenProvider = func(context.Context) (kstreams.OAuthBearerToken, error) {
			mu.Lock()
			defer mu.Unlock()
			if !expiry.IsZero() {
				failures++
				return kstreams.OAuthBearerToken{}, cause
			}
			v, exp := kafkatest.UnsecuredToken(t, sub, oauthLifetime)
			expiry = exp
			return kstreams.OAuthBearerToken{Value: v, Expiry: exp}, nil
		}
	}
	createTopicsWith(t, e.addrs, e.adminSarama(), 3, a.input, a.output)
	want := produceLinesWith(t, e.addrs, e.adminSarama(), a.input, 100, 41)
	app, err := kstreams.New(wordCountTopology(t, a.input, a.output), a.config(t, kstreams.AtLeastOnce))
	if err != nil {
		t.Fatal(err)
	}
	startApp(t, app)
	out := readOutputWith(t, e.addrs, e.adminSarama(), a.output, sarama.ReadUncommitted)
	out.waitFinal(t, want, 2*time.Minute, app.Err)
	select {
	case <-app.Done():
	case <-time.After(2 * time.Minute):
		t.Fatalf("the instance did not fail after its token expired (state %s)", app.State())
	}
	err = app.Err()
	mu.Lock()
	exp, n := expiry, failures
	mu.Unlock()
	t.Logf("failed after %d failed refreshes: %v", n, err)
	if st := app.State(); st != kstreams.StateError {
		t.Errorf("state %s, want ERROR", st)
	}
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), "OAUTHBEARER token provider") {
		t.Errorf("error %v: want the provider's error, named", err)
	}
	if n == 0 || time.Now().Before(exp) {
		t.Errorf("failed with %d failed refreshes, before the token expired (%s)", n, exp.Format(time.StampMilli))
	}
}

// oauthWordCount runs the word count under exactly_once_v2 as an OAUTHBEARER principal with
// the Streams ACLs: a first batch of lines is counted; then, once the first token has
// expired and every connection has had to re-authenticate at least once, a second batch; the
// read_committed output holds every count exactly once. The token events must be in order:
// the provider is asked for the second token before the first expires (refresh before
// expiry), connections authenticate after the first token expired, and no connection ever
// presents a token that has expired.
func oauthWordCount(t *testing.T, e *secureEnv, admin sarama.ClusterAdmin, protocol kstreams.GroupProtocol) {
	a := e.newSecureApp(t, "oauth-wc")
	sub := kafkatest.Name(t, "oauth-user")
	e.grant(t, admin, "User:"+sub, streamsACLs("User:"+sub, a.appID, a.input, a.output, fullGrant))
	ev := &tokenEvents{}
	a.security = func(c *kstreams.Config) {
		c.BootstrapServers, c.SecurityProtocol, c.SASLMechanism, c.TLS = e.sb.OAuthBearer, "SASL_SSL", "OAUTHBEARER", e.sb.TrustingTLS()
		c.SASLOAuthBearerTokenProvider = ev.provider(t, sub)
		c.Sarama = ev.watch
		c.GroupProtocol = protocol
	}
	createTopicsWith(t, e.addrs, e.adminSarama(), 3, a.input, a.output)
	want := produceLinesWith(t, e.addrs, e.adminSarama(), a.input, 300, 31)
	app, err := kstreams.New(wordCountTopology(t, a.input, a.output), a.config(t, kstreams.ExactlyOnceV2))
	if err != nil {
		t.Fatal(err)
	}
	startApp(t, app)
	out := readOutputWith(t, e.addrs, e.adminSarama(), a.output, sarama.ReadCommitted)
	out.waitFinal(t, want, 2*time.Minute, app.Err)

	// Wait until the first token has expired and one more lifetime has passed: every session
	// begun with the first or second token has ended by then.
	issued, _ := ev.snapshot()
	until := issued[0].expiry.Add(oauthLifetime)
	for time.Now().Before(until) {
		if err := app.Err(); err != nil {
			t.Fatalf("application failed while tokens expired: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // waiting for tokens to expire, the subject of the test
	}
	for w, n := range produceLinesWith(t, e.addrs, e.adminSarama(), a.input, 300, 32) {
		want[w] += n
	}
	out.waitFinal(t, want, 2*time.Minute, app.Err)
	out.checkExactSequences(t, want)
	closeApp(t, app)
	if err := app.Err(); err != nil {
		t.Fatalf("application error: %v", err)
	}

	issued, auths := ev.snapshot()
	t.Logf("%d tokens issued, %d authentications", len(issued), len(auths))
	if len(issued) < 3 {
		t.Fatalf("%d tokens issued over more than two lifetimes, want at least 3", len(issued))
	}
	for i := 1; i < len(issued); i++ {
		if !issued[i].at.Before(issued[i-1].expiry) {
			t.Errorf("token %d was asked for at %s, after token %d expired (%s): not refreshed before expiry",
				i+1, issued[i].at.Format(time.StampMilli), i, issued[i-1].expiry.Format(time.StampMilli))
		}
	}
	after := 0
	for i, u := range auths {
		if u.expiry.IsZero() {
			t.Errorf("authentication %d presented a token the provider did not issue", i+1)
		} else if !u.at.Before(u.expiry) {
			t.Errorf("authentication %d at %s presented a token that expired at %s", i+1, u.at.Format(time.StampMilli), u.expiry.Format(time.StampMilli))
		}
		if u.at.After(issued[0].expiry) {
			after++
		}
	}
	if after == 0 {
		t.Errorf("no connection authenticated after the first token expired")
	}
}
