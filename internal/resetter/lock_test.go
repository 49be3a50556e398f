package resetter

import (
	"context"
	"testing"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// lockHeld starts (without running) an instance with a persistent store on stateDir, which
// locks <stateDir>/<app> as a running instance does; the returned func closes it.
func lockHeld(t *testing.T, stateDir, app string) func() {
	t.Helper()
	b := kstream.NewStreamsBuilder()
	S := serde.String()
	kstream.Stream(b, "lines", kstream.ConsumedWith(S, S)).GroupByKey(kstream.GroupedWith(S, S)).
		Count(kstream.MaterializedAsSupplier[string, int64](store.Stores.PersistentKeyValueStore("counts")))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	k, err := kstreams.New(topo, kstreams.Config{ApplicationID: app, BootstrapServers: []string{"127.0.0.1:1"}, StateDir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	return func() { k.Close(context.Background()) }
}
