package kstreams

import (
	"slices"
	"testing"

	"github.com/kstreams-go/kstreams/store"
)

// A position bound is met by a partition's position as Java's StoreQueryUtils.isPermitted
// decides: only the bound's offsets for that partition count, each must be reached, and a
// bounded topic the position has not seen fails.
func TestPositionBound(t *testing.T) {
	pos := Position{"in": {0: 10, 1: 3}}
	for _, c := range []struct {
		bound PositionBound
		part  int32
		want  bool
	}{
		{UnboundedPosition(), 0, true},
		{PositionBoundAt(Position{"in": {0: 10}}), 0, true},
		{PositionBoundAt(Position{"in": {0: 11}}), 0, false},
		{PositionBoundAt(Position{"in": {0: 11}}), 1, true}, // not bounded for partition 1
		{PositionBoundAt(Position{"in": {1: 3, 0: 99}}), 1, true},
		{PositionBoundAt(Position{"other": {0: 0}}), 0, false},
		{PositionBoundAt(Position{"other": {0: 0}}), 2, true},
	} {
		if got := c.bound.reachedBy(pos, c.part); got != c.want {
			t.Errorf("bound %v partition %d: %v, want %v", c.bound.at, c.part, got, c.want)
		}
	}
	merged := Position{"in": {0: 4}}.merge(pos)
	if merged["in"][0] != 10 || merged["in"][1] != 3 {
		t.Errorf("merge: %v", merged)
	}
}

// InStore(...).WithQuery infers the request's result type from the query, as Java's
// StateQueryRequest.inStore(name).withQuery(query) does; the With methods return copies.
func TestStateQueryRequestInfersResultType(t *testing.T) {
	req := InStore("counts").WithQuery(KeyQuery[string, int64]{Key: "raven"})
	var typed StateQueryRequest[*int64] = req // compiles only with R = *int64
	if typed.Store != "counts" || typed.Query.(KeyQuery[string, int64]).Key != "raven" || typed.Partitions != nil || typed.RequireActive {
		t.Fatalf("request %+v", typed)
	}
	narrowed := req.WithPartitions(1, 3).WithRequireActive().WithPositionBound(PositionBoundAt(Position{"in": {1: 7}}))
	if !slices.Equal(narrowed.Partitions, []int32{1, 3}) || !narrowed.RequireActive || narrowed.Bound.IsUnbounded() {
		t.Fatalf("narrowed request %+v", narrowed)
	}
	if req.Partitions != nil || req.RequireActive || !req.Bound.IsUnbounded() {
		t.Fatalf("the With methods changed the original request: %+v", req)
	}
	rq := InStore("counts").WithQuery(RangeQueryWithNoBounds[string, int64]())
	var _ StateQueryRequest[store.KeyValueIterator[string, int64]] = rq
}
