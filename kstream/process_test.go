package kstream_test

import (
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
	"github.com/kstreams-go/kstreams/testdriver"
)

type tagProc struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *tagProc) Init(ctx processor.ProcessorContext[string, string]) error { p.ctx = ctx; return nil }
func (p *tagProc) Process(r processor.Record[string, string]) error {
	return p.ctx.Forward(r.WithValue(r.Value + "!"))
}
func (p *tagProc) Close() error { return nil }

// Process needs no name (Java's process(supplier, stores...)); ProcessNamed names it; the
// store names follow either.
func TestProcessNameOptional(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	b.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("seen"), serde.String(), serde.Long()))
	sup := processor.NewSupplier(func() processor.Processor[string, string, string, string] { return &tagProc{} })
	kstream.Stream(b, "in", kstream.ConsumedWith(serde.String(), serde.String())).
		Process(sup).
		ProcessNamed(sup, kstream.NamedAs("tagger"), "seen").
		To("out", kstream.ProducedWith(serde.String(), serde.String()))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	desc := topo.Describe().String()
	for _, want := range []string{
		"Processor: KSTREAM-PROCESSOR-0000000001 (stores: [])",
		"Processor: tagger (stores: [seen])",
	} {
		if !strings.Contains(desc, want) {
			t.Errorf("Describe() lacks %q:\n%s", want, desc)
		}
	}
	d, err := testdriver.New(topo, map[string]string{"application.id": "process-test"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := testdriver.CreateInputTopic(d, "in", serde.String(), serde.String()).PipeKeyValue("k", "v"); err != nil {
		t.Fatal(err)
	}
	got, err := testdriver.CreateOutputTopic(d, "out", serde.String(), serde.String()).ReadValue()
	if err != nil || got != "v!!" {
		t.Fatalf("output %q, %v; want v!!", got, err)
	}
}
