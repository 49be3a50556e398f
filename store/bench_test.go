package store

import (
	"encoding/binary"
	"testing"

	"github.com/kstreams-go/kstreams/serde"
)

func BenchmarkInMemoryPut(b *testing.B) {
	s := newInMemoryKeyValueStore("bench")
	s.Open()
	key := make([]byte, 8)
	val := make([]byte, 100)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(key, uint64(i*2654435761)%1_000_000)
		_ = s.Put(key, val)
	}
}

func BenchmarkTypedGetPut(b *testing.B) {
	st, _ := Stores.KeyValueStoreBuilder(Stores.InMemoryKeyValueStore("bench"), serde.Long(), serde.Long()).WithLoggingDisabled().Build()
	kv := st.(KeyValueStore[int64, int64])
	_ = kv.Init(nil, kv)
	b.ReportAllocs()
	for i := int64(0); b.Loop(); i++ {
		k := i % 10000
		v, _, _ := kv.Get(k)
		_ = kv.Put(k, v+1)
	}
}
