package storeapi

import "testing"

func TestDetach(t *testing.T) {
	src := []byte("abc")
	c := Detach(src)
	src[0] = 'x'
	if string(c) != "abc" {
		t.Fatalf("Detach([]byte) = %q after the source changed, want abc", c)
	}
	if Detach([]byte(nil)) != nil {
		t.Fatal("Detach(nil []byte) != nil")
	}
	empty := Detach([]byte{})
	if empty == nil || len(empty) != 0 {
		t.Fatalf("Detach(empty) = %#v, want empty non-nil", empty)
	}
	p := &src
	cp := Detach(p)
	src[1] = 'y'
	if cp == p || string(*cp) != "xbc" {
		t.Fatalf("Detach(*[]byte) = %q (same pointer %v), want a copy xbc", *cp, cp == p)
	}
	if Detach("s") != "s" || Detach(int64(7)) != 7 {
		t.Fatal("Detach changed a non-byte value")
	}
	if Detach((*[]byte)(nil)) != nil {
		t.Fatal("Detach(nil *[]byte) != nil")
	}
}
