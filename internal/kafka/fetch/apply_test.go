package fetch

import (
	"errors"
	"fmt"
	"testing"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// Unit tests of how a loop applies a response, with made-up responses and no broker.

func testLoop(t *testing.T, mod func(*Config)) (*Fetcher, *loop) {
	cfg := Config{MaxBytes: 4 << 20, PartitionMaxBytes: 1 << 20, RetryBackoff: DefaultRetryBackoff, RetryBackoffMax: DefaultRetryBackoffMax}
	if mod != nil {
		mod(&cfg)
	}
	f := &Fetcher{cfg: cfg, log: testLogger(t), parts: map[kafka.TopicPartition]*part{}, unrouted: map[kafka.TopicPartition]*part{},
		checks: map[*loop]bool{}, loops: map[kafka.Node]*loop{}, routeWake: make(chan struct{}, 1), done: make(chan struct{})}
	l := &loop{f: f, node: kafka.Node{ID: 1, Addr: "x:1"}, wake: make(chan struct{}, 1), parts: map[kafka.TopicPartition]*part{}}
	f.loops[l.node] = l
	return f, l
}

func (l *loop) add(tp kafka.TopicPartition, pos int64) *part {
	p := &part{tp: tp, pos: pos, loop: l, leaderEpoch: -1, maxBytes: l.f.cfg.PartitionMaxBytes, hw: -1, lso: -1, logStart: -1}
	l.f.parts[tp] = p
	l.parts[tp] = p
	return p
}

func response(tp kafka.TopicPartition, blk *sarama.FetchResponseBlock) *sarama.FetchResponse {
	return &sarama.FetchResponse{Version: fetchVersion, Blocks: map[string]map[int32]*sarama.FetchResponseBlock{tp.Topic: {tp.Partition: blk}}}
}

// TestApplyStall: a partition whose end is ahead but whose responses stay empty gets its
// fetch size doubled every stallLimit responses up to MaxBytes; a block with only a cut-off
// batch doubles it at once.
func TestApplyStall(t *testing.T) {
	_, l := testLoop(t, nil)
	tp := tpOf("t", 0)
	p := l.add(tp, 10)
	empty := func() *sarama.FetchResponse {
		return response(tp, &sarama.FetchResponseBlock{HighWaterMarkOffset: 100, LastStableOffset: 100})
	}
	for i := range stallLimit {
		l.applySarama(empty(), l.plan().ws)
		if i < stallLimit-1 && p.maxBytes != 1<<20 {
			t.Fatalf("fetch size %d after %d empty responses", p.maxBytes, i+1)
		}
	}
	if p.maxBytes != 2<<20 {
		t.Fatalf("fetch size %d after %d empty responses with the end ahead, want 2 MiB", p.maxBytes, stallLimit)
	}
	partial := &sarama.Records{RecordBatch: &sarama.RecordBatch{FirstOffset: 10, Version: 2, PartialTrailingRecord: true}}
	l.applySarama(response(tp, &sarama.FetchResponseBlock{HighWaterMarkOffset: 100, RecordsSet: []*sarama.Records{partial}}), l.plan().ws)
	if p.maxBytes != 4<<20 {
		t.Fatalf("fetch size %d after a cut-off batch, want 4 MiB (MaxBytes)", p.maxBytes)
	}
	for range stallLimit {
		l.applySarama(empty(), l.plan().ws)
	}
	if p.maxBytes != 4<<20 || !p.stallLogged {
		t.Errorf("at MaxBytes: fetch size %d, logged %v; want 4 MiB and the error logged", p.maxBytes, p.stallLogged)
	}
	// Caught up: no stall.
	p.stalls, p.maxBytes = 0, 1<<20
	for range 2 * stallLimit {
		l.applySarama(response(tp, &sarama.FetchResponseBlock{HighWaterMarkOffset: 10, LastStableOffset: 10}), l.plan().ws)
	}
	if p.maxBytes != 1<<20 {
		t.Errorf("a caught-up partition's fetch size grew to %d", p.maxBytes)
	}
}

// TestApplyErrors classifies partition errors.
func TestApplyErrors(t *testing.T) {
	one := func(t *testing.T, mod func(*Config), k sarama.KError) (*Fetcher, *part) {
		f, l := testLoop(t, mod)
		tp := tpOf("t", 0)
		p := l.add(tp, 5)
		l.applySarama(response(tp, &sarama.FetchResponseBlock{Err: k, HighWaterMarkOffset: -1, LastStableOffset: -1, LogStartOffset: -1}), l.plan().ws)
		return f, p
	}
	t.Run("OutOfRangeEarliest", func(t *testing.T) {
		_, p := one(t, nil, sarama.ErrOffsetOutOfRange)
		if p.pos != kafka.OffsetUnknown || p.ready || p.failed {
			t.Errorf("pos %d ready %v failed %v; want a pending reset", p.pos, p.ready, p.failed)
		}
	})
	t.Run("OutOfRangeNone", func(t *testing.T) {
		f, p := one(t, func(c *Config) { c.Reset = None }, sarama.ErrOffsetOutOfRange)
		ch := f.Poll()
		if len(ch) != 1 || !errors.Is(ch[0].Err, ErrOffsetOutOfRange) || !p.failed || p.pos != 5 {
			t.Errorf("chunks %+v, failed %v pos %d", ch, p.failed, p.pos)
		}
	})
	for _, k := range []sarama.KError{sarama.ErrNotLeaderForPartition, sarama.ErrFencedLeaderEpoch, sarama.ErrUnknownLeaderEpoch,
		sarama.ErrUnknownTopicOrPartition, sarama.ErrLeaderNotAvailable, sarama.ErrKafkaStorageError} {
		t.Run(fmt.Sprint("code", int16(k)), func(t *testing.T) {
			f, p := one(t, nil, k)
			if p.loop != nil || f.unrouted[p.tp] != p || !p.refresh || p.retryAt.IsZero() || p.pos != 5 {
				t.Errorf("%v: loop %v unrouted %v refresh %v retryAt %v pos %d; want it back to the router with a refresh after a backoff",
					k, p.loop, f.unrouted[p.tp] != nil, p.refresh, p.retryAt, p.pos)
			}
		})
	}
	t.Run("Authorization", func(t *testing.T) {
		f, _ := one(t, nil, sarama.ErrTopicAuthorizationFailed)
		ch := f.Poll()
		var pe *PartitionError
		if len(ch) != 1 || !errors.Is(ch[0].Err, sarama.ErrTopicAuthorizationFailed) || !errors.As(ch[0].Err, &pe) || pe.TP != tpOf("t", 0) {
			t.Errorf("chunks %+v", ch)
		}
	})
	t.Run("UnknownServerError", func(t *testing.T) {
		_, p := one(t, nil, sarama.ErrUnknown)
		if p.loop == nil || p.failed || p.retryAt.IsZero() {
			t.Errorf("loop %v failed %v retryAt %v; want a retry on the same loop after a backoff", p.loop, p.failed, p.retryAt)
		}
	})
	t.Run("Stale", func(t *testing.T) {
		f, l := testLoop(t, nil)
		tp := tpOf("t", 0)
		p := l.add(tp, 0)
		ws := l.plan().ws
		f.Seek(tp, 3) // while the request is in flight
		l.applySarama(response(tp, &sarama.FetchResponseBlock{HighWaterMarkOffset: 10, RecordsSet: []*sarama.Records{batch(0, 10, -1, false)}}), ws)
		if p.ready || p.pos != 3 {
			t.Errorf("a response for offset 0 applied after a seek to 3: ready %v pos %d", p.ready, p.pos)
		}
	})
}

// TestPollHoldsPaused: a chunk of a paused partition stays until Resume.
func TestPollHoldsPaused(t *testing.T) {
	f, l := testLoop(t, nil)
	tp := tpOf("t", 0)
	l.add(tp, 0)
	l.applySarama(response(tp, &sarama.FetchResponseBlock{HighWaterMarkOffset: 2, LastStableOffset: 2, RecordsSet: []*sarama.Records{batch(0, 2, -1, false)}}), l.plan().ws)
	f.Pause(tp)
	if ch := f.Poll(); len(ch) != 0 {
		t.Fatalf("Poll returned %d chunks of a paused partition", len(ch))
	}
	if pl := l.plan(); pl.waitPoll || len(pl.ws) != 0 {
		t.Errorf("paused partition with a held chunk: plan %+v, want nothing to fetch and no wait for a poll", pl)
	}
	f.Resume(tp)
	if pl := l.plan(); !pl.waitPoll {
		t.Errorf("resumed partition with a chunk: plan %+v, want a wait for the poll", pl)
	}
	ch := f.Poll()
	if len(ch) != 1 || len(ch[0].Records) != 2 || f.Position(tp) != 2 || f.Lag(tp) != 0 {
		t.Errorf("after Resume: chunks %+v position %d lag %d", ch, f.Position(tp), f.Lag(tp))
	}
	if ch := f.Poll(); len(ch) != 0 {
		t.Errorf("a chunk came out twice")
	}
}
