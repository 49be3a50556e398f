package bench

import (
	"encoding/binary"
	"github.com/kstreams-go/kstreams/internal/storeapi"

	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kstreams-go/kstreams/store"
)

const (
	benchKeys   = 100_000
	benchValLen = 100
)

func benchKey(i int) []byte {
	k := make([]byte, 16)
	copy(k, "key-")
	binary.BigEndian.PutUint64(k[8:], uint64(i))
	return k
}

// openPair opens our Pebble store and a raw Pebble database with the same options.
func openPair(b *testing.B) (store.KeyValueBytesStore, *pebble.DB) {
	b.Helper()
	env, err := storeapi.NewPebbleEnv(store.PebbleOptions{})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	raw, err := pebble.Open(filepath.Join(dir, "raw"), env.RawOptions())
	if err != nil {
		b.Fatal(err)
	}
	ours := store.Stores.PersistentKeyValueStore("ours").Get()
	if err := ours.Init(storeCtx{dir: dir, env: env}, ours); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = ours.Close()
		_ = raw.Close()
		_ = env.Close()
	})
	return ours, raw
}

func fillPair(b *testing.B, ours store.KeyValueBytesStore, raw *pebble.DB) {
	b.Helper()
	val := make([]byte, benchValLen)
	for i := 0; i < benchKeys; i++ {
		if err := ours.Put(benchKey(i), val); err != nil {
			b.Fatal(err)
		}
		if err := raw.Set(benchKey(i), val, pebble.NoSync); err != nil {
			b.Fatal(err)
		}
	}
}

// compare runs raw and ours b.N times each and reports both and their ratio.
func compare(b *testing.B, raw, ours func(i int)) {
	b.Helper()
	// Warm up both (caches, memtables).
	for i := 0; i < min(b.N, 1000); i++ {
		raw(i)
		ours(i)
	}
	// Interleave rounds of 1000 operations so that background work (flushes, compactions)
	// and CPU frequency affect both sides alike; alternate which side goes first, so neither
	// always runs with the caches the other one just warmed (or trashed).
	b.ResetTimer()
	var rawD, oursD time.Duration
	run := func(f func(int), from, n int) time.Duration {
		start := time.Now()
		for i := from; i < from+n; i++ {
			f(i)
		}
		return time.Since(start)
	}
	for round, done := 0, 0; done < b.N; round++ {
		n := min(1000, b.N-done)
		if round%2 == 0 {
			rawD += run(raw, done, n)
			oursD += run(ours, done, n)
		} else {
			oursD += run(ours, done, n)
			rawD += run(raw, done, n)
		}
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(rawD.Nanoseconds())/float64(b.N), "raw-ns/op")
	b.ReportMetric(float64(oursD.Nanoseconds())/float64(b.N), "ours-ns/op")
	b.ReportMetric(float64(oursD)/float64(rawD), "ours/raw")
}

func BenchmarkPebbleKeyValueStore(b *testing.B) {
	val := make([]byte, benchValLen)
	b.Run("put", func(b *testing.B) {
		ours, raw := openPair(b)
		r := rand.New(rand.NewPCG(1, 2))
		keys := make([][]byte, 1<<16)
		for i := range keys {
			keys[i] = benchKey(r.IntN(benchKeys * 10))
		}
		compare(b,
			func(i int) {
				if err := raw.Set(keys[i&(len(keys)-1)], val, pebble.NoSync); err != nil {
					b.Fatal(err)
				}
			},
			func(i int) {
				if err := ours.Put(keys[i&(len(keys)-1)], val); err != nil {
					b.Fatal(err)
				}
			})
	})
	b.Run("get", func(b *testing.B) {
		ours, raw := openPair(b)
		fillPair(b, ours, raw)
		r := rand.New(rand.NewPCG(3, 4))
		keys := make([][]byte, 1<<16)
		for i := range keys {
			keys[i] = benchKey(r.IntN(benchKeys))
		}
		var sink int
		compare(b,
			func(i int) {
				v, c, err := raw.Get(keys[i&(len(keys)-1)])
				if err != nil {
					b.Fatal(err)
				}
				sink += len(v)
				c.Close()
			},
			func(i int) {
				v, _, err := ours.Get(keys[i&(len(keys)-1)])
				if err != nil {
					b.Fatal(err)
				}
				sink += len(v)
			})
		_ = sink
	})
	b.Run("range100", func(b *testing.B) {
		ours, raw := openPair(b)
		fillPair(b, ours, raw)
		r := rand.New(rand.NewPCG(5, 6))
		starts := make([]int, 1<<12)
		for i := range starts {
			starts[i] = r.IntN(benchKeys - 100)
		}
		var sink int
		compare(b,
			func(i int) {
				s := starts[i&(len(starts)-1)]
				it, err := raw.NewIter(&pebble.IterOptions{LowerBound: benchKey(s), UpperBound: benchKey(s + 100)})
				if err != nil {
					b.Fatal(err)
				}
				for ok := it.First(); ok; ok = it.Next() {
					sink += len(it.Key()) + len(it.Value())
				}
				_ = it.Close()
			},
			func(i int) {
				s := starts[i&(len(starts)-1)]
				it := ours.Range(benchKey(s), benchKey(s+99))
				for it.Next() {
					sink += len(it.Key()) + len(it.Value())
				}
				_ = it.Close()
			})
		_ = sink
	})
}
