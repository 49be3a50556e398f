package group

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// A group held by a member of another protocol type: Join fails at once (no retry), with a
// *ProtocolMismatchError naming the group and what the coordinator lists for it. The streams
// group (KIP-1071) case is tested against Java Kafka Streams in internal/interop and against
// a streams member of our own in internal/kafka/streamsgroup.
func TestProtocolMismatch(t *testing.T)            { testProtocolMismatch(t, kafkatest.Embedded(t)) }
func TestIntegrationProtocolMismatch(t *testing.T) { testProtocolMismatch(t, kafkatest.Real(t)) }

func testProtocolMismatch(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	topic := e.topic("mismatch", 1)
	group := kafkatest.Name(t, "group")

	// A raw member of protocol type "connect" forms the group's generation.
	cl := e.cluster()
	coord, err := cl.FindCoordinator(context.Background(), group, sarama.CoordinatorGroup)
	if err != nil {
		t.Fatal(err)
	}
	conf := kafkatest.SaramaConfig()
	conf.Net.ReadTimeout = time.Minute
	raw := sarama.NewBroker(coord.Addr)
	if err := raw.Open(conf); err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	jreq := &sarama.JoinGroupRequest{Version: 8, GroupId: group, SessionTimeout: int32(e.session.Milliseconds()),
		RebalanceTimeout: int32(e.rebalance.Milliseconds()), ProtocolType: "connect",
		OrderedGroupProtocols: []*sarama.GroupProtocol{{Name: "sessioned", Metadata: []byte{0}}}}
	resp, err := raw.JoinGroup(jreq)
	if err == nil && resp.Err == sarama.ErrMemberIdRequired {
		jreq.MemberId = resp.MemberId
		resp, err = raw.JoinGroup(jreq)
	}
	if err != nil || resp.Err != sarama.ErrNoError {
		t.Fatalf("raw JoinGroup: %v %v", err, resp.Err)
	}

	m := e.member("m1", group, []string{topic})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = m.Join(ctx)
	if ctx.Err() != nil {
		t.Fatalf("Join retried until its context ended: %v", err)
	}
	var pm *ProtocolMismatchError
	if !errors.As(err, &pm) || !errors.Is(err, ErrFatal) || !errors.Is(err, sarama.ErrInconsistentGroupProtocol) {
		t.Fatalf("Join = %v, want a *ProtocolMismatchError wrapping ErrFatal and INCONSISTENT_GROUP_PROTOCOL", err)
	}
	if pm.GroupID != group || pm.GroupType != GroupTypeClassic || pm.ProtocolType != "connect" {
		t.Fatalf("mismatch %+v, want group %s, type classic, protocol type connect", pm, group)
	}
	if !strings.Contains(err.Error(), group) || !strings.Contains(err.Error(), `"connect"`) {
		t.Fatalf("error %q does not name the group and its protocol type", err)
	}
	// The member stays failed: a later Join does not retry either.
	if _, err2 := m.Join(ctx); !errors.Is(err2, ErrFatal) {
		t.Fatalf("second Join = %v, want the fatal error", err2)
	}
}

func TestProtocolMismatchMessages(t *testing.T) {
	for _, c := range []struct {
		e    ProtocolMismatchError
		want string
	}{
		{ProtocolMismatchError{GroupID: "app", GroupType: GroupTypeStreams, ProtocolType: "streams"}, "streams group (KIP-1071"},
		{ProtocolMismatchError{GroupID: "app", GroupType: GroupTypeConsumer}, "consumer protocol (KIP-848)"},
		{ProtocolMismatchError{GroupID: "app", GroupType: GroupTypeShare}, "share group"},
		{ProtocolMismatchError{GroupID: "app"}, "another group protocol"},
	} {
		msg := c.e.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, `group "app"`) || !strings.Contains(msg, "fatal group error") {
			t.Errorf("%+v: %q, want it to contain %q and the group", c.e, msg, c.want)
		}
	}
}
