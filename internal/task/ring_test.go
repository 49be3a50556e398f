package task

import "testing"

// The ring keeps FIFO order across wrap-arounds and growth while wrapped, and lets go of the
// records it hands out.
func TestRingFIFO(t *testing.T) {
	var r ring
	next, want := int64(0), int64(0)
	push := func(k int) {
		r.grow(k)
		for i := 0; i < k; i++ {
			*r.slot() = RawRecord{Offset: next}
			next++
		}
	}
	pop := func(k int) {
		for i := 0; i < k; i++ {
			if got := r.pop().Offset; got != want {
				t.Fatalf("popped offset %d, want %d", got, want)
			}
			want++
		}
	}
	push(10)
	pop(7)
	push(12) // wraps in the 16-slot buffer
	pop(10)
	push(40) // grows while wrapped
	if r.n != 45 {
		t.Fatalf("%d records, want 45", r.n)
	}
	r.push(RawRecord{Offset: next})
	next++
	pop(46)
	if r.n != 0 || r.start != 0 {
		t.Fatalf("empty ring: n %d start %d", r.n, r.start)
	}
	for i := range r.buf {
		if r.buf[i].Offset != 0 || r.buf[i].Key != nil {
			t.Fatalf("slot %d still holds a record", i)
		}
	}
}
