package kstream_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
)

// Build-time misuse: every case fails Build with a *processor.TopologyError (matching
// processor.ErrInvalidTopology) that names the node or store and says what to do.
func TestBuildErrors(t *testing.T) {
	str := kstream.ConsumedWith(serde.String(), serde.String())
	pass := func(string, string) bool { return true }
	cases := []struct {
		name  string
		build func(b *kstream.StreamsBuilder)
		props map[string]string
		name_ string // the *processor.TopologyError's Name
		msg   string
	}{
		{"illegal character in a name", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).Filter(pass, kstream.NamedAs("bad name!")).To("out")
		}, nil, "bad name!", `name "bad name!" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`},
		{"name too long", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).Filter(pass, kstream.NamedAs(strings.Repeat("n", 250))).To("out")
		}, nil, strings.Repeat("n", 250), "can't be longer than 249 characters"},
		{"illegal store name", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).GroupByKey().Count(kstream.MaterializedAs[string, int64]("my store"))
		}, nil, "my store", `name "my store" is illegal`},
		{"processor name used twice", func(b *kstream.StreamsBuilder) {
			s := kstream.Stream(b, "in", str)
			s.Filter(pass, kstream.NamedAs("same")).To("a")
			s.Filter(pass, kstream.NamedAs("same")).To("b")
		}, nil, "same", "processor same is already added; node names must be unique"},
		{"topic read by a stream and a table", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).To("a")
			kstream.Table(b, "in", str).ToStream().To("b")
		}, nil, "KSTREAM-SOURCE-0000000003", "topic in has already been registered by another source"},
		{"overlapping stream topics", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).To("a")
			kstream.StreamTopics(b, []string{"in", "in2"}, str).To("b")
		}, nil, "KSTREAM-SOURCE-0000000000", "are subscribed to overlapping but not equal input topics"},
		{"store name used twice", func(b *kstream.StreamsBuilder) {
			s := kstream.Stream(b, "in", str)
			s.GroupByKey().Count(kstream.MaterializedAs[string, int64]("counts"))
			s.GroupByKey().Count(kstream.MaterializedAs[string, int64]("counts"))
		}, nil, "counts", "a different state store has already been added with the name counts"},
		{"nil function", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).Filter(nil).To("out")
		}, nil, "KSTREAM-FILTER-0000000001", "KSTREAM-FILTER-0000000001: function must not be nil"},
		{"no topics", func(b *kstream.StreamsBuilder) {
			kstream.StreamTopics(b, nil, str).To("out")
		}, nil, "KSTREAM-SOURCE-0000000000", "topics cannot be empty; give at least one topic"},
		{"bad pattern", func(b *kstream.StreamsBuilder) {
			kstream.StreamPattern(b, "in-(", str).To("out")
		}, nil, "KSTREAM-SOURCE-0000000000", "missing closing )"},
		{"merge across builders", func(b *kstream.StreamsBuilder) {
			other := kstream.Stream(kstream.NewStreamsBuilder(), "other", str)
			kstream.Stream(b, "in", str).Merge(other).To("out")
		}, nil, "KSTREAM-MERGE-0000000001", "the other stream belongs to another StreamsBuilder"},
		{"windowed reduce without reducer", func(b *kstream.StreamsBuilder) {
			kstream.WindowedBy(kstream.Stream(b, "in", str).GroupByKey(), kstream.TimeWindowsOfSizeWithNoGrace(time.Minute)).Reduce(nil)
		}, nil, "KSTREAM-REDUCE-0000000002", "KSTREAM-REDUCE-0000000002: reducer must not be nil"},
		{"named windowed aggregate without functions", func(b *kstream.StreamsBuilder) {
			kstream.WindowedBy(kstream.Stream(b, "in", str).GroupByKey(), kstream.TimeWindowsOfSizeWithNoGrace(time.Minute)).
				Aggregate(nil, nil, kstream.TableNamedAs[string, int]("agg"))
		}, nil, "agg", "agg: initializer and aggregator must not be nil"},
		{"session aggregate without merger", func(b *kstream.StreamsBuilder) {
			kstream.WindowedBySession(kstream.Stream(b, "in", str).GroupByKey(), kstream.SessionWindowsOfInactivityGapWithNoGrace(time.Minute)).
				Aggregate(func() int { return 0 }, func(string, string, int) int { return 0 }, nil)
		}, nil, "KSTREAM-AGGREGATE-0000000002", "KSTREAM-AGGREGATE-0000000002: merger must not be nil"},
		{"session reduce without reducer", func(b *kstream.StreamsBuilder) {
			kstream.WindowedBySession(kstream.Stream(b, "in", str).GroupByKey(), kstream.SessionWindowsOfInactivityGapWithNoGrace(time.Minute)).
				Reduce(nil, kstream.TableNamedAs[string, string]("sr"))
		}, nil, "sr", "sr: reducer must not be nil"},
		{"cogroup without aggregator", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).GroupByKey().Cogroup(cogroupNil)
		}, nil, "KSTREAM-SOURCE-0000000000", "cogroup KSTREAM-SOURCE-0000000000: aggregator must not be nil"},
		{"cogroup across builders", func(b *kstream.StreamsBuilder) {
			other := kstream.Stream(kstream.NewStreamsBuilder(), "other", str).GroupByKey()
			kstream.Stream(b, "in", str).GroupByKey().Cogroup(cogroupAgg).Cogroup(other, cogroupAgg)
		}, nil, "KSTREAM-SOURCE-0000000000", "cogroup KSTREAM-SOURCE-0000000000: the grouped stream belongs to another StreamsBuilder"},
		{"cogroup aggregate without initializer", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).GroupByKey().Cogroup(cogroupAgg).Aggregate(nil)
		}, nil, "COGROUPKSTREAM-MERGE-0000000003", "COGROUPKSTREAM-MERGE-0000000003: initializer must not be nil"},
		{"named windowed cogroup aggregate without initializer", func(b *kstream.StreamsBuilder) {
			c := kstream.Stream(b, "in", str).GroupByKey().Cogroup(cogroupAgg)
			kstream.CogroupWindowedBy(c, kstream.TimeWindowsOfSizeWithNoGrace(time.Minute)).Aggregate(nil, kstream.TableNamedAs[string, int]("cg"))
		}, nil, "cg-cogroup-merge", "cg-cogroup-merge: initializer must not be nil"},
		{"session cogroup aggregate without merger", func(b *kstream.StreamsBuilder) {
			c := kstream.Stream(b, "in", str).GroupByKey().Cogroup(cogroupAgg)
			kstream.CogroupWindowedBySession(c, kstream.SessionWindowsOfInactivityGapWithNoGrace(time.Minute)).Aggregate(func() int { return 0 }, nil)
		}, nil, "COGROUPKSTREAM-MERGE-0000000003", "COGROUPKSTREAM-MERGE-0000000003: merger must not be nil"},
		{"table reduce without subtractor", func(b *kstream.StreamsBuilder) {
			kstream.Table(b, "in", str).GroupBy(func(k, v string) (string, string) { return v, k }).
				Reduce(func(a, v string) string { return a + v }, nil, kstream.TableNamedAs[string, string]("tr"))
		}, nil, "tr", "tr: subtractor must not be nil"},
		{"invalid windows", func(b *kstream.StreamsBuilder) {
			kstream.WindowedBy(kstream.Stream(b, "in", str).GroupByKey(), kstream.TimeWindowsOfSizeWithNoGrace(0))
		}, nil, "KSTREAM-SOURCE-0000000000", "windowedBy KSTREAM-SOURCE-0000000000: invalid window specification"},
		{"table-table join without joiner", func(b *kstream.StreamsBuilder) {
			kstream.Table(b, "a", str).Join(kstream.Table(b, "b", str), (func(string, string) string)(nil), kstream.TableNamedAs[string, string]("tj"))
		}, nil, "tj", "tj: joiner must not be nil"},
		{"stream-table join across builders", func(b *kstream.StreamsBuilder) {
			other := kstream.Table(kstream.NewStreamsBuilder(), "t", str)
			kstream.Stream(b, "in", str).Join(other, func(v, tv string) string { return v })
		}, nil, "KSTREAM-SOURCE-0000000000", "of KSTREAM-SOURCE-0000000000: the other side was created by another StreamsBuilder"},
		{"deduplicate without id extractor", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).Deduplicate((func(string, string) string)(nil), time.Minute).To("out")
		}, nil, "KSTREAM-DEDUPLICATE-0000000002", "KSTREAM-DEDUPLICATE-0000000002: id extractor must not be nil"},
		{"named deduplicate with an empty window", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).DeduplicateByKey(0, kstream.DeduplicatedAs[string]("dd")).To("out")
		}, nil, "dd", "dd: window must be at least 1 ms, got 0s"},
		{"dynamic sink without extractor", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).ToExtractor(nil)
		}, nil, "KSTREAM-SINK-0000000001", "KSTREAM-SINK-0000000001: topic name extractor must not be nil"},
		{"named foreign-key join without joiner", func(b *kstream.StreamsBuilder) {
			kstream.Table(b, "a", str).JoinFK(kstream.Table(b, "b", str), func(v string) string { return v },
				(func(string, string) string)(nil), kstream.TableJoinedAs[string, string]("fk"))
		}, nil, "fk", "JoinFK: foreign-key extractor and joiner must not be nil"},
		{"stream-stream join with negative windows", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "a", str).JoinStream(kstream.Stream(b, "b", str), func(v, o string) string { return v },
				kstream.OfTimeDifferenceWithNoGrace(-time.Second))
		}, nil, "KSTREAM-MERGE-0000000006", "KSTREAM-MERGE-0000000006: invalid window specification: time difference must not be negative (got -1000 ms)"},
		{"unknown optimization", func(b *kstream.StreamsBuilder) {
			kstream.Stream(b, "in", str).To("out")
		}, map[string]string{kstream.TopologyOptimizationConfig: "fast"}, "", `"fast" is not a valid optimization; use "none", "all", or a comma-separated list of`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := kstream.NewStreamsBuilder()
			c.build(b)
			topo, err := b.BuildWithConfig(c.props)
			if err == nil {
				t.Fatalf("Build succeeded:\n%s", topo.Describe())
			}
			var te *processor.TopologyError
			if !errors.As(err, &te) || !errors.Is(err, processor.ErrInvalidTopology) || te.Name != c.name_ {
				t.Fatalf("error %v: want a *processor.TopologyError about %q", err, c.name_)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q does not say %q", err, c.msg)
			}
		})
	}
}

// cogroupAgg is a cogroup aggregator; cogroupNil is a nil one.
var (
	cogroupAgg = func(string, string, int) int { return 0 }
	cogroupNil func(string, string, int) int
)

// Serdes: as in Java, a nil serde means the configured default (default.key.serde /
// default.value.serde). Without a default the driver refuses the topology, naming the node; a
// default of the wrong type fails the record, naming the serde and the types.
func TestSerdeDefaults(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	kstream.Stream[string, string](b, "in").
		GroupBy(func(_, v string) string { return v }).
		Count().ToStream().To("out", kstream.ProducedWith(serde.String(), serde.Long()))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	_, err = testdriver.New(topo, map[string]string{"application.id": "no-defaults"}, 0)
	if err == nil || !strings.Contains(err.Error(), `store "KSTREAM-AGGREGATE-STATE-STORE-0000000002"`) || !strings.Contains(err.Error(), "no serde configured") {
		t.Fatalf("want a missing-serde error naming the store, got %v", err)
	}

	// The default value serde is String but the count is int64: after MapValues (which, as in
	// Java, forgets Count's Long serde) writing it with the default fails with serde.ErrWrongType.
	b = kstream.NewStreamsBuilder()
	kstream.Stream[string, string](b, "in").GroupByKey().Count().ToStream().
		MapValues(func(v int64) int64 { return v }).To("out")
	topo, err = b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, stringDefaults("wrong-default"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "in", serde.String(), serde.String())
	err = in.PipeKeyValue("k", "v")
	if !errors.Is(err, serde.ErrWrongType) || !strings.Contains(err.Error(), "got int64, want string") {
		t.Fatalf("want serde.ErrWrongType for an int64 count written with the String default, got %v", err)
	}
}
