package kstream

import "testing"

func TestBoxLike(t *testing.T) {
	word := string([]byte("hello"))
	other := any(word)
	if got := boxLike(string([]byte("hello")), other); got != "hello" {
		t.Fatalf("equal string: %v", got)
	}
	if got := boxLike("world", other); got != "world" {
		t.Fatalf("other string: %v", got)
	}
	if got := boxLike(int64(5), any(int64(5))); got != int64(5) {
		t.Fatalf("int64: %v", got)
	}
	if got := boxLike[*int](nil, other); got != nil {
		t.Fatalf("nil pointer: %v", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = boxLike(word, other) }); n != 0 {
		t.Fatalf("equal string allocates %v times", n)
	}
}
