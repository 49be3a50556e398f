package streamsgroup

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// saslConfig is a SASL_SSL sarama config for user and password with mechanism m.
func saslConfig(sb kafkatest.SecureBroker, m sarama.SASLMechanism, user, password string) *sarama.Config {
	sc := kafkatest.SaramaConfig()
	sc.Net.TLS.Enable, sc.Net.TLS.Config = true, sb.TrustingTLS()
	sc.Net.SASL.Enable, sc.Net.SASL.Mechanism, sc.Net.SASL.User, sc.Net.SASL.Password = true, m, user, password
	switch m {
	case sarama.SASLTypeSCRAMSHA256:
		sc.Net.SASL.SCRAMClientGeneratorFunc = kafka.SCRAMSHA256
	case sarama.SASLTypeSCRAMSHA512:
		sc.Net.SASL.SCRAMClientGeneratorFunc = kafka.SCRAMSHA512
	}
	return sc
}

func dialWith(t *testing.T, addr string, sc *sarama.Config) (*Conn, error) {
	t.Helper()
	cfg, err := ConfigFromSarama(sc, "streamsgroup-test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, cfg)
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

// On the secured Apache Kafka node of make test: over SASL_SSL (SCRAM-SHA-512) a member
// joins, is described and leaves; a wrong password is ErrAuthentication; over mTLS a
// principal without ACLs is answered GROUP_AUTHORIZATION_FAILED; a broker certificate not
// trusted fails the TLS handshake.
func TestIntegrationSecure(t *testing.T) {
	sb := kafkatest.Secure(t)
	admin := saslConfig(sb, sarama.SASLTypeSCRAMSHA512, sb.AdminUser, sb.AdminPassword)
	br := kafkatest.Broker{Kind: kafkatest.ApacheKafka, Addrs: sb.SASLSSL}
	group := kafkatest.Name(t, "sgsecure")
	topic := group + "-input"
	kafkatest.CreateTopicsWith(t, sb.SASLSSL, admin, 1, nil, topic)
	c, _ := coordinatorConn(t, br, admin, group)
	m := &member{t: t, c: c, group: group, id: uuid(t), pid: uuid(t)}
	m.join(&Topology{Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{topic}}}})
	m.untilAssigned([]Tasks{{Subtopology: "0", Partitions: []int32{0}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := c.Describe(ctx, &DescribeRequest{GroupIDs: []string{group}})
	if err != nil || d.Groups[0].Err() != nil || len(d.Groups[0].Members) != 1 || d.Groups[0].Members[0].ProcessID != m.pid {
		t.Fatalf("describe over SASL_SSL: %v %+v", err, d)
	}
	m.heartbeat(&HeartbeatRequest{GroupID: group, MemberID: m.id, MemberEpoch: LeaveEpoch, RebalanceTimeoutMs: -1})
	if m.lastErr != nil {
		t.Fatalf("leave: %v", m.lastErr)
	}

	if _, err := dialWith(t, c.Addr(), saslConfig(sb, sarama.SASLTypeSCRAMSHA512, sb.AdminUser, "wrong")); !errors.Is(err, ErrAuthentication) ||
		!errors.Is(err, sarama.ErrSASLAuthenticationFailed) {
		t.Fatalf("wrong password: %v, want ErrAuthentication (SASL_AUTHENTICATION_FAILED)", err)
	}

	// mTLS: the listener maps the certificate to User:CN=<name>, which has no ACLs.
	mc, err := dialWith(t, sb.SSL[0], sb.MTLSSaramaConfig(t, "sg-nobody"))
	if err != nil {
		t.Fatalf("mTLS: %v", err)
	}
	d, err = mc.Describe(ctx, &DescribeRequest{GroupIDs: []string{group}})
	if err != nil || !errors.Is(d.Groups[0].Err(), sarama.ErrGroupAuthorizationFailed) {
		t.Fatalf("describe as a principal without ACLs: %v %v, want GROUP_AUTHORIZATION_FAILED", err, d.Groups[0].Err())
	}
	untrusting := kafkatest.SaramaConfig()
	untrusting.Net.TLS.Enable, untrusting.Net.TLS.Config = true, &tls.Config{MinVersion: tls.VersionTLS12}
	var cv *tls.CertificateVerificationError
	if _, err := dialWith(t, sb.SSL[0], untrusting); !errors.As(err, &cv) {
		t.Fatalf("untrusted broker certificate: %v, want a certificate verification error", err)
	}
}

// On kfake with TLS and SASL: PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 authenticate, a wrong
// password fails Dial, and the streams requests, which kfake does not serve, are
// ErrUnsupported from its ApiVersions (sent before anything else).
func TestSecureEmbedded(t *testing.T) {
	pass := kafkatest.RandomPassword(t)
	sb := kafkatest.EmbeddedSecure(t, kfake.Superuser("PLAIN", "plain", pass), kfake.Superuser("SCRAM-SHA-256", "scram256", pass))
	addr := sb.SASLSSL[0]
	for _, c := range []struct {
		m          sarama.SASLMechanism
		user, pass string
	}{
		{sarama.SASLTypePlaintext, "plain", pass},
		{sarama.SASLTypeSCRAMSHA256, "scram256", pass},
		{sarama.SASLTypeSCRAMSHA512, sb.AdminUser, sb.AdminPassword},
	} {
		conn, err := dialWith(t, addr, saslConfig(sb, c.m, c.user, c.pass))
		if err != nil {
			t.Fatalf("%s: %v", c.m, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = conn.Heartbeat(ctx, &HeartbeatRequest{GroupID: "g", MemberID: "m"})
		cancel()
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("%s: heartbeat on kfake: %v, want ErrUnsupported", c.m, err)
		}
		// kfake closes the connection on a wrong password (Kafka answers
		// SASL_AUTHENTICATION_FAILED: TestIntegrationSecure).
		if _, err := dialWith(t, addr, saslConfig(sb, c.m, c.user, "wrong")); err == nil || !strings.Contains(err.Error(), "SASL "+string(c.m)+" authentication") {
			t.Fatalf("%s: wrong password: %v, want a failed SASL authentication", c.m, err)
		}
	}
}
