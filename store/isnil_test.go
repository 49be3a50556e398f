package store

import "testing"

// isNil answers for the DSL's timestamped values without reflection, and as serdeapi.IsNil
// (tested there) for everything else.
func TestIsNil(t *testing.T) {
	var nilVAT *ValueAndTimestamp[any]
	for _, c := range []struct {
		v    any
		want bool
	}{
		{nil, true}, {nilVAT, true}, {&ValueAndTimestamp[any]{Value: int64(1)}, false},
		{"x", false}, {[]byte(nil), true}, {(*int)(nil), true},
	} {
		if got := isNil(c.v); got != c.want {
			t.Errorf("isNil(%#v) = %v, want %v", c.v, got, c.want)
		}
	}
}
