package store

import "testing"

// isNil answers for the types it knows without reflection exactly as reflection does for the
// others: nil interfaces, pointers, slices, maps, funcs and chans are null, values never.
func TestIsNil(t *testing.T) {
	var (
		nilBytes []byte
		nilVAT   *ValueAndTimestamp[any]
		nilPtr   *int
		nilMap   map[string]int
		nilFunc  func()
		nilChan  chan int
	)
	for _, c := range []struct {
		v    any
		want bool
	}{
		{nil, true}, {"", false}, {"x", false}, {int64(0), false}, {int32(0), false}, {0, false},
		{0.0, false}, {false, false}, {nilBytes, true}, {[]byte{}, false}, {nilVAT, true},
		{&ValueAndTimestamp[any]{Value: int64(1)}, false}, {nilPtr, true}, {new(int), false},
		{nilMap, true}, {map[string]int{}, false}, {nilFunc, true}, {nilChan, true},
		{struct{}{}, false}, {uint8(0), false},
	} {
		if got := isNil(c.v); got != c.want {
			t.Errorf("isNil(%#v) = %v, want %v", c.v, got, c.want)
		}
	}
}
