package testdriver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
	"github.com/kstreams-go/kstreams/testdriver"
)

type passThrough struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *passThrough) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	return nil
}
func (p *passThrough) Process(r processor.Record[string, string]) error { return p.ctx.Forward(r) }
func (p *passThrough) Close() error                                     { return nil }

// A store that no processor uses is refused when the topology is run, with an error naming it;
// connecting it makes the same topology run.
func TestUnusedStoreIsRefused(t *testing.T) {
	topo := processor.NewTopology()
	if err := topo.AddSource("src", []string{"in"}); err != nil {
		t.Fatal(err)
	}
	if err := topo.AddProcessor("proc", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &passThrough{} }), "src"); err != nil {
		t.Fatal(err)
	}
	b := store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("forgotten"), serde.String(), serde.String())
	if err := topo.AddStateStore(b); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{
		"application.id":      "unused-store",
		"default.key.serde":   "org.apache.kafka.common.serialization.Serdes$StringSerde",
		"default.value.serde": "org.apache.kafka.common.serialization.Serdes$StringSerde",
	}
	_, err := testdriver.New(topo, props, 0)
	var te *processor.TopologyError
	if !errors.As(err, &te) || te.Name != "forgotten" || !errors.Is(err, processor.ErrInvalidTopology) {
		t.Fatalf("New with an unconnected store: %v; want a *processor.TopologyError about the store", err)
	}
	if want := `state store forgotten is connected to no processor`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}

	if err := topo.ConnectProcessorAndStateStores("proc", "forgotten"); err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, props, 0)
	if err != nil {
		t.Fatalf("New after connecting the store: %v", err)
	}
	d.Close()
}
