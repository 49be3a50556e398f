package kafkatest

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// WaitTopicsReady waits until every partition of topics answers a ListOffsets request on its
// leader: right after CreateTopics, Apache Kafka's metadata may name a leader that still answers
// NOT_LEADER_OR_FOLLOWER or UNKNOWN_TOPIC_OR_PARTITION for a moment, longer on a loaded machine
// than a test producer's few retries cover. cfg may be nil ([SaramaConfig]). It fails t after
// one minute.
func WaitTopicsReady(t testing.TB, addrs []string, cfg *sarama.Config, topics ...string) {
	t.Helper()
	if cfg == nil {
		cfg = SaramaConfig()
	}
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	deadline := time.Now().Add(time.Minute)
	for _, topic := range topics {
		var last error
		for !partitionsReady(client, topic, &last) {
			if time.Now().After(deadline) {
				t.Fatalf("topic %s not ready after a minute: %v", topic, last)
			}
			time.Sleep(50 * time.Millisecond) // polling the broker's state, not waiting for a result
			_ = client.RefreshMetadata(topic)
		}
	}
}

// partitionsReady reports whether each partition of topic has a leader that answers
// ListOffsets without an error; *last gets the last failure.
func partitionsReady(client sarama.Client, topic string, last *error) bool {
	parts, err := client.Partitions(topic)
	if err != nil || len(parts) == 0 {
		*last = err
		return false
	}
	for _, p := range parts {
		leader, err := client.Leader(topic, p)
		if err != nil {
			*last = err
			return false
		}
		req := &sarama.OffsetRequest{Version: 1}
		req.AddBlock(topic, p, sarama.OffsetNewest, 1)
		resp, err := leader.GetAvailableOffsets(req)
		if err != nil {
			*last = err
			return false
		}
		blk := resp.GetBlock(topic, p)
		if blk == nil {
			*last = sarama.ErrIncompleteResponse
			return false
		}
		if blk.Err != sarama.ErrNoError {
			*last = blk.Err
			return false
		}
	}
	return true
}
