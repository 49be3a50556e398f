package fetch

import (
	"math"
	"slices"
	"testing"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/recordbatch"
)

// TestSession walks the client side of KIP-227 through its transitions.
func TestSession(t *testing.T) {
	a, b, c := tpOf("t", 0), tpOf("t", 1), tpOf("u", 0)
	w := func(tp kafka.TopicPartition, off int64) want {
		return want{tp: tp, sessPart: sessPart{offset: off, maxBytes: 1 << 20, leaderEpoch: 3}}
	}
	var s session
	step := func(name string, ws []want, wantID, wantEpoch int32, wantFull bool, wantSend ...kafka.TopicPartition) {
		t.Helper()
		id, epoch, full, send := s.build(ws)
		var got []kafka.TopicPartition
		for _, x := range send {
			got = append(got, x.tp)
		}
		if id != wantID || epoch != wantEpoch || full != wantFull || !slices.Equal(got, wantSend) {
			t.Fatalf("%s: session %d epoch %d full %v sends %v; want %d %d %v %v", name, id, epoch, full, got, wantID, wantEpoch, wantFull, wantSend)
		}
	}

	ws := []want{w(a, 0), w(b, 5)}
	step("first", ws, 0, 0, true, a, b)
	s.answered(true, 77, ws)
	step("unchanged", ws, 77, 1, false)
	s.answered(false, 77, ws)
	step("again", ws, 77, 2, false)
	s.answered(false, 77, ws)

	ws = []want{w(a, 10), w(b, 5)}
	step("offset moved", ws, 77, 3, false, a)
	s.answered(false, 77, ws)
	ws[1].maxBytes = 2 << 20
	step("max bytes raised", ws, 77, 4, false, b)
	s.answered(false, 77, ws)
	ws[0].leaderEpoch = 4
	step("leader epoch", ws, 77, 5, false, a)
	s.answered(false, 77, ws)

	ws = append(ws, w(c, 1))
	step("added", ws, 77, 6, false, c)
	s.answered(false, 77, ws)

	ws = []want{ws[0], ws[2]}
	step("one leaves: close 77, open a new session", ws, 77, 0, true, a, c)
	s.answered(true, 78, ws)
	step("new session", ws, 78, 1, false)

	s.failed(sarama.ErrInvalidFetchSessionEpoch)
	step("after INVALID_FETCH_SESSION_EPOCH", ws, 78, 0, true, a, c)
	s.answered(true, 79, ws)
	s.failed(sarama.ErrFetchSessionIDNotFound)
	step("after FETCH_SESSION_ID_NOT_FOUND", ws, 0, 0, true, a, c)
	s.answered(true, 0, ws)
	step("the broker made no session", ws, 0, 0, true, a, c)
	s.answered(true, 80, ws)
	step("session 80", ws, 80, 1, false)
	s.answered(false, 0, ws)
	step("the broker closed the session", ws, 0, 0, true, a, c)
	s.answered(true, 81, ws)
	s.failed(sarama.ErrNoError) // a failed request
	step("after a request error", ws, 81, 0, true, a, c)

	if nextEpoch(math.MaxInt32) != 1 || nextEpoch(1) != 2 {
		t.Errorf("nextEpoch wraps from MaxInt32 to %d", nextEpoch(math.MaxInt32))
	}
}

// TestSessionForget: with forget (the loop's own Fetch encoding), a partition leaving the
// session is forgotten in an incremental request instead of restarting the session, and
// comes back as an added one.
func TestSessionForget(t *testing.T) {
	a, b, c := tpOf("t", 0), tpOf("t", 1), tpOf("u", 0)
	w := func(tp kafka.TopicPartition, off int64) want {
		return want{tp: tp, sessPart: sessPart{offset: off, maxBytes: 1 << 20, leaderEpoch: 3}}
	}
	s := session{forget: true}
	step := func(name string, ws []want, wantID, wantEpoch int32, wantFull bool, wantSend, wantForgot []kafka.TopicPartition) {
		t.Helper()
		id, epoch, full, send := s.build(ws)
		var got []kafka.TopicPartition
		for _, x := range send {
			got = append(got, x.tp)
		}
		forgot := slices.SortedFunc(slices.Values(s.forgot), func(x, y kafka.TopicPartition) int {
			return compareTP(recordbatchTP(x), recordbatchTP(y))
		})
		if id != wantID || epoch != wantEpoch || full != wantFull || !slices.Equal(got, wantSend) || !slices.Equal(forgot, wantForgot) {
			t.Fatalf("%s: session %d epoch %d full %v sends %v forgets %v; want %d %d %v %v %v", name, id, epoch, full, got, forgot,
				wantID, wantEpoch, wantFull, wantSend, wantForgot)
		}
	}
	tps := func(x ...kafka.TopicPartition) []kafka.TopicPartition { return x }

	ws := []want{w(a, 0), w(b, 5), w(c, 1)}
	step("first", ws, 0, 0, true, tps(a, b, c), nil)
	s.answered(true, 42, ws)
	ws = []want{ws[0], ws[2]}
	step("b leaves", ws, 42, 1, false, nil, tps(b))
	s.answered(false, 42, ws)
	if _, ok := s.parts[b]; ok || len(s.parts) != 2 {
		t.Fatalf("session partitions after forgetting b: %v", s.parts)
	}
	step("unchanged", ws, 42, 2, false, nil, nil)
	s.answered(false, 42, ws)
	ws = []want{w(b, 5)}
	step("a and c leave, b back", ws, 42, 3, false, tps(b), tps(a, c))
	s.answered(false, 42, ws)
	if len(s.parts) != 1 || s.parts[b] != ws[0].sessPart {
		t.Fatalf("session partitions: %v, want only b", s.parts)
	}
	s.failed(sarama.ErrInvalidFetchSessionEpoch)
	step("after a session error", ws, 42, 0, true, tps(b), nil)
}

func recordbatchTP(tp kafka.TopicPartition) recordbatch.TopicPartition {
	return recordbatch.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
}
