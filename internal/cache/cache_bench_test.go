package cache

import (
	"strconv"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
)

// BenchmarkPutFlush measures a write-heavy workload: 10,000 distinct keys updated in turn in a
// 10 MiB cache, flushed every 1,000 puts (a commit), as a count aggregation does.
func BenchmarkPutFlush(b *testing.B) {
	c := New(10 << 20)
	c.AddDirtyEntryFlushListener("0_0-s", func([]DirtyEntry) error { return nil })
	keys := make([][]byte, 10_000)
	for i := range keys {
		keys[i] = []byte("key-" + strconv.Itoa(i))
	}
	value := make([]byte, 8)
	rc := processor.RecordContext{Topic: "input-topic", Offset: 1, Timestamp: 1}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := c.Put("0_0-s", keys[i%len(keys)], NewEntry(value, rc, true)); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			if err := c.Flush("0_0-s"); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkEvicting measures puts into a cache small enough to evict on most puts.
func BenchmarkEvicting(b *testing.B) {
	c := New(64 << 10)
	c.AddDirtyEntryFlushListener("0_0-s", func([]DirtyEntry) error { return nil })
	value := make([]byte, 32)
	rc := processor.RecordContext{Topic: "input-topic"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := c.Put("0_0-s", []byte("key-"+strconv.Itoa(i%100_000)), NewEntry(value, rc, true)); err != nil {
			b.Fatal(err)
		}
	}
}
