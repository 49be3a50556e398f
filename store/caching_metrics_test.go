package store

import (
	"math"
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/processor"
)

// sensorsContext is a cache context that hands out a registry's store sensors.
type sensorsContext struct {
	*cacheContext
	reg *metrics.Registry
}

func (c sensorsContext) StoreSensors(name, typ string) *metrics.StoreOps {
	return c.reg.Store(c.TaskID(), name, typ)
}

// The record cache's hit ratio at DEBUG against an independent replay: reads of keys put
// before (hits), of keys never written (misses: nothing below either), and of keys only below
// the cache (a miss that loads them, then hits). At each hit the ratio is hits over reads so
// far; the average is over the hits, the minimum and maximum their extremes. Reads through the
// query view are not counted.
func TestCachingHitRatioSensor(t *testing.T) {
	base := &cacheContext{fakeContext: fakeContext{appID: "app"}, rc: rcOf("in", 0, 0), cache: cache.New(1 << 20)}
	reg := metrics.New("app", metrics.Debug)
	c := newCachingKeyValueStore(newChangeLoggingKeyValueBytesStore(newInMemoryKeyValueStore("s")))
	if err := c.Init(sensorsContext{base, reg}, c); err != nil {
		t.Fatal(err)
	}
	mustPut(t, c, "a", "1")
	if err := c.inner.Put([]byte("below"), []byte("2")); err != nil { // in the store, not the cache
		t.Fatal(err)
	}
	reads := []struct {
		key string
		hit bool
	}{{"a", true}, {"x", false}, {"a", true}, {"below", false}, {"below", true}, {"y", false}, {"z", false}, {"a", true}}
	var hits, total int
	var ratios []float64
	for _, r := range reads {
		if _, _, err := c.Get([]byte(r.key)); err != nil {
			t.Fatal(err)
		}
		total++
		if r.hit {
			hits++
			ratios = append(ratios, float64(hits)/float64(total))
		}
	}
	if _, _, err := c.QueryView().Get([]byte("a")); err != nil {
		t.Fatal(err)
	}
	sum, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	for _, r := range ratios {
		sum, lo, hi = sum+r, min(lo, r), max(hi, r)
	}
	var got metrics.StoreSnapshot
	for _, s := range reg.Snapshot().Stores {
		if s.Store == "s" && s.Task == (processor.TaskID{Subtopology: 1, Partition: 2}) {
			got = s
		}
	}
	hr := got.CacheHitRatio
	if hr.Count != int64(len(ratios)) || math.Abs(hr.Avg-sum/float64(len(ratios))) > 1e-6 || math.Abs(hr.Min-lo) > 1e-6 || math.Abs(hr.Max-hi) > 1e-6 {
		t.Errorf("hit ratio %+v, want %d hits, avg %.6f, min %.6f, max %.6f", hr, len(ratios), sum/float64(len(ratios)), lo, hi)
	}
}
