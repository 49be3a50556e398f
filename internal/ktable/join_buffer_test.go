package ktable

import (
	"path/filepath"
	"testing"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/processor"
)

// TestJoinBufferRestoresJavaChangelog restores the changelog Java 4.4 wrote for the inner join's
// buffer of conformance/golden/ver-st.out.jsonl and checks what is left in it: only s14 (key
// "e", timestamp 260, offset 14 of ver-st-stream) is still buffered at the end of the vector
// (stream time 260, grace 20).
func TestJoinBufferRestoresJavaChangelog(t *testing.T) {
	outs, err := conformance.ReadOutputsFile(filepath.Join("..", "..", "conformance", "golden", "ver-st.out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var batch []processor.RestoreRecord
	for i, o := range outs {
		if o.Topic == "ver-st-KSTREAM-JOIN-0000000003-Buffer-changelog" {
			batch = append(batch, processor.RestoreRecord{Key: o.KeyBytes, Value: o.ValueBytes, Offset: int64(i)})
		}
	}
	if len(batch) < 20 {
		t.Fatalf("only %d changelog records in the golden file", len(batch))
	}
	b := &JoinBuffer{name: "b", graceMs: 20, observed: -1}
	if err := b.restore(batch); err != nil {
		t.Fatal(err)
	}
	if b.NumRecords() != 1 || b.ObservedStreamTime() != 260 {
		t.Fatalf("restored %d records, stream time %d; want 1 and 260", b.NumRecords(), b.ObservedStreamTime())
	}
	// A later record evicts it, with its original context.
	if ok, err := b.Put([]byte("f"), []byte("late"), processor.RecordContext{Timestamp: 300, Topic: "x", Partition: 0, Offset: 9}); !ok || err != nil {
		t.Fatalf("put: %v %v", ok, err)
	}
	var got []BufferedRecord
	if err := b.EvictExpired(func(r BufferedRecord) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got[0].Key) != "e" || string(got[0].Value) != "s14" || got[0].Context.Timestamp != 260 ||
		got[0].Context.Topic != "ver-st-stream" || got[0].Context.Offset != 14 {
		t.Fatalf("evicted %+v", got)
	}
	// Late records are refused; bad changelog records fail.
	if ok, _ := b.Put([]byte("g"), []byte("v"), processor.RecordContext{Timestamp: 279}); ok {
		t.Fatal("a record older than stream time - grace was buffered")
	}
	if err := b.restore([]processor.RestoreRecord{{Key: []byte{1, 2, 3}}}); err == nil {
		t.Fatal("short key restored")
	}
	if err := b.restore([]processor.RestoreRecord{{Key: batch[0].Key, Value: batch[0].Value[:10]}}); err == nil {
		t.Fatal("truncated value restored")
	}
}
