package changelog

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kstreams-go/kstreams/processor"
)

// Record is one changelog record as read from Kafka (Offset, Key, Value: nil for a
// tombstone, Timestamp in ms, Headers; a Reader leaves Partition 0): the record a store's
// restore callback gets, so that restore hands what it fetched to the store as it is, once it
// set the partition.
type Record = processor.RestoreRecord

// Reader is the small view of Kafka that restore needs. The sarama implementation is
// [NewSaramaReader]; tests and the test driver can use [MemoryLog]. Implementations must be
// safe for use by one goroutine at a time per partition.
type Reader interface {
	// EndOffset returns the offset restore reads up to (exclusive): the high-water mark, also
	// when reading committed records only (exactly-once), where Fetch then returns the
	// records up to it as the transactions in front of it end (see SaramaReader.EndOffset).
	EndOffset(ctx context.Context, tp TopicPartition) (int64, error)
	// BeginningOffset returns the log start offset of the partition.
	BeginningOffset(ctx context.Context, tp TopicPartition) (int64, error)
	// Fetch returns the records at offsets >= from that are available now (never records of
	// aborted transactions when reading committed records), in offset order, and the offset to
	// fetch next, which moves past transaction markers and filtered records. It may block for a
	// short broker wait; an empty result with next == from means nothing is available yet.
	// Errors: ErrOffsetOutOfRange (wrapped) when from is outside the log; broker errors.
	Fetch(ctx context.Context, tp TopicPartition, from int64) (recs []Record, next int64, err error)
}

// AppendReader is implemented by readers that can decode a fetch into a caller's slice:
// restore recycles a few slices from fetch to fetch instead of allocating one per fetch
// (with 1 MiB fetches of small records, that was a quarter of restore's garbage and of the
// garbage collections it caused).
type AppendReader interface {
	Reader
	// FetchAppend is Fetch, appending the records to buf[:0] (growing it when needed) and
	// returning the result. The records' Key, Value and Headers never point into buf. The
	// returned slice belongs to the caller: restore clears it once applied and hands it back
	// as buf.
	FetchAppend(ctx context.Context, tp TopicPartition, from int64, buf []Record) (recs []Record, next int64, err error)
}

// ErrOffsetOutOfRange is returned by Reader.Fetch when the requested offset is not in the log
// (before the log start after compaction or deletion, or after the end).
var ErrOffsetOutOfRange = errors.New("changelog: offset out of range")

// MemoryLog is an in-memory changelog Reader (and writer) for tests and the test driver. It
// keeps records per partition; Append assigns offsets. Transactions are not modelled: the end
// offset is the next offset. Safe for concurrent use.
type MemoryLog struct {
	mu    sync.Mutex
	parts map[TopicPartition]*memPartition
	// MaxFetch is the largest number of records one Fetch returns; 0 means 500.
	MaxFetch int
}

type memPartition struct {
	start int64
	recs  []Record
}

// NewMemoryLog returns an empty log.
func NewMemoryLog() *MemoryLog { return &MemoryLog{parts: map[TopicPartition]*memPartition{}} }

func (m *MemoryLog) part(tp TopicPartition) *memPartition {
	p := m.parts[tp]
	if p == nil {
		p = &memPartition{}
		m.parts[tp] = p
	}
	return p
}

// Append adds a record to tp and returns its offset (the Offset field of r is ignored).
func (m *MemoryLog) Append(tp TopicPartition, r Record) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.part(tp)
	r.Offset = p.start + int64(len(p.recs))
	p.recs = append(p.recs, r)
	return r.Offset
}

// Records returns a copy of the records of tp.
func (m *MemoryLog) Records(tp TopicPartition) []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Record(nil), m.part(tp).recs...)
}

// EndOffset implements Reader.
func (m *MemoryLog) EndOffset(_ context.Context, tp TopicPartition) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.part(tp)
	return p.start + int64(len(p.recs)), nil
}

// BeginningOffset implements Reader.
func (m *MemoryLog) BeginningOffset(_ context.Context, tp TopicPartition) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.part(tp).start, nil
}

// Fetch implements Reader.
func (m *MemoryLog) Fetch(_ context.Context, tp TopicPartition, from int64) ([]Record, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.part(tp)
	end := p.start + int64(len(p.recs))
	if from < p.start || from > end {
		return nil, from, fmt.Errorf("%w: %s offset %d (log %d..%d)", ErrOffsetOutOfRange, tp, from, p.start, end)
	}
	n := m.MaxFetch
	if n <= 0 {
		n = 500
	}
	i := int(from - p.start)
	j := min(len(p.recs), i+n)
	out := append([]Record(nil), p.recs[i:j]...)
	return out, p.start + int64(j), nil
}
