package kstream

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/serde"
)

// TestWindowedPartitionerUsesBaseKey: windowed keys go to the partition Java's default
// partitioner (murmur2, here sarama's Java-compatible implementation) picks for the base key,
// whatever the window.
func TestWindowedPartitionerUsesBaseKey(t *testing.T) {
	p := windowedPartitioner(serde.Untyped(serde.TimeWindowed(serde.String(), 100*time.Millisecond)))
	if p == nil {
		t.Fatal("no partitioner for a windowed serde")
	}
	sp := sarama.NewMurmur2Partitioner("t")
	for i := range 200 {
		key := fmt.Sprintf("key-%d-%s", i, string(rune('a'+i%26)))
		want, err := sp.Partition(&sarama.ProducerMessage{Key: sarama.StringEncoder(key)}, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, start := range []int64{0, 100, 12345600} {
			got, ok, err := p.Partitions("t", Windowed[string]{Key: key, Window: Window{Start: start, End: start + 100}}, nil, 7)
			if err != nil || !ok || len(got) != 1 || got[0] != want {
				t.Fatalf("key %q window %d: partitions %v ok=%v err=%v, want [%d]", key, start, got, ok, err, want)
			}
		}
	}
	if windowedPartitioner(serde.Untyped(serde.String())) != nil {
		t.Fatal("partitioner for a non-windowed serde")
	}
}
