package interop

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/conformance"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// A Java Kafka Streams 4.4 instance on group.protocol=streams (KIP-1071) holds the group; our
// instance, on the classic protocol, started with the same application id fails at once:
// Run returns an error naming the group and the protocol mismatch instead of retrying, and
// the Java instance keeps running and counting exactly.
func TestIntegrationClassicMemberAgainstStreamsGroup(t *testing.T) {
	b := kafkatest.Real(t)
	conformance.JavaFromEnv(t)
	a := newAppTopics(t, b, "protostreams")
	out := readLatest(t, b, sarama.ReadCommitted, a.output, a.windowed)
	e := newExpected()
	e.produce(t, b, a.input, 200)
	j := startJava(t, b, a, t.TempDir(), kstreams.AtLeastOnce, "--group-protocol", "streams")
	out.waitExact(t, a, e, "java", j.alive)

	app, err := kstreams.New(goTopology(t, a), goConfig(b, a, t.TempDir(), kstreams.AtLeastOnce))
	if err != nil {
		t.Fatal(err)
	}
	// Run's context is far longer than the answer takes: an error from the context would
	// mean the join was retried until it ended.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	err = app.Run(ctx)
	t.Logf("Run returned after %v: %v", time.Since(start), err)
	if err == nil || ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v (context %v), want the group's protocol error before the context ends", err, ctx.Err())
	}
	var pm *group.ProtocolMismatchError
	if !errors.As(err, &pm) || !errors.Is(err, group.ErrFatal) || !errors.Is(err, sarama.ErrInconsistentGroupProtocol) {
		t.Fatalf("Run = %v, want a *group.ProtocolMismatchError (fatal, INCONSISTENT_GROUP_PROTOCOL)", err)
	}
	if pm.GroupID != a.app || pm.GroupType != group.GroupTypeStreams {
		t.Fatalf("mismatch %+v, want group %s of type streams", pm, a.app)
	}
	for _, want := range []string{a.app, "streams group (KIP-1071", "group.protocol=streams"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run's error %q does not say %q", err, want)
		}
	}
	if app.State() != kstreams.Error {
		t.Errorf("state after Run: %v", app.State())
	}

	// The Java instance was not disturbed: it keeps its tasks and counts the next lines.
	e.produce(t, b, a.input, 100)
	out.waitExact(t, a, e, "java", j.alive)
	j.stop()
}
