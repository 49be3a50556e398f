package runtime

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// memberHandler reports a consumer-group session's start (with its member id) and end.
type memberHandler struct {
	setup   chan string
	cleanup chan struct{}
}

func (h memberHandler) Setup(s sarama.ConsumerGroupSession) error {
	h.setup <- s.MemberID()
	return nil
}
func (h memberHandler) Cleanup(sarama.ConsumerGroupSession) error {
	h.cleanup <- struct{}{}
	return nil
}
func (h memberHandler) ConsumeClaim(_ sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for range c.Messages() {
	}
	return nil
}

// interruptJoin leaves a thread in a session alone; between sessions it closes the group
// client, after which no session may start (Setup refuses it), and sends a LeaveGroup for the
// last session's member id, so the coordinator removes the member at once instead of after
// its session timeout (30 s here): the member's session ends within seconds.
func TestInterruptJoinClosesAndLeaves(t *testing.T) {
	b := kafkatest.Embedded(t)
	topic, group := kafkatest.Name(t, "in"), kafkatest.Name(t, "app")
	conf := kafkatest.SaramaConfig()
	conf.Consumer.Group.Session.Timeout = 30 * time.Second
	conf.Consumer.Group.Heartbeat.Interval = 200 * time.Millisecond
	conf.Consumer.Group.Rebalance.Timeout = 30 * time.Second
	admin, err := sarama.NewClusterAdmin(b.Addrs, conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
	admin.Close()

	// The member whose id the thread holds: a consumer group of its own client.
	member, err := sarama.NewConsumerGroup(b.Addrs, group, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	h := memberHandler{setup: make(chan string, 4), cleanup: make(chan struct{}, 4)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = member.Consume(ctx, []string{topic}, h) }()
	var memberID string
	select {
	case memberID = <-h.setup:
	case <-time.After(30 * time.Second):
		t.Fatal("the member's session did not start")
	}

	newThread := func() *thread {
		client, err := sarama.NewClient(b.Addrs, conf)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = client.Close() })
		return &thread{rt: &Runtime{cfg: Config{ApplicationID: group}}, sconf: conf, client: client,
			log: slog.New(slog.NewTextHandler(io.Discard, nil)), memberID: memberID}
	}
	busy := newThread()
	busy.inSession = true
	busy.interruptJoin()
	if busy.client.Closed() || busy.joinClosed {
		t.Fatal("interruptJoin closed the client of a thread in a session")
	}

	th := newThread()
	th.interruptJoin()
	if !th.client.Closed() {
		t.Fatal("interruptJoin left the client of a joining thread open")
	}
	if err := th.Setup(nil); !errors.Is(err, errJoinInterrupted) {
		t.Fatalf("Setup after interruptJoin: %v, want errJoinInterrupted", err)
	}
	select {
	case <-h.cleanup:
	case <-time.After(10 * time.Second):
		t.Fatal("the member's session did not end within 10 s of the LeaveGroup (session timeout 30 s)")
	}
}
