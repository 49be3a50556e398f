package group

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// TestCertificateRefused: the broker refuses our client certificate once the member's Cluster
// is connected (metadata, and the connection FindCoordinator uses): Join, whose JoinGroup
// needs a new connection, fails at once with an authentication error instead of retrying
// until its context ends (the stream thread's has no deadline); so does a member whose
// coordinator lookup needs a new connection.
func TestCertificateRefused(t *testing.T) {
	sb := kafkatest.EmbeddedMTLS(t)
	newMember := func(warm bool) *Member {
		cl, err := kafka.NewCluster(kafka.Config{Brokers: sb.SSL, Sarama: sb.MTLSSaramaConfig(t, "app")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.Close() })
		group := kafkatest.Name(t, "group")
		if warm {
			if _, err := cl.FindCoordinator(context.Background(), group, sarama.CoordinatorGroup); err != nil {
				t.Fatal(err)
			}
		}
		m, err := New(Config{Cluster: cl, GroupID: group, ClientID: "auth-test", SessionTimeout: 3 * time.Second,
			HeartbeatInterval: 100 * time.Millisecond, RebalanceTimeout: 20 * time.Second, RetryBackoff: 50 * time.Millisecond,
			Topics: []string{"t"}, Assignor: &testAssignor{name: "a"},
			Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		return m
	}
	warm, cold := newMember(true), newMember(false)
	sb.RefuseClientCertificates(t)
	for name, m := range map[string]*Member{"JoinGroup connection refused": warm, "FindCoordinator connection refused": cold} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := m.Join(ctx)
		if err == nil || ctx.Err() != nil || !kafka.AuthError(err) {
			t.Errorf("%s: Join: %v (ctx %v), want an authentication error at once", name, err, ctx.Err())
		}
		cancel()
	}
}
