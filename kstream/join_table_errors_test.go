package kstream_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
)

func TestTableJoinBuildErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *kstream.StreamsBuilder)
		msg   string // what the error's reason says
	}{
		{"table join: repartition counts differ", func(b *kstream.StreamsBuilder) {
			l := kstream.Stream(b, "l", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("l").WithNumberOfPartitions(2)).ToTable()
			r := kstream.Stream(b, "r", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("r").WithNumberOfPartitions(3)).ToTable()
			l.Join(r, joinVals)
		}, "must have the same number of partitions"},
		{"table join: other builder", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(kstream.NewStreamsBuilder(), "r", kstream.ConsumedWith(S, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).LeftJoin(r, joinVals)
		}, "the other table was created by another StreamsBuilder"},
		{"table join: nil joiner", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(b, "r", kstream.ConsumedWith(S, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).OuterJoin(r, (func(string, string) string)(nil))
		}, "joiner must not be nil"},
		{"fk join: nil extractor", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(b, "r", kstream.ConsumedWith(NS, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).JoinFK(r, (func(string) *string)(nil), joinVals)
		}, "foreign-key extractor and joiner must not be nil"},
		{"fk join: Materialized of the wrong types", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(b, "r", kstream.ConsumedWith(NS, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).LeftJoinFK(r, foreignKeyOf, joinVals, kstream.MaterializedAs[string, int64]("x"))
		}, "it needs TableJoined[string, *string]"},
		{"fk join: other builder", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(kstream.NewStreamsBuilder(), "r", kstream.ConsumedWith(NS, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).JoinFK(r, foreignKeyOf, joinVals)
		}, "the other table was created by another StreamsBuilder"},
		{"fk join: illegal name", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(b, "r", kstream.ConsumedWith(NS, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).JoinFK(r, foreignKeyOf, joinVals, kstream.TableJoinedAs[string, *string]("a b"))
		}, `name "a b-subscription-registration" is illegal`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := kstream.NewStreamsBuilder()
			c.build(b)
			_, err := b.Build()
			var te *processor.TopologyError
			if !errors.As(err, &te) || !errors.Is(err, processor.ErrInvalidTopology) || !strings.Contains(te.Reason, c.msg) {
				t.Fatalf("Build error = %v, want a *processor.TopologyError saying %q", err, c.msg)
			}
		})
	}
}
