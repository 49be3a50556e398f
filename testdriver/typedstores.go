package testdriver

import (
	"reflect"

	"github.com/kstreams-go/kstreams/internal/storeview"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// The typed store accessors follow one rule, the same as the interactive queries of package
// kstreams: a store is viewed with the key and value types it holds. A Processor API store
// built as store.KeyValueStore[K, V] (or a window or session store) has those types; a DSL
// store has the types of the Materialized it came from (Count: Materialized[K, int64], so K and
// int64), whatever engine-level types it is built with. A timestamped store (the DSL's
// aggregations and tables) is viewed with its plain values (KeyValueStore, WindowStore: reads
// drop the timestamps, writes store timestamp -1, as Java's driver facades) or with its
// timestamps (TimestampedKeyValueStore, TimestampedWindowStore). Asking for other types (an
// interface type such as any accepts every value) returns a *processor.StoreTypeError
// (errors.Is(err, processor.ErrWrongStoreType)) that says what the store holds and which views fit;
// no store of that name is processor.ErrUnknownStore.

// declared returns the DSL key and value types of store name (nil, nil for Processor API
// stores).
func (d *TopologyTestDriver) declared(name string) (reflect.Type, reflect.Type) {
	if d.graph == nil {
		return nil, nil
	}
	if st := d.graph.Store(name); st != nil {
		return st.KeyType, st.ValueType
	}
	return nil, nil
}

// wrongType is the error for store name, not of the kind want, asked for with K and V.
func wrongType[K, V any](d *TopologyTestDriver, name string, s processor.StateStore, want storeview.Kind) error {
	kt, vt := d.declared(name)
	return storeview.Mismatch[K, V](name, s, kt, vt, want)
}

// KeyValueStore returns the key-value store name viewed with keys K and plain values V: the
// store itself when it is a store.KeyValueStore[K, V] (writes go through its caching and change
// logging), and for a timestamped store (the DSL's aggregations and tables) a view that reads
// the plain values and writes them with timestamp -1, as Java's driver. Errors: processor.ErrUnknownStore,
// *processor.StoreTypeError (see the rule above). Java: getKeyValueStore(name).
func KeyValueStore[K, V any](d *TopologyTestDriver, name string) (store.KeyValueStore[K, V], error) {
	s, err := d.StateStore(name)
	if err != nil {
		return nil, err
	}
	if kv, ok := s.(store.KeyValueStore[K, V]); ok {
		return kv, nil
	}
	if ts, ok := s.(store.TimestampedKeyValueStore[K, V]); ok {
		return keyValueStoreFacade[K, V]{inner: ts}, nil
	}
	ts, err := timestampedKV[K, V](d, name, s, storeview.KeyValue)
	if err != nil {
		return nil, err
	}
	return keyValueStoreFacade[K, V]{inner: ts}, nil
}

// TimestampedKeyValueStore returns the timestamped key-value store name (the DSL's
// aggregation and table stores) viewed with keys K and values *store.ValueAndTimestamp[V].
// Errors: processor.ErrUnknownStore, *processor.StoreTypeError (see the rule above). Java:
// getTimestampedKeyValueStore(name).
func TimestampedKeyValueStore[K, V any](d *TopologyTestDriver, name string) (store.TimestampedKeyValueStore[K, V], error) {
	s, err := d.StateStore(name)
	if err != nil {
		return nil, err
	}
	if ts, ok := s.(store.TimestampedKeyValueStore[K, V]); ok {
		return ts, nil
	}
	return timestampedKV[K, V](d, name, s, storeview.TimestampedKeyValue)
}

// timestampedKV views a DSL key-value store as a TimestampedKeyValueStore[K, V].
func timestampedKV[K, V any](d *TopologyTestDriver, name string, s processor.StateStore, want storeview.Kind) (store.TimestampedKeyValueStore[K, V], error) {
	u, ok := s.(storeview.TSKV)
	if !ok {
		return nil, wrongType[K, V](d, name, s, want)
	}
	kt, vt := d.declared(name)
	if err := storeview.Check[K, V](name, storeview.TimestampedKeyValue, kt, vt, want); err != nil {
		return nil, err
	}
	return storeview.KV[K](u, storeview.TimestampedTo[V], storeview.TimestampedFrom[V]), nil
}

// WindowStore returns the window store name viewed with keys K and plain values V: the store
// itself when it is a store.WindowStore[K, V], and for a timestamped window store (the DSL's
// windowed aggregations) a view that reads the plain values and writes them with timestamp -1,
// as Java's driver. Errors: processor.ErrUnknownStore, *processor.StoreTypeError (see the rule above). Java:
// getWindowStore(name).
func WindowStore[K, V any](d *TopologyTestDriver, name string) (store.WindowStore[K, V], error) {
	s, err := d.StateStore(name)
	if err != nil {
		return nil, err
	}
	if w, ok := s.(store.WindowStore[K, V]); ok {
		return w, nil
	}
	if ts, ok := s.(store.TimestampedWindowStore[K, V]); ok {
		return windowStoreFacade[K, V]{inner: ts}, nil
	}
	ts, err := timestampedWindow[K, V](d, name, s, storeview.Window)
	if err != nil {
		return nil, err
	}
	return windowStoreFacade[K, V]{inner: ts}, nil
}

// TimestampedWindowStore returns the timestamped window store name (the DSL's windowed
// aggregations) viewed with keys K and values *store.ValueAndTimestamp[V]. Errors: processor.ErrUnknownStore,
// *processor.StoreTypeError (see the rule above). Java: getTimestampedWindowStore(name).
func TimestampedWindowStore[K, V any](d *TopologyTestDriver, name string) (store.TimestampedWindowStore[K, V], error) {
	s, err := d.StateStore(name)
	if err != nil {
		return nil, err
	}
	if ts, ok := s.(store.TimestampedWindowStore[K, V]); ok {
		return ts, nil
	}
	return timestampedWindow[K, V](d, name, s, storeview.TimestampedWindow)
}

// timestampedWindow views a DSL window store as a TimestampedWindowStore[K, V].
func timestampedWindow[K, V any](d *TopologyTestDriver, name string, s processor.StateStore, want storeview.Kind) (store.TimestampedWindowStore[K, V], error) {
	u, ok := s.(storeview.TSWindow)
	if !ok {
		return nil, wrongType[K, V](d, name, s, want)
	}
	kt, vt := d.declared(name)
	if err := storeview.Check[K, V](name, storeview.TimestampedWindow, kt, vt, want); err != nil {
		return nil, err
	}
	return storeview.WindowStore[K](u, storeview.TimestampedTo[V], storeview.TimestampedFrom[V]), nil
}

// SessionStore returns the session store name viewed with keys K and values V (the DSL's
// session aggregations hold plain values). Errors: processor.ErrUnknownStore, *processor.StoreTypeError
// (see the rule above). Java: getSessionStore(name).
func SessionStore[K, V any](d *TopologyTestDriver, name string) (store.SessionStore[K, V], error) {
	s, err := d.StateStore(name)
	if err != nil {
		return nil, err
	}
	if ss, ok := s.(store.SessionStore[K, V]); ok {
		return ss, nil
	}
	u, ok := s.(storeview.UntypedSession)
	if !ok {
		return nil, wrongType[K, V](d, name, s, storeview.Session)
	}
	kt, vt := d.declared(name)
	if err := storeview.Check[K, V](name, storeview.Session, kt, vt, storeview.Session); err != nil {
		return nil, err
	}
	return storeview.SessionStore[K, V](u), nil
}

// VersionedKeyValueStore returns the versioned key-value store name (KIP-889: a table
// materialized with store.Stores.PersistentVersionedKeyValueStore or
// InMemoryVersionedKeyValueStore, or a Processor API versioned store) viewed with keys K and
// values V: reads of the latest version and of the version as of a timestamp (ms), and writes
// through its change logging. Errors: processor.ErrUnknownStore, *processor.StoreTypeError (see the rule
// above). Java: getVersionedKeyValueStore(name).
func VersionedKeyValueStore[K, V any](d *TopologyTestDriver, name string) (store.VersionedKeyValueStore[K, V], error) {
	s, err := d.StateStore(name)
	if err != nil {
		return nil, err
	}
	if vs, ok := s.(store.VersionedKeyValueStore[K, V]); ok {
		return vs, nil
	}
	u, ok := s.(storeview.UntypedVersioned)
	if !ok {
		return nil, wrongType[K, V](d, name, s, storeview.Versioned)
	}
	kt, vt := d.declared(name)
	if err := storeview.Check[K, V](name, storeview.Versioned, kt, vt, storeview.Versioned); err != nil {
		return nil, err
	}
	return storeview.VersionedStore[K, V](u), nil
}
