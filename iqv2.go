package kstreams

import (
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/topology"
	"maps"
	"slices"

	"github.com/kstreams-go/kstreams/internal/storeview"
	"github.com/kstreams-go/kstreams/processor"
)

// Interactive queries v2 (KIP-796): a typed query against one store, answered per local
// partition with the position (the input offsets) the answer reflects, and refused for a
// partition whose store has not processed up to a position bound. The queries run on the
// typed views (KeyValueStore, WindowStore, SessionStore), restricted to one partition each.

// Position is, per input topic and partition, the offset of the last record reflected: of a
// query result, the input its task had processed when it answered. Java:
// org.apache.kafka.streams.query.Position.
type Position map[string]map[int32]int64

// Offset returns the position's offset of topic's partition, false when it has none.
func (p Position) Offset(topic string, partition int32) (int64, bool) {
	o, ok := p[topic][partition]
	return o, ok
}

// merge adds q's offsets, keeping the larger of two.
func (p Position) merge(q Position) Position {
	if p == nil {
		p = Position{}
	}
	for topic, parts := range q {
		if p[topic] == nil {
			p[topic] = map[int32]int64{}
		}
		for part, off := range parts {
			if cur, ok := p[topic][part]; !ok || off > cur {
				p[topic][part] = off
			}
		}
	}
	return p
}

// PositionBound is the least position a query accepts an answer at: unbounded (the zero
// value), or at least a Position: the answering partition p's task must have processed, of
// every topic the bound names for partition p, at least the bound's offset (a topic it has
// not seen fails the bound; the bound's other partitions do not matter to p), as Java's
// StoreQueryUtils.isPermitted. Java: org.apache.kafka.streams.query.PositionBound.
type PositionBound struct {
	at Position
}

// UnboundedPosition accepts any answer (the default). Java: PositionBound.unbounded().
func UnboundedPosition() PositionBound { return PositionBound{} }

// PositionBoundAt accepts answers of stores that have processed at least p. Java:
// PositionBound.at(position).
func PositionBoundAt(p Position) PositionBound { return PositionBound{at: p} }

// IsUnbounded reports whether the bound accepts any answer.
func (b PositionBound) IsUnbounded() bool { return len(b.at) == 0 }

// reachedBy reports whether partition's task, having processed pos, satisfies the bound.
func (b PositionBound) reachedBy(pos Position, partition int32) bool {
	for topic, parts := range b.at {
		off, bounded := parts[partition]
		if !bounded {
			continue
		}
		if got, ok := pos.Offset(topic, partition); !ok || got < off {
			return false
		}
	}
	return true
}

// FailureReason says why a partition did not answer. Java: FailureReason.
type FailureReason string

// The failure reasons.
const (
	// FailureUnknownQueryType: the store does not answer this kind of query (a timestamped
	// query of a plain store, a versioned query of an unversioned one, a window query of a
	// key-value store, ...).
	FailureUnknownQueryType FailureReason = "UNKNOWN_QUERY_TYPE"
	// FailureNotPresent: no local task of the partition has the store (it is on another
	// instance, or was asked for and does not exist).
	FailureNotPresent FailureReason = "NOT_PRESENT"
	// FailureNotActive: the local task is a standby and the request requires an active one.
	FailureNotActive FailureReason = "NOT_ACTIVE"
	// FailureNotUpToBound: the store has not processed up to the request's position bound yet
	// (retry later, or on another instance).
	FailureNotUpToBound FailureReason = "NOT_UP_TO_BOUND"
	// FailureStoreException: the store failed, or does not hold the query's key and value
	// types (the message names the types it holds).
	FailureStoreException FailureReason = "STORE_EXCEPTION"
)

// QueryResult is one partition's answer: Result and the Position it reflects, or a Failure
// with a message. Java: QueryResult.
type QueryResult[R any] struct {
	Result   R
	Position Position
	// Failure is "" for a success.
	Failure FailureReason
	// FailureMessage says more about a failure.
	FailureMessage string
}

// IsSuccess reports whether the partition answered.
func (r QueryResult[R]) IsSuccess() bool { return r.Failure == "" }

// StateQueryResult is the answer of every partition asked. Java: StateQueryResult.
type StateQueryResult[R any] struct {
	// PartitionResults are the answers by input partition.
	PartitionResults map[int32]QueryResult[R]
}

// OnlyPartitionResult returns the one partition's answer, an error when there are several or
// none. Java: getOnlyPartitionResult().
func (s *StateQueryResult[R]) OnlyPartitionResult() (QueryResult[R], error) {
	if len(s.PartitionResults) != 1 {
		return QueryResult[R]{}, fmt.Errorf("kstreams: %d partition results, not one", len(s.PartitionResults))
	}
	for _, r := range s.PartitionResults {
		return r, nil
	}
	panic("unreachable")
}

// Position merges the positions of the successful answers. Java: getPosition().
func (s *StateQueryResult[R]) Position() Position {
	var p Position
	for _, r := range s.PartitionResults {
		if r.IsSuccess() {
			p = p.merge(r.Position)
		}
	}
	return p
}

// Query is a typed query with results of type R: KeyQuery, RangeQuery, TimestampedKeyQuery,
// TimestampedRangeQuery, WindowKeyQuery, WindowRangeQuery, VersionedKeyQuery,
// MultiVersionedKeyQuery. Java: org.apache.kafka.streams.query.Query.
type Query[R any] interface {
	// accepts says how a store of kind k answers the query ("" for a store the views cannot
	// classify, a custom one: the query runs).
	accepts(k storeview.Kind) (acceptance, error)
	// run answers the query from store name's task of partition p (the options select it).
	run(k *KafkaStreams, name string, opts []StoreQueryOption) (R, error)
}

// acceptance is how a kind of store answers a query, as Java's store layers do.
type acceptance int

const (
	// queryRuns: the store answers.
	queryRuns acceptance = iota
	// queryUnknown: UNKNOWN_QUERY_TYPE once the position bound is met (Java: the innermost
	// store knows the query, StoreQueryUtils, and checks the bound before the store type).
	queryUnknown
	// queryUnknownAnyBound: UNKNOWN_QUERY_TYPE whatever the bound (Java: no layer of the store
	// knows the query, or the typed layer refuses its shape).
	queryUnknownAnyBound
)

// StateQueryRequest asks store Store the Query. Java: StateQueryRequest.
type StateQueryRequest[R any] struct {
	// Store is the store's name.
	Store string
	// Query is the query.
	Query Query[R]
	// Partitions are the input partitions to ask; nil asks every local one.
	Partitions []int32
	// Bound is the least position an answer may reflect (default unbounded).
	Bound PositionBound
	// RequireActive refuses answers of standby tasks (FailureNotActive); by default standbys
	// answer too, as Java's IQv2. An active task's answer is not checked against Bound then
	// (Java: KafkaStreams.query passes an unbounded bound with requireActive).
	RequireActive bool
}

// StoreRequest is the first half of a StateQueryRequest: the store it asks. Make one with
// InStore and finish it with WithQuery, which infers the result type from the query.
type StoreRequest struct{ store string }

// InStore starts a request for the store named name:
//
//	req := kstreams.InStore("counts").WithQuery(kstreams.KeyQuery[string, int64]{Key: "raven"})
//	res, err := kstreams.StateQuery(app, req) // res is *StateQueryResult[*int64]
//
// Java: StateQueryRequest.inStore(name).
func InStore(name string) StoreRequest { return StoreRequest{store: name} }

// WithQuery returns the request asking q, its result type R taken from q (every local
// partition, unbounded, standbys allowed). Java: StateQueryRequest.InStore.withQuery(query).
func (s StoreRequest) WithQuery[R any](q Query[R]) StateQueryRequest[R] {
	return StateQueryRequest[R]{Store: s.store, Query: q}
}

// WithPartitions returns a copy asking only the given input partitions. Java: withPartitions.
func (r StateQueryRequest[R]) WithPartitions(partitions ...int32) StateQueryRequest[R] {
	r.Partitions = append([]int32(nil), partitions...)
	return r
}

// WithPositionBound returns a copy whose answers must reflect at least bound. Java:
// withPositionBound.
func (r StateQueryRequest[R]) WithPositionBound(bound PositionBound) StateQueryRequest[R] {
	r.Bound = bound
	return r
}

// WithRequireActive returns a copy that only active tasks answer. Java: requireActive().
func (r StateQueryRequest[R]) WithRequireActive() StateQueryRequest[R] {
	r.RequireActive = true
	return r
}

// StateQuery runs req on this instance's stores (KIP-796) and returns the answer of each
// partition asked: every local partition of the store, or req.Partitions (those without a
// local task answer FailureNotPresent). A partition whose store cannot answer that kind of
// query answers FailureUnknownQueryType, as Java's stores do (e.g. a TimestampedKeyQuery of a
// plain key-value store, a VersionedKeyQuery of a key-value or window store, a
// WindowRangeQuery by key of a window store). Errors: processor.ErrUnknownStore, ErrStoreNotAvailable
// (the instance is not running), a nil query; errors.ErrUnsupported (wrapped) for a KeyQuery
// or RangeQuery of a versioned store and ErrInvalidQuery for a MultiVersionedKeyQuery whose
// FromTime is after its ToTime, which Java throws from KafkaStreams.query
// (UnsupportedOperationException, IllegalArgumentException). Java:
// KafkaStreams.query(StateQueryRequest).
func StateQuery[R any](k *KafkaStreams, req StateQueryRequest[R]) (*StateQueryResult[R], error) {
	if req.Query == nil {
		return nil, errors.New("kstreams: StateQuery: the request has no query")
	}
	if topology.Of(k.topology).Store(req.Store) == nil {
		return nil, fmt.Errorf("kstreams: %w: %q", processor.ErrUnknownStore, req.Store)
	}
	if st := k.State(); (st != StateRunning && st != StateRebalancing) || k.runtime() == nil {
		return nil, fmt.Errorf("%w: %q: the instance is %s", ErrStoreNotAvailable, req.Store, st)
	}
	local := k.queryStores(req.Store, storeQuery{stale: true})
	byPartition := map[int32]processor.TaskID{}
	for id := range local {
		byPartition[int32(id.Partition)] = id
	}
	parts := req.Partitions
	if parts == nil {
		parts = slices.Sorted(maps.Keys(byPartition))
	}
	out := &StateQueryResult[R]{PartitionResults: map[int32]QueryResult[R]{}}
	for _, p := range parts {
		id, ok := byPartition[p]
		if !ok {
			out.PartitionResults[p] = QueryResult[R]{Failure: FailureNotPresent,
				FailureMessage: fmt.Sprintf("no local task of partition %d has store %q", p, req.Store)}
			continue
		}
		qs := local[id]
		if (qs.Standby || qs.Restoring) && req.RequireActive {
			what := "a standby"
			if qs.Restoring {
				what = "an active task still restoring"
			}
			out.PartitionResults[p] = QueryResult[R]{Failure: FailureNotActive,
				FailureMessage: fmt.Sprintf("task %s is %s here", id, what)}
			continue
		}
		kind := queryStoreKind(qs.Store)
		acc, err := req.Query.accepts(kind)
		if err != nil {
			return nil, fmt.Errorf("kstreams: StateQuery of store %q: %w", req.Store, err)
		}
		// The position is read before the query, under its own hold of the store: the answer
		// reflects at least it (positions only grow), so a bound it meets is met by the answer.
		pos, ok := qs.Position()
		if !ok {
			out.PartitionResults[p] = QueryResult[R]{Failure: FailureNotPresent,
				FailureMessage: fmt.Sprintf("task %s moved or closed", id)}
			continue
		}
		position := Position(pos)
		unknown := QueryResult[R]{Position: position, Failure: FailureUnknownQueryType,
			FailureMessage: fmt.Sprintf("store %q is a %s, which does not answer a %s", req.Store, kind, queryName(req.Query))}
		if acc == queryUnknownAnyBound {
			out.PartitionResults[p] = unknown
			continue
		}
		if !req.RequireActive && !req.Bound.reachedBy(position, p) {
			out.PartitionResults[p] = QueryResult[R]{Position: position, Failure: FailureNotUpToBound,
				FailureMessage: fmt.Sprintf("task %s has processed %v, not up to the bound %v", id, position, req.Bound.at)}
			continue
		}
		if acc == queryUnknown {
			out.PartitionResults[p] = unknown
			continue
		}
		opts := []StoreQueryOption{WithPartition(int(p))}
		if qs.Standby || qs.Restoring {
			opts = append(opts, EnableStaleStores())
		}
		r, err := req.Query.run(k, req.Store, opts)
		if err != nil {
			out.PartitionResults[p] = QueryResult[R]{Position: position, Failure: FailureStoreException, FailureMessage: err.Error()}
			continue
		}
		out.PartitionResults[p] = QueryResult[R]{Result: r, Position: position}
	}
	return out, nil
}
