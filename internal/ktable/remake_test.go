package ktable

import "testing"

func TestRemakeValueAndTimestamp(t *testing.T) {
	old := &ValueAndTimestamp{Value: int64(1), Timestamp: 5}
	if got := remakeValueAndTimestamp(old, int64(2), 7); got != old || got.Value != int64(2) || got.Timestamp != 7 {
		t.Fatalf("got %+v (same pointer %v)", got, got == old)
	}
	if got := remakeValueAndTimestamp(old, nil, 9); got != nil || old.Value != int64(2) || old.Timestamp != 7 {
		t.Fatalf("null value: got %+v, old %+v", got, old)
	}
	var nilPtr *int
	if got := remakeValueAndTimestamp(old, nilPtr, 9); got != nil || old.Value != int64(2) || old.Timestamp != 7 {
		t.Fatalf("nil pointer value: got %+v, old %+v", got, old)
	}
	if got := remakeValueAndTimestamp(nil, "x", 3); got == nil || got.Value != "x" || got.Timestamp != 3 {
		t.Fatalf("nil old: got %+v", got)
	}
}
