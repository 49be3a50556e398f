package testdriver_test

import (
	"testing"

	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
)

// A source without serdes and no default says which serde is missing, where, and how to give
// it.
func TestMissingSerdeMessages(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	kstream.Stream(b, "orders", kstream.ConsumedWith[string, string](serde.String(), nil)).To("out", kstream.ProducedWith(serde.String(), serde.String()))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	_, err = testdriver.New(topo, map[string]string{"application.id": "missing-serde"}, 0)
	wantErrMsg(t, err, task.ErrNoSerde, `task 0_0: source node KSTREAM-SOURCE-0000000000 (topics orders) has no value serde and no `+
		`default.value.serde is configured; give it its serdes (kstream.ConsumedWith(keySerde, valueSerde) on the Stream or Table, `+
		`or deserializers on Topology.AddSource) or set the defaults (Config.DefaultKeySerde/DefaultValueSerde, `+
		`default.key.serde/default.value.serde): task: no serde configured and no default serde`)

}
