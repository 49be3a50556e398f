package kstream_test

import (
	"errors"
	"testing"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/store"
	"github.com/kstreams-go/kstreams/testdriver"
)

func TestJoinBuildErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *kstream.StreamsBuilder)
		want  error
	}{
		{"repartition counts differ", func(b *kstream.StreamsBuilder) {
			l := kstream.Stream(b, "l", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("l").WithNumberOfPartitions(2))
			r := kstream.Stream(b, "r", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("r").WithNumberOfPartitions(3))
			l.JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(10*jms)).To("out")
		}, kstream.ErrNotCopartitioned},
		{"stream-table repartition counts differ", func(b *kstream.StreamsBuilder) {
			tb := kstream.Stream(b, "t", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("t").WithNumberOfPartitions(4)).ToTable()
			kstream.Stream(b, "s", kstream.ConsumedWith(S, S)).Repartition(kstream.RepartitionedAs[string, string]("s").WithNumberOfPartitions(1)).
				Join(tb, joinVals).To("out")
		}, kstream.ErrNotCopartitioned},
		{"negative time difference", func(b *kstream.StreamsBuilder) {
			l := kstream.Stream(b, "l", kstream.ConsumedWith(S, S))
			r := kstream.Stream(b, "r", kstream.ConsumedWith(S, S))
			l.JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(-jms)).To("out")
		}, kstream.ErrInvalidJoinWindows},
		{"before+after negative", func(b *kstream.StreamsBuilder) {
			l := kstream.Stream(b, "l", kstream.ConsumedWith(S, S))
			r := kstream.Stream(b, "r", kstream.ConsumedWith(S, S))
			l.JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(10*jms).Before(-20*jms)).To("out")
		}, kstream.ErrInvalidJoinWindows},
		{"other builder", func(b *kstream.StreamsBuilder) {
			other := kstream.NewStreamsBuilder()
			r := kstream.Stream(other, "r", kstream.ConsumedWith(S, S))
			kstream.Stream(b, "l", kstream.ConsumedWith(S, S)).JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(jms))
		}, kstream.ErrForeignBuilder},
		{"nil joiner", func(b *kstream.StreamsBuilder) {
			tb := kstream.Table(b, "t", kstream.ConsumedWith(S, S))
			kstream.Stream(b, "s", kstream.ConsumedWith(S, S)).Join(tb, (func(string, string) string)(nil))
		}, kstream.ErrNilFunction},
		{"same store supplier names", func(b *kstream.StreamsBuilder) {
			sup, err := store.Stores.InMemoryWindowStore("same", 20*jms, 20*jms, true)
			if err != nil {
				t.Fatal(err)
			}
			l := kstream.Stream(b, "l", kstream.ConsumedWith(S, S))
			r := kstream.Stream(b, "r", kstream.ConsumedWith(S, S))
			l.JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(10*jms), kstream.StreamJoinedWithStoreSuppliers[string, string, string](sup, sup))
		}, kstream.ErrJoinStoreSupplier},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := kstream.NewStreamsBuilder()
			c.build(b)
			topo, err := b.Build()
			if !errors.Is(err, c.want) || !errors.Is(err, kstream.ErrInvalidTopology) {
				t.Fatalf("Build error = %v, want %v", err, c.want)
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
