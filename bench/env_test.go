package bench

import (
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// storeCtx is the minimal StateStoreContext that opens a Pebble store in dir with env.
type storeCtx struct {
	dir string
	env storeapi.PebbleEnv
}

func (c storeCtx) ApplicationID() string    { return "bench" }
func (c storeCtx) TaskID() processor.TaskID { return processor.TaskID{} }
func (c storeCtx) RecordMetadata() (processor.RecordMetadata, bool) {
	return processor.RecordMetadata{}, false
}
func (c storeCtx) KeySerde() serde.Serde[any]    { return nil }
func (c storeCtx) ValueSerde() serde.Serde[any]  { return nil }
func (c storeCtx) StateDir() string              { return c.dir }
func (c storeCtx) AppConfigs() map[string]string { return map[string]string{} }
func (c storeCtx) Register(processor.StateStore, processor.StateRestoreCallback) error {
	return nil
}
func (c storeCtx) PebbleEnv() storeapi.PebbleEnv { return c.env }
