package kstream_test

import (
	"errors"
	"testing"

	"github.com/kstreams-go/kstreams/kstream"
)

func TestTableJoinBuildErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *kstream.StreamsBuilder)
		want  error
	}{
		{"table join: repartition counts differ", func(b *kstream.StreamsBuilder) {
			l := kstream.Stream(b, "l", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("l").WithNumberOfPartitions(2)).ToTable()
			r := kstream.Stream(b, "r", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("r").WithNumberOfPartitions(3)).ToTable()
			l.Join(r, joinVals)
		}, kstream.ErrNotCopartitioned},
		{"table join: other builder", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(kstream.NewStreamsBuilder(), "r", kstream.ConsumedWith(S, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).LeftJoin(r, joinVals)
		}, kstream.ErrForeignBuilder},
		{"table join: nil joiner", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(b, "r", kstream.ConsumedWith(S, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).OuterJoin(r, (func(string, string) string)(nil))
		}, kstream.ErrNilFunction},
		{"fk join: nil extractor", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(b, "r", kstream.ConsumedWith(NS, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).JoinFK(r, (func(string) *string)(nil), joinVals)
		}, kstream.ErrNilFunction},
		{"fk join: Materialized of the wrong types", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(b, "r", kstream.ConsumedWith(NS, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).LeftJoinFK(r, foreignKeyOf, joinVals, kstream.MaterializedAs[string, int64]("x"))
		}, kstream.ErrOptionType},
		{"fk join: other builder", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(kstream.NewStreamsBuilder(), "r", kstream.ConsumedWith(NS, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).JoinFK(r, foreignKeyOf, joinVals)
		}, kstream.ErrForeignBuilder},
		{"fk join: illegal name", func(b *kstream.StreamsBuilder) {
			r := kstream.Table(b, "r", kstream.ConsumedWith(NS, S))
			kstream.Table(b, "l", kstream.ConsumedWith(S, S)).JoinFK(r, foreignKeyOf, joinVals, kstream.TableJoinedAs[string, *string]("a b"))
		}, kstream.ErrInvalidName},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := kstream.NewStreamsBuilder()
			c.build(b)
			_, err := b.Build()
			if !errors.Is(err, c.want) || !errors.Is(err, kstream.ErrInvalidTopology) {
				t.Fatalf("Build error = %v, want %v", err, c.want)
			}
		})
	}
}
