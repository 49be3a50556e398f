package runtime

import (
	"errors"
	"testing"

	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

type nopProc struct{}

func (nopProc) Init(processor.ProcessorContext[any, any]) error { return nil }
func (nopProc) Process(processor.Record[any, any]) error        { return nil }
func (nopProc) Close() error                                    { return nil }

func layoutTopology(t *testing.T) *topology.Builder {
	topo := processor.NewTopology()
	sup := processor.ProcessorSupplierFunc[any, any, any, any](func() processor.Processor[any, any, any, any] { return nopProc{} })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(topo.AddSource("src", []string{"in"}))
	must(topo.AddProcessor("p", sup, "src"))
	topo.Internal().AddInternalTopic("rep", topology.InternalTopicProperties{})
	must(topo.AddSink("sink", "rep", []string{"p"}))
	must(topo.AddSource("src2", []string{"rep"}))
	must(topo.AddProcessor("agg", sup, "src2"))
	must(topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("S"), serde.String(), serde.Long()), "agg"))
	return topo.Internal()
}

func TestComputeLayout(t *testing.T) {
	b := layoutTopology(t)
	l, err := ComputeLayout(b, "app", map[string]int32{"in": 4})
	if err != nil {
		t.Fatal(err)
	}
	if l.Partitions["app-rep"] != 4 || l.Tasks[0] != 4 || l.Tasks[1] != 4 || len(l.Internal) != 2 {
		t.Fatalf("layout %+v", l)
	}
	ch, rep := l.Internal[0], l.Internal[1]
	if ch.Name != "app-S-changelog" || !ch.Changelog || ch.Partitions != 4 || ch.Configs["cleanup.policy"] != "compact" ||
		ch.Configs["message.timestamp.type"] != "CreateTime" {
		t.Fatalf("changelog %+v", ch)
	}
	if rep.Name != "app-rep" || rep.Configs["cleanup.policy"] != "delete" || rep.Configs["retention.ms"] != "-1" ||
		rep.Configs["segment.bytes"] != "52428800" {
		t.Fatalf("repartition %+v", rep)
	}
	_, err = ComputeLayout(b, "app", map[string]int32{"other": 1})
	var me *MissingSourceTopicsError
	if !errors.As(err, &me) || len(me.Topics) != 1 || me.Topics[0] != "in" || !errors.Is(err, ErrMissingSourceTopics) {
		t.Fatalf("missing: %v", err)
	}
}

func TestComputeLayoutCopartition(t *testing.T) {
	topo := processor.NewTopology()
	sup := processor.ProcessorSupplierFunc[any, any, any, any](func() processor.Processor[any, any, any, any] { return nopProc{} })
	if err := topo.AddSource("a", []string{"ta"}); err != nil {
		t.Fatal(err)
	}
	if err := topo.AddSource("b", []string{"tb"}); err != nil {
		t.Fatal(err)
	}
	if err := topo.AddProcessor("j", sup, "a", "b"); err != nil {
		t.Fatal(err)
	}
	topo.Internal().CopartitionSources("a", "b")
	_, err := ComputeLayout(topo.Internal(), "app", map[string]int32{"ta": 2, "tb": 3})
	var ce *CopartitionError
	if !errors.As(err, &ce) || ce.Topics["ta"] != 2 || ce.Topics["tb"] != 3 {
		t.Fatalf("copartition: %v", err)
	}
	if _, err := ComputeLayout(topo.Internal(), "app", map[string]int32{"ta": 3, "tb": 3}); err != nil {
		t.Fatal(err)
	}
}
