package cache

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
)

func keysOf(it *Iterator) []string {
	var out []string
	for it.HasNext() {
		k, _ := it.Next()
		out = append(out, string(k))
	}
	return out
}

// A paged iterator gives exactly the entries of the copying one, for ranges spanning several
// pages, in both directions and with every kind of bound.
func TestRangePagedMatchesRange(t *testing.T) {
	c := New(1 << 30)
	c.AddDirtyEntryFlushListener("0_0-s", func([]DirtyEntry) error { return nil })
	for i := range 3*PageKeys + 17 {
		if err := c.Put("0_0-s", fmt.Appendf(nil, "k%05d", i), NewEntry([]byte("v"), processor.RecordContext{}, true)); err != nil {
			t.Fatal(err)
		}
	}
	b := func(s string) []byte {
		if s == "" {
			return nil
		}
		return []byte(s)
	}
	for _, r := range [][2]string{{"", ""}, {"k00010", "k00600"}, {"k00256", "k00512"}, {"a", "k00001"}, {"k00700", "z"}, {"k00600", "k00010"}, {"k00300", "k00300"}} {
		from, to := b(r[0]), b(r[1])
		for _, incl := range []bool{true, false} {
			want := keysOf(c.RangeInclusive("0_0-s", from, to, incl))
			if got := keysOf(c.RangePaged("0_0-s", from, to, incl, false)); !slices.Equal(got, want) {
				t.Fatalf("ascending %v incl %v: got %d keys %v, want %d", r, incl, len(got), got, len(want))
			}
			slices.Reverse(want)
			if got := keysOf(c.RangePaged("0_0-s", from, to, incl, true)); !slices.Equal(got, want) {
				t.Fatalf("descending %v incl %v: got %d keys %v, want %d", r, incl, len(got), got, len(want))
			}
		}
	}
	if got := keysOf(c.RangePaged("0_0-none", nil, nil, true, false)); got != nil {
		t.Fatalf("unknown named cache: %v", got)
	}
}
