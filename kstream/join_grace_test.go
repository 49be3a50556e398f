package kstream_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
)

// Java refuses a grace period against a table that is not versioned, or whose history
// retention is shorter than the grace (IllegalArgumentException from KStreamImpl and
// StreamTableJoinNode); we refuse those and a negative grace at Build.
func TestStreamTableJoinGraceBuildErrors(t *testing.T) {
	grace := kstream.JoinedWith(S, S, S).WithGracePeriod(20 * time.Millisecond)
	cases := []struct {
		name  string
		build func(b *kstream.StreamsBuilder)
		msg   string
	}{
		{"plain table", func(b *kstream.StreamsBuilder) {
			tbl := kstream.Table(b, "t", kstream.ConsumedWith(S, S))
			kstream.Stream(b, "s", kstream.ConsumedWith(S, S)).Join(tbl, joinVals, grace)
		}, "must be versioned"},
		{"materialized filter of a versioned table", func(b *kstream.StreamsBuilder) {
			tbl := kstream.Table(b, "t", kstream.ConsumedWith(S, S), kstream.MaterializedAsVersioned[string, string](versionedRetention("v", time.Second))).
				Filter(func(string, string) bool { return true }, kstream.MaterializedAs[string, string]("plain"))
			kstream.Stream(b, "s", kstream.ConsumedWith(S, S)).LeftJoin(tbl, joinVals, grace)
		}, "store plain is not versioned"},
		{"history retention shorter than grace", func(b *kstream.StreamsBuilder) {
			tbl := kstream.Table(b, "t", kstream.ConsumedWith(S, S), kstream.MaterializedAsVersioned[string, string](versionedRetention("v", 10*time.Millisecond)))
			kstream.Stream(b, "s", kstream.ConsumedWith(S, S)).Join(tbl, joinVals, grace)
		}, "history retention of store v (10 ms) must be at least the grace period (20 ms)"},
		{"negative grace", func(b *kstream.StreamsBuilder) {
			tbl := kstream.Table(b, "t", kstream.ConsumedWith(S, S), kstream.MaterializedAsVersioned[string, string](versionedRetention("v", time.Second)))
			kstream.Stream(b, "s", kstream.ConsumedWith(S, S)).Join(tbl, joinVals, kstream.JoinedAs[string, string, string]("j").WithGracePeriod(-time.Millisecond))
		}, "j: grace period must not be negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := kstream.NewStreamsBuilder()
			c.build(b)
			_, err := b.Build()
			if !errors.Is(err, kstream.ErrJoinGrace) || !errors.Is(err, kstream.ErrInvalidTopology) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("Build: %v, want ErrJoinGrace (%q)", err, c.msg)
			}
		})
	}
	b := kstream.NewStreamsBuilder()
	tbl := kstream.Table(b, "t", kstream.ConsumedWith(S, S), kstream.MaterializedAsVersioned[string, string](versionedRetention("v", 20*time.Millisecond)))
	kstream.Stream(b, "s", kstream.ConsumedWith(S, S)).Join(tbl, joinVals, grace)
	if _, err := b.Build(); err != nil {
		t.Fatalf("grace = history retention: %v", err)
	}
}
