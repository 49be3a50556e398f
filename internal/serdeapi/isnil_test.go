package serdeapi

import "testing"

// IsNil answers for the types it knows without reflection exactly as reflection does for the
// others: nil interfaces, pointers, slices, maps, funcs and chans are null, values never.
func TestIsNil(t *testing.T) {
	var (
		nilBytes []byte
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
		{0.0, false}, {false, false}, {nilBytes, true}, {[]byte{}, false}, {nilPtr, true},
		{new(int), false}, {nilMap, true}, {map[string]int{}, false}, {nilFunc, true},
		{nilChan, true}, {struct{}{}, false}, {uint8(0), false},
	} {
		if got := IsNil(c.v); got != c.want {
			t.Errorf("IsNil(%#v) = %v, want %v", c.v, got, c.want)
		}
	}
}
