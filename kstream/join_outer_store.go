package kstream

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// outerJoinStore is the shared store of a left/outer stream-stream join (KIP-633) holding the
// records that have found no partner yet, until their window closes. Keys are
// int64 timestamp ‖ side byte (1 left, 0 right) ‖ serialized key, so entries iterate in time
// order; each key holds a list of values (1 byte side ‖ serialized value), as Java's
// ListValueStore over TimestampedKeyAndJoinSideSerde and LeftOrRightValueSerde. The change
// logging layer sits below the list layer, so the changelog carries the whole list
// (strategy byte 1, int32 count, then int32 length ‖ bytes per value; Java's ListSerde of
// byte arrays), as Java 4.4 writes it.
type outerJoinStore struct {
	name                            string
	inner                           store.KeyValueBytesStore
	keySerde, leftSerde, rightSerde serde.Serde[any]
	topic                           string
}

// outerEntry is one held-back record.
type outerEntry struct {
	rawKey []byte
	ts     int64
	left   bool
	key    any
	value  any // the value of the record's side
}

func (s *outerJoinStore) Name() string { return s.name }

func (s *outerJoinStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if ctx != nil {
		s.topic = storeapi.ChangelogTopic(ctx.ApplicationID(), s.name)
		if s.keySerde == nil {
			s.keySerde = ctx.KeySerde()
		}
		if s.leftSerde == nil {
			s.leftSerde = ctx.ValueSerde()
		}
		if s.rightSerde == nil {
			s.rightSerde = ctx.ValueSerde()
		}
	}
	if s.keySerde == nil || s.leftSerde == nil || s.rightSerde == nil {
		return fmt.Errorf("store %q: init: %w (set the StreamJoined serdes or default.key.serde/default.value.serde)", s.name, store.ErrNoSerde)
	}
	return s.inner.Init(ctx, root)
}

func (s *outerJoinStore) Flush() error     { return s.inner.Flush() }
func (s *outerJoinStore) Close() error     { return s.inner.Close() }
func (s *outerJoinStore) Persistent() bool { return s.inner.Persistent() }
func (s *outerJoinStore) IsOpen() bool     { return s.inner.IsOpen() }

func (s *outerJoinStore) rawKey(ts int64, left bool, key any) ([]byte, error) {
	kb, err := s.keySerde.Serialize(s.topic, &serde.Headers{}, key)
	if err != nil {
		return nil, fmt.Errorf("store %q: serialize key: %w", s.name, err)
	}
	out := make([]byte, 9, 9+len(kb))
	binary.BigEndian.PutUint64(out, uint64(ts))
	if left {
		out[8] = 1
	}
	return append(out, kb...), nil
}

// add appends value (of the given side) to the list of (ts, side, key). Java: put(key, value).
func (s *outerJoinStore) add(ts int64, left bool, key, value any) error {
	k, err := s.rawKey(ts, left, key)
	if err != nil {
		return err
	}
	sd := s.rightSerde
	if left {
		sd = s.leftSerde
	}
	vb, err := sd.Serialize(s.topic, &serde.Headers{}, value)
	if err != nil {
		return fmt.Errorf("store %q: serialize value: %w", s.name, err)
	}
	if vb == nil {
		return nil
	}
	v := make([]byte, 1, 1+len(vb))
	if left {
		v[0] = 1
	}
	return s.inner.Put(k, append(v, vb...))
}

// removeIfPresent deletes (ts, side, key) when it has values. Java: putIfAbsent(key, null).
func (s *outerJoinStore) removeIfPresent(ts int64, left bool, key any) error {
	k, err := s.rawKey(ts, left, key)
	if err != nil {
		return err
	}
	_, _, err = s.inner.PutIfAbsent(k, nil)
	return err
}

// remove blind-deletes a raw key. Java: put(key, null).
func (s *outerJoinStore) remove(rawKey []byte) error { return s.inner.Put(rawKey, nil) }

// entries returns every held value in key order, each list in insertion order.
func (s *outerJoinStore) entries() ([]outerEntry, error) {
	it := s.inner.All()
	defer it.Close()
	var out []outerEntry
	for it.Next() {
		k := it.Key()
		if len(k) < 9 {
			return nil, fmt.Errorf("store %q: corrupt key", s.name)
		}
		key, err := s.keySerde.Deserialize(s.topic, &serde.Headers{}, k[9:])
		if err != nil {
			return nil, fmt.Errorf("store %q: deserialize key: %w", s.name, err)
		}
		v := it.Value()
		if len(v) < 1 {
			return nil, fmt.Errorf("store %q: corrupt value", s.name)
		}
		sd := s.rightSerde
		if v[0] == 1 {
			sd = s.leftSerde
		}
		val, err := sd.Deserialize(s.topic, &serde.Headers{}, v[1:])
		if err != nil {
			return nil, fmt.Errorf("store %q: deserialize value: %w", s.name, err)
		}
		out = append(out, outerEntry{rawKey: append([]byte(nil), k...), ts: int64(binary.BigEndian.Uint64(k)), left: k[8] == 1, key: storeapi.Detach(key), value: storeapi.Detach(val)}) // the iterator hands out views
	}
	return out, it.Err()
}

// listValueBytesStore keeps a list of values per key (Java: ListValueStore): Put with a value
// appends, Put with nil deletes the key, PutIfAbsent(k, nil) deletes k when present (and always
// reports "absent"), All flattens the lists.
type listValueBytesStore struct {
	store.KeyValueBytesStore
}

var errListStoreOp = errors.New("operation not supported by the list-value store")

func encodeList(items [][]byte) []byte {
	out := []byte{1, 0, 0, 0, 0} // variable-size strategy, count
	binary.BigEndian.PutUint32(out[1:], uint32(len(items)))
	for _, it := range items {
		out = binary.BigEndian.AppendUint32(out, uint32(len(it)))
		out = append(out, it...)
	}
	return out
}

func decodeList(b []byte) ([][]byte, error) {
	if len(b) < 5 {
		return nil, errors.New("corrupt value list")
	}
	n := int(binary.BigEndian.Uint32(b[1:]))
	b = b[5:]
	out := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		if len(b) < 4 {
			return nil, errors.New("corrupt value list")
		}
		l := int(binary.BigEndian.Uint32(b))
		b = b[4:]
		if len(b) < l {
			return nil, errors.New("corrupt value list")
		}
		out = append(out, b[:l:l])
		b = b[l:]
	}
	return out, nil
}

func (l *listValueBytesStore) Put(key, value []byte) error {
	if value == nil {
		return l.KeyValueBytesStore.Put(key, nil)
	}
	old, found, err := l.KeyValueBytesStore.Get(key)
	if err != nil {
		return err
	}
	var items [][]byte
	if found {
		if items, err = decodeList(old); err != nil {
			return err
		}
	}
	return l.KeyValueBytesStore.Put(key, encodeList(append(items, value)))
}

func (l *listValueBytesStore) PutIfAbsent(key, value []byte) ([]byte, bool, error) {
	_, found, err := l.KeyValueBytesStore.Get(key)
	if err != nil || !found {
		return nil, false, err
	}
	return nil, false, l.Put(key, value)
}

func (l *listValueBytesStore) Delete([]byte) ([]byte, bool, error) {
	return nil, false, errListStoreOp
}

func (l *listValueBytesStore) All() store.KeyValueIterator[[]byte, []byte] {
	return &listIterator{it: l.KeyValueBytesStore.All()}
}

type listIterator struct {
	it    store.KeyValueIterator[[]byte, []byte]
	key   []byte
	items [][]byte
	cur   []byte
	err   error
}

func (i *listIterator) Next() bool {
	for len(i.items) == 0 {
		if i.err != nil || !i.it.Next() {
			return false
		}
		i.key = i.it.Key()
		i.items, i.err = decodeList(i.it.Value())
	}
	i.cur, i.items = i.items[0], i.items[1:]
	return true
}

func (i *listIterator) Key() []byte   { return i.key }
func (i *listIterator) Value() []byte { return i.cur }
func (i *listIterator) Err() error {
	if i.err != nil {
		return i.err
	}
	return i.it.Err()
}
func (i *listIterator) Close() error { return i.it.Close() }

// outerJoinStoreBuilder builds the shared store (Java: OuterStreamJoinStoreFactory with
// ListValueStoreBuilder; caching is never on).
type outerJoinStoreBuilder struct {
	name                            string
	keySerde, leftSerde, rightSerde serde.Serde[any]
	supplier                        store.KeyValueBytesStoreSupplier
	logging                         bool
	logConfig                       map[string]string
}

func (b *outerJoinStoreBuilder) Name() string         { return b.name }
func (b *outerJoinStoreBuilder) LoggingEnabled() bool { return b.logging }
func (b *outerJoinStoreBuilder) LogConfig() map[string]string {
	if !b.logging {
		return nil
	}
	out := map[string]string{}
	for k, v := range b.logConfig {
		out[k] = v
	}
	return out
}

// outerJoinSupplier returns the key-value engine of a left/outer stream-stream join's shared
// store, as Java's OuterStreamJoinStoreFactory picks it: the kind of the user's window store
// supplier for this side (in-memory or persistent) if there is one, else the DSL default
// (Pebble, as Java's RocksDB; in-memory with default.dsl.store=in_memory). Call it while the
// topology is built.
func outerJoinSupplier(b *StreamsBuilder, name string, thisSupplier store.WindowBytesStoreSupplier) store.KeyValueBytesStoreSupplier {
	if thisSupplier != nil {
		switch thisSupplier.MetricsScope() {
		case "in-memory":
			return store.Stores.InMemoryKeyValueStore(name)
		case storeapi.PebbleMetricsScope:
			return store.Stores.PersistentKeyValueStore(name)
		}
	}
	return b.dslKeyValueStore(name, false)
}

func (b *outerJoinStoreBuilder) Build() (processor.StateStore, error) {
	sup := b.supplier
	if sup == nil {
		sup = store.Stores.InMemoryKeyValueStore(b.name)
	}
	// The plain key-value builder without a cache gives the engine with change logging under a
	// pass-through bytes layer.
	kb := store.Stores.KeyValueStoreBuilder(sup, serde.ByteArray(), serde.ByteArray()).WithCachingDisabled()
	if !b.logging {
		kb = kb.WithLoggingDisabled()
	}
	inner := &listValueBytesStore{KeyValueBytesStore: kb.BuildStore()}
	return &outerJoinStore{name: b.name, inner: inner, keySerde: b.keySerde, leftSerde: b.leftSerde, rightSerde: b.rightSerde}, nil
}
