package store

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
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

// BenchmarkTimestampedCachedGetPut is an aggregation's read-modify-write of one key on the DSL's
// untyped timestamped store with caching (String keys, Long values; 10 000 keys, all cached;
// no flush): Get, then Put of the value read, as a count does per record. Besides ns/op it
// reports cpu-ns/op, the process's CPU time (user and system) per op, which a busy machine
// disturbs less.
func BenchmarkTimestampedCachedGetPut(b *testing.B) {
	st := Stores.TimestampedKeyValueStoreBuilder(Stores.InMemoryKeyValueStore("bench"),
		serde.Untyped(serde.String()), serde.Untyped(serde.Long())).WithCachingEnabled().WithLoggingDisabled().
		BuildStore()
	ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, rc: rcOf("app-counts-repartition", 1, 10), cache: cache.New(10 << 20)}
	if err := st.Init(ctx, st); err != nil {
		b.Fatal(err)
	}
	keys := make([]any, 10_000)
	for i := range keys {
		keys[i] = "word" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	cpu0, n0 := cpuTime(), 0
	for i := 0; b.Loop(); i++ {
		n0++
		k := keys[i%len(keys)]
		old, _, err := st.Get(k)
		if err != nil {
			b.Fatal(err)
		}
		n := int64(0)
		if old != nil {
			n = old.Value.(int64)
		}
		if old == nil {
			old = &ValueAndTimestamp[any]{}
		}
		old.Value, old.Timestamp = n+1, 10 // as the DSL's count puts back the value it read
		if err := st.Put(k, old); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n0), "cpu-ns/op")
}

// cpuTime returns the user and system CPU time the process has used, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchWords returns 100 000 distinct keys and a Zipf distribution over them (fixed seed), the
// vocabulary of the word count benchmarks.
func benchWords() ([][]byte, *rand.Zipf) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, 100_000)
	for i := range keys {
		keys[i] = []byte("w" + strconv.Itoa(int(r.Uint32())))
	}
	return keys, rand.NewZipf(r, 1.1, 1, uint64(len(keys)-1))
}

// openBenchPebbleAs opens a Pebble key-value store in a temporary state directory, with the
// default environment, under exactly-once when eos is set (else at-least-once).
func openBenchPebbleAs(b *testing.B, eos bool) *pebbleKeyValueStore {
	env, err := newPebbleEnv(PebbleOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Close() })
	s := newPebbleKeyValueStore("bench")
	if err := s.Init(&bulkCtx{dir: b.TempDir(), env: env, eos: eos}, s); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkPebblePut is the Pebble engine's share of a record cache flush under at-least-once:
// per op, a Put of a 16-byte value (a timestamped count) under a key drawn from a Zipf
// distribution over 100 000 words; every 10 000 ops the store flushes, as a commit that writes
// a checkpoint does. It reports cpu-ns/op (the process's CPU time, Pebble's flushes and
// compactions included).
func BenchmarkPebblePut(b *testing.B) {
	val := make([]byte, 16)
	n := uint64(0)
	benchPebbleCount(b, func(s *pebbleKeyValueStore, k []byte) error {
		n++
		binary.BigEndian.PutUint64(val[8:], n)
		return s.Put(k, val)
	})
}

// BenchmarkPebbleGetPut is the Pebble engine's share of a count under at-least-once: per op,
// Get of a key drawn from a Zipf distribution over 100 000 words, then Put of an 8-byte value
// under it; every 10 000 ops the store flushes, as a commit that writes a checkpoint does. It
// reports cpu-ns/op (the process's CPU time, Pebble's flushes and compactions included).
func BenchmarkPebbleGetPut(b *testing.B) { benchPebbleCount(b, countOp()) }

// BenchmarkPebbleGetPutTxn is BenchmarkPebbleGetPut under exactly-once: the writes go to the
// open transaction, which commits every 10 000 ops as a commit of the task's transaction does
// (the memtables are not flushed then).
func BenchmarkPebbleGetPutTxn(b *testing.B) { benchPebbleCountAs(b, true, countOp()) }

// countOp returns the op of a count: Get of the key, then Put of its 8-byte count plus one.
func countOp() func(s *pebbleKeyValueStore, k []byte) error {
	val := make([]byte, 8)
	return func(s *pebbleKeyValueStore, k []byte) error {
		old, _, err := s.Get(k)
		if err != nil {
			return err
		}
		c := uint64(0)
		if len(old) == 8 {
			c = binary.BigEndian.Uint64(old)
		}
		binary.BigEndian.PutUint64(val, c+1)
		return s.Put(k, val)
	}
}

// benchPebbleCount runs op once per benchmark iteration on a key drawn from a Zipf
// distribution over 100 000 words, flushing the store every 10 000 ops as a checkpointing
// commit does, and reports cpu-ns/op (the process's CPU time, Pebble's flushes and compactions
// included).
func benchPebbleCount(b *testing.B, op func(s *pebbleKeyValueStore, key []byte) error) {
	benchPebbleCountAs(b, false, op)
}

// benchPebbleCountAs is benchPebbleCount, under exactly-once when eos is set: every 10 000 ops
// the transaction commits instead of the store flushing.
func benchPebbleCountAs(b *testing.B, eos bool, op func(s *pebbleKeyValueStore, key []byte) error) {
	s := openBenchPebbleAs(b, eos)
	keys, zipf := benchWords()
	b.ReportAllocs()
	cpu0, n := cpuTime(), 0
	for b.Loop() {
		if err := op(s, keys[zipf.Uint64()]); err != nil {
			b.Fatal(err)
		}
		if n++; n%10_000 == 0 {
			var err error
			if eos {
				err = s.CommitTransaction(int64(n))
			} else {
				err = s.Flush()
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/op")
}
