package streamsgroup

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// tokenLog is a token provider of unsecured tokens for one principal that records each
// token it hands out.
type tokenLog struct {
	t        testing.TB
	sub      string
	lifetime time.Duration
	mu       sync.Mutex
	issued   []time.Time // issue times
	expiry   []time.Time
}

func (l *tokenLog) Token() (*sarama.AccessToken, error) {
	tok, exp := kafkatest.UnsecuredToken(l.t, l.sub, l.lifetime)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.issued = append(l.issued, time.Now())
	l.expiry = append(l.expiry, exp)
	return &sarama.AccessToken{Token: tok}, nil
}

func (l *tokenLog) snapshot() (issued, expiry []time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.issued...), append([]time.Time(nil), l.expiry...)
}

func oauthConfig(sb kafkatest.SecureBroker, p sarama.AccessTokenProvider) *sarama.Config {
	sc := kafkatest.SaramaConfig()
	sc.Net.TLS.Enable, sc.Net.TLS.Config = true, sb.TrustingTLS()
	sc.Net.SASL.Enable, sc.Net.SASL.Mechanism, sc.Net.SASL.TokenProvider = true, sarama.SASLTypeOAuth, p
	return sc
}

// On the OAUTHBEARER listener of the secured Apache Kafka node, whose sessions end when their
// token expires: a connection authenticates with a short-lived token and keeps answering
// past that token's expiry because it re-authenticates with a new one first (the provider
// is asked again before the first token expires, on the same connection); a token the broker
// refuses (expired) is ErrAuthentication with the broker's reason. The control: without
// re-authentication the broker closes the connection once the token expired.
func TestIntegrationOAuthBearer(t *testing.T) {
	sb := kafkatest.Secure(t)
	if len(sb.OAuthBearer) == 0 {
		t.Skip("the secured broker has no OAUTHBEARER listener (started by an older scripts/kafka/kafka.sh)")
	}
	group := kafkatest.Name(t, "sgoauth")
	t.Run("Reauthenticates", func(t *testing.T) {
		l := &tokenLog{t: t, sub: kafkatest.Name(t, "oauth-user"), lifetime: 6 * time.Second}
		c, err := dialWith(t, sb.OAuthBearer[0], oauthConfig(sb, l))
		if err != nil {
			t.Fatal(err)
		}
		_, firstExpiry := l.snapshot()
		deadline := time.Now().Add(60 * time.Second)
		answered := 0
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			d, err := c.Describe(ctx, &DescribeRequest{GroupIDs: []string{group}})
			cancel()
			if err != nil {
				issued, _ := l.snapshot()
				t.Fatalf("Describe %d on the connection (tokens issued %d): %v", answered+1, len(issued), err)
			}
			// No ACLs: authenticated, not authorized.
			if got := sarama.KError(d.Groups[0].ErrorCode); got != sarama.ErrGroupAuthorizationFailed {
				t.Fatalf("group error %v, want GROUP_AUTHORIZATION_FAILED", got)
			}
			answered++
			issued, _ := l.snapshot()
			if len(issued) >= 2 && time.Now().After(firstExpiry[0].Add(time.Second)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d tokens issued after %d answers", len(issued), answered)
			}
			time.Sleep(50 * time.Millisecond) // request pace, bounded by the deadline
		}
		issued, _ := l.snapshot()
		if !issued[1].Before(firstExpiry[0]) {
			t.Errorf("the second token was asked for at %s, after the first expired (%s)", issued[1], firstExpiry[0])
		}
		t.Logf("%d answers on one connection, %d tokens", answered, len(issued))
	})
	t.Run("ExpiredSessionClosed", func(t *testing.T) {
		// The control: the listener does end sessions. A connection that does not
		// re-authenticate is closed at its first request after the token expired.
		l := &tokenLog{t: t, sub: kafkatest.Name(t, "oauth-user"), lifetime: 3 * time.Second}
		c, err := dialWith(t, sb.OAuthBearer[0], oauthConfig(sb, l))
		if err != nil {
			t.Fatal(err)
		}
		c.authMu.Lock()
		c.reauthAt = time.Time{} // never re-authenticate
		c.authMu.Unlock()
		_, expiry := l.snapshot()
		for time.Now().Before(expiry[0].Add(500 * time.Millisecond)) {
			time.Sleep(100 * time.Millisecond) // waiting for the token to expire, the subject of the test
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.Describe(ctx, &DescribeRequest{GroupIDs: []string{group}}); err == nil {
			t.Fatal("a request after the session expired was answered: the listener does not end sessions")
		} else {
			t.Logf("after expiry: %v", err)
		}
	})
	t.Run("RefusedToken", func(t *testing.T) {
		expired := providerFunc(func() (*sarama.AccessToken, error) {
			tok, _ := kafkatest.UnsecuredToken(t, "expired-user", -time.Minute)
			return &sarama.AccessToken{Token: tok}, nil
		})
		_, err := dialWith(t, sb.OAuthBearer[0], oauthConfig(sb, expired))
		if !errors.Is(err, ErrAuthentication) || !errors.Is(err, sarama.ErrSASLAuthenticationFailed) {
			t.Fatalf("want ErrAuthentication with SASL_AUTHENTICATION_FAILED, got %v", err)
		}
		if !strings.Contains(err.Error(), "OAUTHBEARER") {
			t.Errorf("the error does not name the mechanism: %v", err)
		}
		t.Logf("refused: %v", err)
	})
	t.Run("ProviderFails", func(t *testing.T) {
		cause := errors.New("identity provider unreachable")
		failing := providerFunc(func() (*sarama.AccessToken, error) { return nil, cause })
		_, err := dialWith(t, sb.OAuthBearer[0], oauthConfig(sb, failing))
		if !errors.Is(err, cause) {
			t.Fatalf("want the provider's error, got %v", err)
		}
	})
}

type providerFunc func() (*sarama.AccessToken, error)

func (f providerFunc) Token() (*sarama.AccessToken, error) { return f() }
