package kstream_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
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
			var te *processor.TopologyError
			if !errors.As(err, &te) || te.Name == "" || !strings.Contains(te.Reason, te.Name) || !errors.Is(err, processor.ErrInvalidTopology) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("Build: %v, want a *processor.TopologyError naming the join (%q)", err, c.msg)
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

// A left join's null-key record is not buffered: it joins with null at once (Java 4.4 fails the
// task with "key cannot be null" from RocksDBTimeOrderedKeyValueBuffer.put, checked with the
// conformance Runner on the ver-st topology).
func TestStreamTableLeftJoinGraceNullKey(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	tbl := kstream.Table(b, "t", kstream.ConsumedWith(NS, S), kstream.MaterializedAsVersioned[*string, string](versionedRetention("v", time.Second)))
	kstream.Stream(b, "s", kstream.ConsumedWith(NS, S)).
		LeftJoin(kstream.NullableTableValues(tbl), func(v string, o *string) string { return v + "|" + str(o) },
			kstream.JoinedWith(NS, S, NS).WithGracePeriod(100*time.Millisecond)).
		To("out", kstream.ProducedWith(NS, S))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, map[string]string{"application.id": "grace-null-key"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "s", serde.Nullable(serde.String()), serde.String())
	k := "k"
	if err := in.PipeRecord(testdriver.NewTestRecordAt[*string](&k, "buffered", 1000)); err != nil {
		t.Fatal(err)
	}
	if err := in.PipeRecord(testdriver.NewTestRecordAt[*string](nil, "nk", 900)); err != nil {
		t.Fatal(err)
	}
	got, err := testdriver.CreateOutputTopic(d, "out", serde.Nullable(serde.String()), serde.String()).ReadValuesToList()
	if err != nil || !slices.Equal(got, []string{"nk|"}) {
		t.Fatalf("output %v %v, want [nk|] (the keyed record still buffered)", got, err)
	}
}
