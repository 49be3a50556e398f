package ktable

import (
	"encoding/hex"
	"testing"

	"github.com/kstreams-go/kstreams/serde"
)

// Expected bytes are Java 4.4.0's (conformance/golden/fk-inner.out.jsonl).
func TestSubscriptionBytesMatchJava(t *testing.T) {
	s := NewFKSerdes("t", serde.Untyped(serde.String()), serde.Untyped(serde.String()), serde.Untyped(serde.String()), serde.Untyped(serde.String()))
	for _, c := range []struct{ value, hash string }{
		{"x:1", "eb7338b21bf4bda520c874e642dcd95c"},
		{"x:2", "e1e1953901952c09b62186c4250de9d8"},
		{"y:3", "9faa670f6ab8e4f03fbc33e1cf928bcf"},
	} {
		h, err := s.hashValue(c.value)
		if err != nil {
			t.Fatal(err)
		}
		got := hex.EncodeToString(append(be(h[0]), be(h[1])...))
		if got != c.hash {
			t.Errorf("hash(%q) = %s, Java %s", c.value, got, c.hash)
		}
	}
	h, _ := s.hashValue("x:1")
	b, err := s.SubscriptionWrapperSerde().Serialize("t", nil, &SubscriptionWrapper{Hash: h, Instruction: PropagateOnlyIfFKValAvailable, PrimaryKey: "a", Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := hex.EncodeToString(b), "0103eb7338b21bf4bda520c874e642dcd95c6100000000"; got != want {
		t.Errorf("subscription = %s, Java %s", got, want)
	}
	back, err := s.SubscriptionWrapperSerde().Deserialize("t", nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if sw := back.(*SubscriptionWrapper); sw.PrimaryKey != "a" || *sw.Hash != *h || sw.Instruction != PropagateOnlyIfFKValAvailable {
		t.Errorf("round trip: %+v", sw)
	}
	nb, _ := s.SubscriptionWrapperSerde().Serialize("t", nil, &SubscriptionWrapper{Instruction: DeleteKeyAndPropagate, PrimaryKey: "c", Version: 1})
	if got, want := hex.EncodeToString(nb), "81016300000000"; got != want {
		t.Errorf("null-hash subscription = %s, Java %s", got, want)
	}
	r, _ := s.ResponseWrapperSerde().Serialize("t", nil, &SubscriptionResponseWrapper{Hash: h, ForeignValue: "X1"})
	if got, want := hex.EncodeToString(r), "00eb7338b21bf4bda520c874e642dcd95c5831"; got != want {
		t.Errorf("response = %s, Java %s", got, want)
	}
	ck, _ := s.combinedKey("x", "a")
	if got, want := hex.EncodeToString(ck), "000000017861"; got != want {
		t.Errorf("combined key = %s, Java %s", got, want)
	}
}

func be(v uint64) []byte {
	b := make([]byte, 8)
	for i := range 8 {
		b[i] = byte(v >> (56 - 8*i))
	}
	return b
}
