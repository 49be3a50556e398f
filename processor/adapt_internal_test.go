package processor

import (
	"errors"
	"testing"

	"github.com/kstreams-go/kstreams/serde"
)

// The serde, partitioner and extractor adapters turn typed values into the engine's untyped
// ones and report a value of another type as a record type mismatch.
func TestUntypedSerdeAdapters(t *testing.T) {
	ser := adaptSerializer[string](serde.String())
	b, err := ser.Serialize("t", nil, "hé")
	if err != nil || string(b) != "hé" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := ser.Serialize("t", nil, 5); !errors.Is(err, ErrRecordTypeMismatch) {
		t.Fatalf("mismatch: %v", err)
	}
	de := adaptDeserializer[int64](serde.Long())
	v, err := de.Deserialize("t", nil, []byte{0, 0, 0, 0, 0, 0, 1, 0})
	if err != nil || v != int64(256) {
		t.Fatalf("%v %v", v, err)
	}
	if adaptDeserializer[int64](nil) != nil || adaptSerializer[string](nil) != nil {
		t.Fatal("nil in, nil out")
	}
	part := adaptStreamPartitioner(StreamPartitionerFunc[string, int64](
		func(topic string, k string, v int64, n int32) ([]int32, bool, error) {
			return []int32{int32(len(k)) % n}, true, nil
		}))
	ps, ok, err := part.Partitions("t", "abc", int64(1), 2)
	if err != nil || !ok || len(ps) != 1 || ps[0] != 1 {
		t.Fatalf("%v %v %v", ps, ok, err)
	}
	ex := adaptTopicNameExtractor(TopicNameExtractorFunc[string, string](func(k, _ string, _ RecordContext) (string, error) { return "papi-sinks-key-" + k, nil }))
	topic, err := ex.Extract("k", nil, RecordContext{})
	if err != nil || topic != "papi-sinks-key-k" {
		t.Fatalf("%q %v", topic, err)
	}
}
