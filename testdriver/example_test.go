package testdriver_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
	"github.com/kstreams-go/kstreams/testdriver"
)

// upper forwards every value upper-cased.
type upper struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *upper) Init(ctx processor.ProcessorContext[string, string]) error { p.ctx = ctx; return nil }
func (p *upper) Process(r processor.Record[string, string]) error {
	return p.ctx.Forward(r.WithValue(strings.ToUpper(r.Value)))
}
func (p *upper) Close() error { return nil }

func Example() {
	topo := processor.NewTopology()
	_ = topo.AddSource("in", []string{"input"})
	_ = topo.AddProcessor("upper", processor.NewSupplier(
		func() processor.Processor[string, string, string, string] { return &upper{} }), "in")
	_ = topo.AddSink("out", "output", []string{"upper"})

	d, err := testdriver.New(topo, map[string]string{
		"application.id":      "example",
		"default.key.serde":   "org.apache.kafka.common.serialization.Serdes$StringSerde",
		"default.value.serde": "org.apache.kafka.common.serialization.Serdes$StringSerde",
	}, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()

	in := testdriver.CreateInputTopic(d, "input", serde.String(), serde.String(),
		testdriver.WithStartTimestamp(1000), testdriver.WithAutoAdvance(time.Second))
	out := testdriver.CreateOutputTopic(d, "output", serde.String(), serde.String())
	_ = in.PipeKeyValue("a", "hello")
	_ = in.PipeKeyValue("b", "world")

	recs, _ := out.ReadRecordsToList()
	for _, r := range recs {
		fmt.Println(r.Key, r.Value, r.Timestamp)
	}
	// Output:
	// a HELLO 1000
	// b WORLD 2000
}

// counter counts records per key in a store and emits the counts every second of wall-clock time.
type counter struct {
	ctx    processor.ProcessorContext[string, int64]
	counts store.KeyValueStore[string, int64]
}

func (p *counter) Init(ctx processor.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	var err error
	if p.counts, err = processor.GetStateStore[store.KeyValueStore[string, int64]](ctx, "counts"); err != nil {
		return err
	}
	_, err = ctx.Schedule(time.Second, processor.WallClockTime, func(ts int64) error {
		it := p.counts.All()
		for k, v := range store.All(it) {
			if err := ctx.Forward(processor.NewRecord(k, v, ts)); err != nil {
				return err
			}
		}
		return it.Err()
	})
	return err
}

func (p *counter) Process(r processor.Record[string, string]) error {
	n, _, err := p.counts.Get(r.Key)
	if err != nil {
		return err
	}
	return p.counts.Put(r.Key, n+1)
}

func (p *counter) Close() error { return nil }

func ExampleTopologyTestDriver_AdvanceWallClockTime() {
	topo := processor.NewTopology()
	_ = topo.AddSource("in", []string{"clicks"}, processor.WithKeyDeserializer[string](serde.String()),
		processor.WithValueDeserializer[string](serde.String()))
	_ = topo.AddProcessor("count", processor.NewSupplier(
		func() processor.Processor[string, string, string, int64] { return &counter{} }), "in")
	_ = topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("counts"),
		serde.String(), serde.Long()).WithLoggingDisabled(), "count")
	_ = topo.AddSink("out", "click-counts", []string{"count"}, processor.WithKeySerializer[string](serde.String()),
		processor.WithValueSerializer[int64](serde.Long()))

	d, _ := testdriver.New(topo, map[string]string{"application.id": "clicks"}, 0)
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "clicks", serde.String(), serde.String(), testdriver.WithStartTimestamp(0))
	out := testdriver.CreateOutputTopic(d, "click-counts", serde.String(), serde.Long())
	_ = in.PipeKeyValue("alice", "/home")
	_ = in.PipeKeyValue("bob", "/home")
	_ = in.PipeKeyValue("alice", "/cart")
	fmt.Println("before:", out.QueueSize())
	_ = d.AdvanceWallClockTime(time.Second)
	m, _ := testdriver.ReadKeyValuesToMap(out)
	fmt.Println("after:", m["alice"], m["bob"])
	// Output:
	// before: 0
	// after: 2 1
}
