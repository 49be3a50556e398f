package kafka

import (
	"fmt"
	"testing"

	"github.com/IBM/sarama"
)

// The partition of every key agrees with sarama's murmur2 partitioner, which is checked
// against Java's; the fixed values are Kafka's own murmur2 test vectors (UtilsTest).
func TestKeyPartitionMatchesJava(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int32
	}{
		{"21", -973932308}, {"foobar", -790332482}, {"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829}, {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
	} {
		if got := Murmur2([]byte(c.in)); got != c.want {
			t.Errorf("Murmur2(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	for _, n := range []int32{1, 3, 4, 12} {
		sp := sarama.NewMurmur2Partitioner("t")
		for i := 0; i < 2000; i++ {
			k := []byte(fmt.Sprintf("key-%d-%s", i, string(rune('a'+i%26))))
			want, err := sp.Partition(&sarama.ProducerMessage{Key: sarama.ByteEncoder(k)}, n)
			if err != nil {
				t.Fatal(err)
			}
			if got := KeyPartition(k, n); got != want {
				t.Fatalf("KeyPartition(%q, %d) = %d, sarama says %d", k, n, got, want)
			}
		}
	}
}
