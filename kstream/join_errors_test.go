package kstream_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
	"github.com/kstreams-go/kstreams/testdriver"
)

func TestJoinBuildErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *kstream.StreamsBuilder)
		msg   string // what the error's reason says
	}{
		{"repartition counts differ", func(b *kstream.StreamsBuilder) {
			l := kstream.Stream(b, "l", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("l").WithNumberOfPartitions(2))
			r := kstream.Stream(b, "r", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("r").WithNumberOfPartitions(3))
			l.JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(10*jms)).To("out")
		}, "must have the same number of partitions"},
		{"stream-table repartition counts differ", func(b *kstream.StreamsBuilder) {
			tb := kstream.Stream(b, "t", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("t").WithNumberOfPartitions(4)).ToTable()
			kstream.Stream(b, "s", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("s").WithNumberOfPartitions(1)).
				Join(tb, joinVals).To("out")
		}, "must have the same number of partitions"},
		{"negative time difference", func(b *kstream.StreamsBuilder) {
			l := kstream.Stream(b, "l", kstream.ConsumedWith(S, S))
			r := kstream.Stream(b, "r", kstream.ConsumedWith(S, S))
			l.JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(-jms)).To("out")
		}, "time difference must not be negative (got -1 ms)"},
		{"before+after negative", func(b *kstream.StreamsBuilder) {
			l := kstream.Stream(b, "l", kstream.ConsumedWith(S, S))
			r := kstream.Stream(b, "r", kstream.ConsumedWith(S, S))
			l.JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(10*jms).Before(-20*jms)).To("out")
		}, "window interval (before+after = -10 ms) must not be negative"},
		{"other builder", func(b *kstream.StreamsBuilder) {
			other := kstream.NewStreamsBuilder()
			r := kstream.Stream(other, "r", kstream.ConsumedWith(S, S))
			kstream.Stream(b, "l", kstream.ConsumedWith(S, S)).JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(jms))
		}, "the other side was created by another StreamsBuilder"},
		{"nil joiner", func(b *kstream.StreamsBuilder) {
			tb := kstream.Table(b, "t", kstream.ConsumedWith(S, S))
			kstream.Stream(b, "s", kstream.ConsumedWith(S, S)).Join(tb, (func(string, string) string)(nil))
		}, "joiner must not be nil"},
		{"same store supplier names", func(b *kstream.StreamsBuilder) {
			sup, err := store.Stores.InMemoryWindowStore("same", 20*jms, 20*jms, true)
			if err != nil {
				t.Fatal(err)
			}
			l := kstream.Stream(b, "l", kstream.ConsumedWith(S, S))
			r := kstream.Stream(b, "r", kstream.ConsumedWith(S, S))
			l.JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(10*jms), kstream.StreamJoinedWithStoreSuppliers[string, string, string](sup, sup))
		}, `both StoreSuppliers have the same name "same"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := kstream.NewStreamsBuilder()
			c.build(b)
			topo, err := b.Build()
			var te *processor.TopologyError
			if !errors.As(err, &te) || !errors.Is(err, processor.ErrInvalidTopology) || !strings.Contains(te.Reason, c.msg) {
				t.Fatalf("Build error = %v, want a *processor.TopologyError saying %q", err, c.msg)
			}
			if topo != nil {
				t.Fatal("topology returned with an error")
			}
		})
	}
}

// A stream-stream join without serdes and without default serdes fails when the driver
// initialises the join stores (Java: "Please specify a key serde or set one through
// StreamsConfig#DEFAULT_KEY_SERDE_CLASS_CONFIG" at init).
func TestJoinMissingSerdes(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	l := kstream.Stream(b, "l", kstream.ConsumedWith(S, S))
	r := kstream.Stream(b, "r", kstream.ConsumedWith(S, S))
	l.LeftJoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(10*jms)).To("out", kstream.ProducedWith(S, S))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, map[string]string{"application.id": "no-serdes"}, 0)
	if err == nil {
		d.Close()
		t.Fatal("driver started without serdes for the join stores")
	}
	if !errors.Is(err, store.ErrNoSerde) {
		t.Fatalf("error = %v, want store.ErrNoSerde", err)
	}
}
