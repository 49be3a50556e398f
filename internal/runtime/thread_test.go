package runtime

import "testing"

// statestore.cache.max.bytes is the instance's budget: each stream thread's record cache gets
// an even share, so adding threads does not add cache memory (Java's getCacheSizePerThread).
func TestThreadCacheBudgetIsSplit(t *testing.T) {
	const total = 10 << 20
	for _, tc := range []struct {
		threads int
		want    int64
	}{{1, total}, {2, total / 2}, {3, 3495253}, {0, total}} {
		got := threadCacheBytes(total, tc.threads)
		if got != tc.want {
			t.Fatalf("%d threads: %d bytes per thread, want %d", tc.threads, got, tc.want)
		}
		if n := int64(max(tc.threads, 1)); got*n > total {
			t.Fatalf("%d threads of %d bytes: %d, over the budget %d", n, got, got*n, total)
		}
	}
}
