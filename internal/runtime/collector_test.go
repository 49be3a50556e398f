package runtime

import "testing"

// Messages from a slab are zeroed and distinct until reset; after a reset the chunks are
// reused (no new chunk for the same number of messages).
func TestMsgSlabReuse(t *testing.T) {
	var s msgSlab
	const n = msgSlabChunk*2 + 3
	seen := map[*outMsg]bool{}
	for i := 0; i < n; i++ {
		m := s.next()
		if seen[m] {
			t.Fatalf("message %d handed out twice before reset", i)
		}
		if m.msg.Topic != "" || m.key.b != nil {
			t.Fatalf("message %d not zeroed", i)
		}
		seen[m] = true
		m.msg.Topic = "used"
		m.key.b = []byte("k")
	}
	if len(s.chunks) != 3 {
		t.Fatalf("%d chunks for %d messages, want 3", len(s.chunks), n)
	}
	s.reset()
	for i := 0; i < n; i++ {
		m := s.next()
		if !seen[m] {
			t.Fatalf("message %d after reset is not from the kept chunks", i)
		}
		if m.msg.Topic != "" || m.key.b != nil {
			t.Fatalf("message %d after reset not zeroed: %q %q", i, m.msg.Topic, m.key.b)
		}
	}
	if len(s.chunks) != 3 {
		t.Fatalf("%d chunks after reuse, want 3", len(s.chunks))
	}
	for i := 0; i < msgSlabChunk*(msgSlabKeep+2); i++ {
		s.next()
	}
	s.reset()
	if len(s.chunks) != msgSlabKeep {
		t.Fatalf("%d chunks kept after reset, want %d", len(s.chunks), msgSlabKeep)
	}
}

// The encoders hand sarama the bytes as they are.
func TestBytesEncoder(t *testing.T) {
	e := &bytesEncoder{b: []byte("value")}
	b, err := e.Encode()
	if err != nil || string(b) != "value" || e.Length() != 5 {
		t.Fatalf("Encode %q %v, Length %d", b, err, e.Length())
	}
}
