package kstreams

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/runtime"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// ErrStoreNotAvailable is returned by interactive queries when the store is unknown, not of
// the requested type, or not queryable now (the instance is not Running, or its tasks are
// migrating). Java: InvalidStateStoreException (and its subclasses).
var ErrStoreNotAvailable = errors.New("kstreams: state store not available")

// ErrUnknownStore is returned by QueryMetadataForKey for a store the topology does not have.
var ErrUnknownStore = errors.New("kstreams: unknown state store")

// TaskMetadata describes one active task of a local stream thread. Java: TaskMetadata.
type TaskMetadata struct {
	// TaskID is the task id ("<sub-topology>_<partition>").
	TaskID processor.TaskID
}

// ThreadMetadata describes one local stream thread. Java: ThreadMetadata.
type ThreadMetadata struct {
	// ThreadName is "<client.id>-StreamThread-<n>".
	ThreadName string
	// ActiveTasks are the thread's running active tasks, sorted.
	ActiveTasks []TaskMetadata
}

// MetadataForLocalThreads returns the local threads and their active tasks.
// Java: metadataForLocalThreads().
func (k *KafkaStreams) MetadataForLocalThreads() []ThreadMetadata {
	if k.rt == nil {
		return nil
	}
	var out []ThreadMetadata
	for name, ids := range k.rt.LocalTasks() {
		tm := ThreadMetadata{ThreadName: name}
		for _, id := range ids {
			tm.ActiveTasks = append(tm.ActiveTasks, TaskMetadata{TaskID: id})
		}
		out = append(out, tm)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ThreadName < out[j].ThreadName })
	return out
}

// HostInfo is an application.server endpoint. Java: HostInfo.
type HostInfo struct {
	// Host and Port of the instance's application.server.
	Host string
	Port int
}

// KeyQueryMetadata says where a key of a store lives. Java: KeyQueryMetadata.
type KeyQueryMetadata struct {
	// ActiveHost is the application.server of the instance running the key's task; zero when
	// unknown (no instance announced an application.server, or a rebalance is in progress).
	ActiveHost HostInfo
	// Partition is the key's partition (Java's default partitioner over the source topics).
	Partition int32
	// TaskID is the task holding the key.
	TaskID processor.TaskID
}

// QueryMetadataForKey returns where key (serialized with the store's key serde) of store
// lives: its partition, task and the application.server of the instance running that task.
// Errors: ErrUnknownStore, ErrIllegalState before Start. Java: queryMetadataForKey.
func (k *KafkaStreams) QueryMetadataForKey(storeName string, serializedKey []byte) (KeyQueryMetadata, error) {
	if k.rt == nil || k.rt.Layout() == nil {
		return KeyQueryMetadata{}, fmt.Errorf("%w: query metadata before Start", ErrIllegalState)
	}
	b := k.topology.Internal()
	sub := -1
	for _, g := range b.NodeGroups() {
		for _, n := range g.Nodes {
			if nd := b.Node(n); nd != nil && slices.Contains(nd.Stores, storeName) {
				sub = g.ID
			}
		}
	}
	if sub < 0 {
		return KeyQueryMetadata{}, fmt.Errorf("%w: %q", ErrUnknownStore, storeName)
	}
	n := k.rt.Layout().Tasks[sub]
	if n <= 0 {
		return KeyQueryMetadata{}, fmt.Errorf("%w: %q has no tasks", ErrUnknownStore, storeName)
	}
	p, err := sarama.NewMurmur2Partitioner("").Partition(&sarama.ProducerMessage{Key: sarama.ByteEncoder(serializedKey)}, n)
	if err != nil {
		return KeyQueryMetadata{}, err
	}
	md := KeyQueryMetadata{Partition: p, TaskID: processor.TaskID{Subtopology: sub, Partition: int(p)}}
	for host, ids := range k.rt.Hosts() {
		if slices.Contains(ids, md.TaskID) {
			h, port, err := net.SplitHostPort(host)
			if err == nil {
				pn, _ := strconv.Atoi(port)
				md.ActiveHost = HostInfo{Host: h, Port: pn}
			}
		}
	}
	return md, nil
}

// KeyValueStore returns a read-only view of the key-value store name across the instance's
// local active tasks (Java: store(StoreQueryParameters.fromNameAndType(name,
// QueryableStoreTypes.keyValueStore()))). The view looks the tasks up on every call, so it
// follows rebalances. It serves Processor API stores of K and V and the DSL's stores
// (timestamped ones give their plain values). Reads are safe while the stream threads run:
// each waits until the owning thread leaves the store (at most a processing batch or a cache
// flush) and never fills the record cache; iterators read one task's entries at a time into
// memory. Do not read the view from the instance's own processing code (a processor,
// punctuator or serde running on a stream thread): the read would wait for
// the very thread making it and never return (Java's locks are re-entrant; ours are not);
// processing code reads its stores through ProcessorContext.StateStore. Errors:
// ErrStoreNotAvailable when the instance is not Running, no local task has a store of that
// name and type, or (from reads) the task migrated since the view found it.
func KeyValueStore[K, V any](k *KafkaStreams, name string) (store.ReadOnlyKeyValueStore[K, V], error) {
	c := &compositeKV[K, V]{k: k, name: name}
	if _, err := c.stores(); err != nil {
		return nil, err
	}
	return c, nil
}

// compositeKV is the read-only view over the local tasks' stores. Java:
// CompositeReadOnlyKeyValueStore. Every read runs while the stream thread owning the store
// leaves it alone (runtime.QueryableStore.Read), as Java reads under the caching layer's lock;
// iterators therefore collect each task's entries at once (one task at a time) and hand them
// out from memory.
type compositeKV[K, V any] struct {
	k    *KafkaStreams
	name string
}

// taskKV is one task's store seen with the requested types, and the way to read it safely.
type taskKV[K, V any] struct {
	kv store.ReadOnlyKeyValueStore[K, V]
	q  runtime.QueryableStore
}

// read runs f on the store; ErrStoreNotAvailable when the task moved away meanwhile.
func (s taskKV[K, V]) read(name string, f func(store.ReadOnlyKeyValueStore[K, V])) error {
	if !s.q.Read(func() { f(s.kv) }) {
		return fmt.Errorf("%w: %q: its task migrated or closed; look the store up again", ErrStoreNotAvailable, name)
	}
	return nil
}

func (c *compositeKV[K, V]) stores() ([]taskKV[K, V], error) {
	if st := c.k.State(); st != Running && st != Rebalancing {
		return nil, fmt.Errorf("%w: %q: the instance is %s", ErrStoreNotAvailable, c.name, st)
	}
	if c.k.rt == nil {
		return nil, fmt.Errorf("%w: %q", ErrStoreNotAvailable, c.name)
	}
	byTask := c.k.rt.Stores(c.name)
	ids := make([]processor.TaskID, 0, len(byTask))
	for id := range byTask {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].Subtopology != ids[j].Subtopology {
			return ids[i].Subtopology < ids[j].Subtopology
		}
		return ids[i].Partition < ids[j].Partition
	})
	var out []taskKV[K, V]
	for _, id := range ids {
		q := byTask[id]
		kv, ok := asKeyValue[K, V](q.Store)
		if !ok {
			return nil, fmt.Errorf("%w: %q is a %T, not a key-value store of the requested types", ErrStoreNotAvailable, c.name, q.Store)
		}
		out = append(out, taskKV[K, V]{kv: kv, q: q})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %q: no local task has it", ErrStoreNotAvailable, c.name)
	}
	return out, nil
}

// Get implements store.ReadOnlyKeyValueStore: the first local store holding key.
func (c *compositeKV[K, V]) Get(key K) (V, bool, error) {
	var zero V
	ss, err := c.stores()
	if err != nil {
		return zero, false, err
	}
	for _, s := range ss {
		var v V
		var ok bool
		if rerr := s.read(c.name, func(kv store.ReadOnlyKeyValueStore[K, V]) { v, ok, err = kv.Get(key) }); rerr != nil {
			return zero, false, rerr
		}
		if err != nil || ok {
			return v, ok, err
		}
	}
	return zero, false, nil
}

func (c *compositeKV[K, V]) concat(f func(store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V]) store.KeyValueIterator[K, V] {
	ss, err := c.stores()
	return &concatIter[K, V]{stores: ss, name: c.name, open: f, err: err, pos: -1}
}

// Range implements store.ReadOnlyKeyValueStore (each store's range in turn, as Java's
// composite store).
func (c *compositeKV[K, V]) Range(from, to K) store.KeyValueIterator[K, V] {
	return c.concat(func(s store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V] { return s.Range(from, to) })
}

// ReverseRange implements store.ReadOnlyKeyValueStore.
func (c *compositeKV[K, V]) ReverseRange(from, to K) store.KeyValueIterator[K, V] {
	return c.concat(func(s store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V] {
		return s.ReverseRange(from, to)
	})
}

// All implements store.ReadOnlyKeyValueStore.
func (c *compositeKV[K, V]) All() store.KeyValueIterator[K, V] {
	return c.concat(func(s store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V] { return s.All() })
}

// ReverseAll implements store.ReadOnlyKeyValueStore.
func (c *compositeKV[K, V]) ReverseAll() store.KeyValueIterator[K, V] {
	return c.concat(func(s store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V] { return s.ReverseAll() })
}

// PrefixScan implements store.ReadOnlyKeyValueStore.
func (c *compositeKV[K, V]) PrefixScan(prefix []byte) store.KeyValueIterator[K, V] {
	return c.concat(func(s store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V] { return s.PrefixScan(prefix) })
}

// ApproximateNumEntries implements store.ReadOnlyKeyValueStore: the sum over local stores.
func (c *compositeKV[K, V]) ApproximateNumEntries() int64 {
	ss, err := c.stores()
	if err != nil {
		return 0
	}
	var n int64
	for _, s := range ss {
		_ = s.read(c.name, func(kv store.ReadOnlyKeyValueStore[K, V]) { n += kv.ApproximateNumEntries() })
	}
	return n
}

// concatIter walks the entries of several stores one store after another; each store's
// entries are collected at once under the store's read lock.
type concatIter[K, V any] struct {
	stores []taskKV[K, V]
	name   string
	open   func(store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V]
	cur    []store.KeyValue[K, V]
	pos    int
	err    error
	closed bool
}

func (it *concatIter[K, V]) Next() bool {
	if it.closed {
		if it.err == nil {
			it.err = store.ErrIteratorClosed
		}
		return false
	}
	for it.err == nil {
		if it.pos+1 < len(it.cur) {
			it.pos++
			return true
		}
		if len(it.stores) == 0 {
			it.cur, it.pos = nil, -1
			return false
		}
		s := it.stores[0]
		it.stores = it.stores[1:]
		it.cur, it.pos = nil, -1
		var err error
		if rerr := s.read(it.name, func(kv store.ReadOnlyKeyValueStore[K, V]) { it.cur, err = store.Collect(it.open(kv)) }); rerr != nil {
			err = rerr
		}
		it.err = err
	}
	return false
}

// entry is the entry Next moved to; the zero entry before the first Next, at the end, after
// an error and after Close (as the store package's iterators, never a panic).
func (it *concatIter[K, V]) entry() (kv store.KeyValue[K, V]) {
	if it.pos >= 0 && it.pos < len(it.cur) {
		kv = it.cur[it.pos]
	}
	return kv
}

func (it *concatIter[K, V]) Key() K   { return it.entry().Key }
func (it *concatIter[K, V]) Value() V { return it.entry().Value }
func (it *concatIter[K, V]) Err() error {
	return it.err
}
func (it *concatIter[K, V]) Close() error {
	it.cur, it.stores, it.pos = nil, nil, -1
	it.closed = true
	return nil
}

// asKeyValue returns s as a read-only key-value store of K and V for interactive queries: the
// store's query view (store.QueryView: reads never fill the record cache, so a query cannot
// evict or flush, as Java caches only the stream thread's reads) when it has these types
// (Processor API stores), or a view converting the untyped stores the DSL builds
// (KeyValueStore[any, any], or timestamped ones whose values it unwraps, as Java's
// keyValueStore() query type does over a timestamped store).
func asKeyValue[K, V any](s processor.StateStore) (store.ReadOnlyKeyValueStore[K, V], bool) {
	if kv, ok := store.QueryView[K, V](s); ok {
		return kv, true
	}
	if kv, ok := store.QueryView[any, *store.ValueAndTimestamp[any]](s); ok {
		return &untypedKV[K, V, *store.ValueAndTimestamp[any]]{s: kv, value: func(v *store.ValueAndTimestamp[any]) any {
			if v == nil {
				return nil
			}
			return v.Value
		}}, true
	}
	if kv, ok := store.QueryView[any, any](s); ok {
		return &untypedKV[K, V, any]{s: kv, value: func(v any) any { return v }}, true
	}
	return nil, false
}

// errQueryType is a key or value of another type than the query asked for.
func errQueryType(what string, v any, want any) error {
	return fmt.Errorf("%w: the store holds a %s of type %T, not %T", ErrStoreNotAvailable, what, v, want)
}

// cast returns v as a T (nil: the zero T).
func cast[T any](what string, v any) (T, error) {
	var zero T
	if v == nil {
		return zero, nil
	}
	t, ok := v.(T)
	if !ok {
		return zero, errQueryType(what, v, zero)
	}
	return t, nil
}

// untypedKV views an untyped store (keys any, values X) with keys K and values V.
type untypedKV[K, V, X any] struct {
	s     store.ReadOnlyKeyValueStore[any, X]
	value func(X) any
}

func (u *untypedKV[K, V, X]) Get(key K) (V, bool, error) {
	var zero V
	x, ok, err := u.s.Get(key)
	if err != nil || !ok {
		return zero, ok, err
	}
	v, err := cast[V]("value", u.value(x))
	return v, err == nil, err
}

func (u *untypedKV[K, V, X]) iter(it store.KeyValueIterator[any, X]) store.KeyValueIterator[K, V] {
	return &untypedIter[K, V, X]{it: it, value: u.value}
}

func (u *untypedKV[K, V, X]) Range(from, to K) store.KeyValueIterator[K, V] {
	return u.iter(u.s.Range(from, to))
}
func (u *untypedKV[K, V, X]) ReverseRange(from, to K) store.KeyValueIterator[K, V] {
	return u.iter(u.s.ReverseRange(from, to))
}
func (u *untypedKV[K, V, X]) All() store.KeyValueIterator[K, V] { return u.iter(u.s.All()) }
func (u *untypedKV[K, V, X]) ReverseAll() store.KeyValueIterator[K, V] {
	return u.iter(u.s.ReverseAll())
}
func (u *untypedKV[K, V, X]) PrefixScan(prefix []byte) store.KeyValueIterator[K, V] {
	return u.iter(u.s.PrefixScan(prefix))
}
func (u *untypedKV[K, V, X]) ApproximateNumEntries() int64 { return u.s.ApproximateNumEntries() }

// untypedIter converts an untyped store's entries; a key or value of another type ends the
// iteration with an error.
type untypedIter[K, V, X any] struct {
	it    store.KeyValueIterator[any, X]
	value func(X) any
	k     K
	v     V
	err   error
}

func (u *untypedIter[K, V, X]) Next() bool {
	if u.err != nil || !u.it.Next() {
		return false
	}
	if u.k, u.err = cast[K]("key", u.it.Key()); u.err != nil {
		return false
	}
	u.v, u.err = cast[V]("value", u.value(u.it.Value()))
	return u.err == nil
}
func (u *untypedIter[K, V, X]) Key() K   { return u.k }
func (u *untypedIter[K, V, X]) Value() V { return u.v }
func (u *untypedIter[K, V, X]) Err() error {
	if u.err != nil {
		return u.err
	}
	return u.it.Err()
}
func (u *untypedIter[K, V, X]) Close() error { return u.it.Close() }
