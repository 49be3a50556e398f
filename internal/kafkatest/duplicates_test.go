package kafkatest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A produce request that reaches the log but whose answer comes after the client's read timeout
// is retried by sarama. Without idempotence the retry writes the record a second time, and
// TopicDuplicates reports it; with ProducerConfig's idempotent producer the broker recognises the
// retried batch by its producer id and sequence number, and the record is in the topic once.
// kfake holds the first produce request (SleepControl) until the producer has timed out,
// retried and returned, then appends it.
func TestEmbeddedProducerConfigWritesOnceWhenAnAnswerIsLate(t *testing.T) {
	for _, idempotent := range []bool{true, false} {
		t.Run(fmt.Sprint("idempotent=", idempotent), func(t *testing.T) {
			b := Embedded(t)
			topic := Name(t, "late")
			CreateTopics(t, b, 1, nil, topic)
			cfg := ProducerConfig()
			if !idempotent {
				cfg.Producer.Idempotent = false
				cfg.Net.MaxOpenRequests = 5 // sarama's default
			}
			cfg.Net.ReadTimeout = 300 * time.Millisecond
			cfg.Producer.Retry.Backoff = 50 * time.Millisecond
			p, err := sarama.NewSyncProducer(b.Addrs, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			var held atomic.Bool
			release := make(chan struct{})
			b.Cluster.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
				if held.CompareAndSwap(false, true) {
					b.Cluster.SleepControl(func() { <-release })
				}
				b.Cluster.DropControl()
				return nil, nil, false // appended as usual, once awake
			})
			produced := b.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Observe: true, Count: -1})
			defer produced.Remove()
			msg := &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("k"), Value: sarama.StringEncoder("v"),
				Timestamp: time.UnixMilli(1_000_000), Headers: []sarama.RecordHeader{{Key: []byte("line"), Value: []byte("0")}}}
			if _, _, err := p.SendMessage(msg); err != nil {
				t.Fatal(err)
			}
			if !held.Load() {
				t.Fatal("no produce request was held")
			}
			close(release)
			// The held request and the retry have both reached the log.
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if err := produced.Wait(ctx, 2); err != nil {
				t.Fatalf("%d produce requests appended: %v", produced.Hits(), err)
			}
			n, dups := TopicDuplicates(b.Addrs, nil, topic)
			if idempotent {
				if n != 1 || len(dups) != 0 {
					t.Fatalf("%d records, written twice: %v; want the record once", n, dups)
				}
				return
			}
			want := `key "k" value "v" timestamp 1000000 header line="0" at [0@0 0@1]`
			if n != 2 || len(dups) != 1 || dups[0] != want {
				t.Fatalf("without idempotence: %d records, written twice: %q; want 2: %q", n, dups, want)
			}
		})
	}
}
