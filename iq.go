package kstreams

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/internal/topology"
	"reflect"
	"slices"
	"sort"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/storeview"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// ErrStoreNotAvailable is returned by interactive queries when the store is not queryable now
// (the instance is not Running, no local task has it, or its tasks are migrating): retry later.
// A store the topology does not have is processor.ErrUnknownStore (returned by
// QueryMetadataForKey, the store views and StateQuery; Java: UnknownStateStoreException) and a
// view of the wrong types
// processor.ErrWrongStoreType, neither of which a retry fixes. Java: InvalidStateStoreException
// (StreamsNotStartedException, StateStoreMigratedException).
var ErrStoreNotAvailable = errors.New("kstreams: state store not available")

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
	if k.runtime() == nil {
		return nil
	}
	var out []ThreadMetadata
	for name, ids := range k.runtime().LocalTasks() {
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
	// StandbyHosts are the application.servers of the instances holding a standby of the
	// key's task (KIP-535; they answer queries that allow stale data), sorted.
	StandbyHosts []HostInfo
	// Partition is the key's partition (Java's default partitioner over the source topics).
	Partition int32
	// TaskID is the task holding the key.
	TaskID processor.TaskID
}

// storeSubtopology returns the sub-topology of the store's processors.
func (k *KafkaStreams) storeSubtopology(storeName string) (int, bool) {
	b := topology.Of(k.topology)
	sub := -1
	for _, g := range b.NodeGroups() {
		for _, n := range g.Nodes {
			if nd := b.Node(n); nd != nil && slices.Contains(nd.Stores, storeName) {
				sub = g.ID
			}
		}
	}
	return sub, sub >= 0
}

// QueryMetadataForKey returns where key (serialized with the store's key serde) of store
// lives: its partition, task and the application.servers of the instances running that task
// and holding standbys of it; QueryMetadataForKeyOf takes a typed key and its serializer.
// Errors: processor.ErrUnknownStore, ErrIllegalState before Start. Java: queryMetadataForKey.
func (k *KafkaStreams) QueryMetadataForKey(storeName string, serializedKey []byte) (KeyQueryMetadata, error) {
	if k.runtime() == nil || k.runtime().Layout() == nil {
		return KeyQueryMetadata{}, fmt.Errorf("%w: query metadata before Start", ErrIllegalState)
	}
	sub, ok := k.storeSubtopology(storeName)
	if !ok {
		return KeyQueryMetadata{}, fmt.Errorf("kstreams: %w: %q", processor.ErrUnknownStore, storeName)
	}
	n := k.runtime().Layout().Tasks[sub]
	if n <= 0 {
		return KeyQueryMetadata{}, fmt.Errorf("kstreams: %w: %q has no tasks", processor.ErrUnknownStore, storeName)
	}
	p, err := sarama.NewMurmur2Partitioner("").Partition(&sarama.ProducerMessage{Key: sarama.ByteEncoder(serializedKey)}, n)
	if err != nil {
		return KeyQueryMetadata{}, err
	}
	md := KeyQueryMetadata{Partition: p, TaskID: processor.TaskID{Subtopology: sub, Partition: int(p)}}
	for host, ids := range k.runtime().Hosts() {
		if hi, ok := parseHost(host); ok && slices.Contains(ids, md.TaskID) {
			md.ActiveHost = hi
		}
	}
	for host, ids := range k.runtime().StandbyHosts() {
		if hi, ok := parseHost(host); ok && slices.Contains(ids, md.TaskID) {
			md.StandbyHosts = append(md.StandbyHosts, hi)
		}
	}
	sort.Slice(md.StandbyHosts, func(i, j int) bool {
		a, b := md.StandbyHosts[i], md.StandbyHosts[j]
		return a.Host < b.Host || a.Host == b.Host && a.Port < b.Port
	})
	return md, nil
}

// The interactive queries view a store with the key and value types it holds, the same rule
// as the test driver's typed accessors: a Processor API store built as
// store.KeyValueStore[K, V] has K and V; a DSL store has the types of the Materialized it was
// made from (Count: Materialized[K, int64], so K and int64), whatever engine-level types it is
// built with; a timestamped store (the DSL's aggregations and tables) is viewed with its plain
// values (KeyValueStore) or with its timestamps (TimestampedKeyValueStore). A view of other
// types is refused when it is made with a *processor.StoreTypeError
// (errors.Is(err, processor.ErrWrongStoreType)) saying what the store holds and which views fit,
// not with ErrStoreNotAvailable, which asks to retry later: retrying cannot fix the types.
// An interface type such as any accepts every value.

// KeyValueStore returns a read-only view of the key-value store name, keys K and plain values
// V, across the instance's local active tasks (Java: store(StoreQueryParameters.fromNameAndType(name,
// QueryableStoreTypes.keyValueStore()))). The view looks the tasks up on every call, so it
// follows rebalances. It serves Processor API stores of K and V and the DSL's stores with the
// types of their Materialized (timestamped ones give their plain values), e.g.
// KeyValueStore[string, int64] for a Count by string keys. Reads are safe while the stream
// threads run: each waits until the owning thread leaves the store (at most a processing batch
// or a cache flush) and never fills the record cache; iterators stream each task's store in
// chunks of a few hundred entries (see chunkIter), so an iteration over a large store (Pebble
// or in memory) holds one chunk in memory and never the store, and the stream threads keep
// processing between chunks; the keys of one task come in order and once each, and an iterator sees an entry
// written meanwhile when it has not passed its key yet (Java's RocksDB iterators read a snapshot
// instead). Do not read the view from the instance's own processing code (a
// processor, punctuator or serde running on a stream thread): the read would wait for the very
// thread making it and never return (Java's locks are re-entrant; ours are not); processing
// code reads its stores through ProcessorContext.StateStore. Errors: processor.ErrUnknownStore when the
// topology has no store of that name; *processor.StoreTypeError (processor.ErrWrongStoreType)
// when the store does not hold K and V or is not a key-value store; ErrStoreNotAvailable when
// the instance is not Running, no local task has the store, or (from reads) the task migrated
// since the view found it. Options: EnableStaleStores (standbys and restoring tasks answer too, KIP-535),
// WithPartition (one partition's task).
//
// Without WithPartition the view covers only the tasks of this instance: a key whose partition
// another instance owns reads as absent (Get returns false and no error; ranges skip it), as
// in Java. To read any key, find its owner with QueryMetadataForKey (its application.server)
// and ask that instance, or query WithPartition(p) with the key's partition p, which fails
// with ErrStoreNotAvailable instead of answering "absent" when the partition is not local.
func KeyValueStore[K, V any](k *KafkaStreams, name string, opts ...StoreQueryOption) (store.ReadOnlyKeyValueStore[K, V], error) {
	return newCompositeKV[K, V](k, name, queryOptions(opts), storeview.KeyValue, storeview.ReadOnlyKeyValue[K, V])
}

// TimestampedKeyValueStore returns a read-only view of the timestamped key-value store name
// (the DSL's aggregations and tables), keys K and values *store.ValueAndTimestamp[V] (the value
// and the timestamp of the record that last updated it, ms), across the instance's local
// active tasks, e.g. TimestampedKeyValueStore[string, int64] for a Count by string keys. It
// behaves as KeyValueStore otherwise, errors included. Java:
// QueryableStoreTypes.timestampedKeyValueStore().
func TimestampedKeyValueStore[K, V any](k *KafkaStreams, name string, opts ...StoreQueryOption) (store.ReadOnlyKeyValueStore[K, *store.ValueAndTimestamp[V]], error) {
	return newCompositeKV[K, *store.ValueAndTimestamp[V]](k, name, queryOptions(opts), storeview.TimestampedKeyValue, storeview.ReadOnlyTimestampedKeyValue[K, V])
}

// newCompositeKV checks the view's types against what the topology declares for the store
// (DSL stores) and against the local stores (all stores, once the instance runs) and returns
// the view.
func newCompositeKV[K, V any](k *KafkaStreams, name string, q storeQuery, want storeview.Kind,
	view func(processor.StateStore) (store.ReadOnlyKeyValueStore[K, V], bool)) (store.ReadOnlyKeyValueStore[K, V], error) {
	// The value type the user asked for is V, or X of V = *ValueAndTimestamp[X] for a
	// timestamped view.
	value := reflect.TypeFor[V]()
	if want == storeview.TimestampedKeyValue {
		value = storeview.TimestampedValueType(value)
	}
	l, err := newLookup(k, name, q, want, reflect.TypeFor[K](), value)
	if err != nil {
		return nil, err
	}
	c := &compositeKV[K, V]{l: l, name: name, view: view}
	if _, err := c.stores(); err != nil {
		return nil, l.notReady(err)
	}
	return c, nil
}

// compositeKV is the read-only view over the local tasks' stores. Java:
// CompositeReadOnlyKeyValueStore. Every read runs while the stream thread owning the store
// leaves it alone (runtime.QueryableStore.Read), as Java reads under the caching layer's lock;
// iterators therefore read in chunks, each under that lock (chunkIter).
type compositeKV[K, V any] struct {
	l    lookup
	name string
	view func(processor.StateStore) (store.ReadOnlyKeyValueStore[K, V], bool)
}

// taskKV is one task's store seen with the requested types, and the way to read it safely.
type taskKV[K, V any] = taskView[store.ReadOnlyKeyValueStore[K, V]]

func (c *compositeKV[K, V]) stores() ([]taskKV[K, V], error) { return localViews(c.l, c.view) }

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

// concat is the view's iterator of scan: each task's store in turn, in chunks (chunkIter),
// or with open when the store cannot scan.
func (c *compositeKV[K, V]) concat(scan storeapi.Scan[K], open func(store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V]) store.KeyValueIterator[K, V] {
	ss, err := c.stores()
	return newChunkIter(c.name, ss, err, false, func(kv store.ReadOnlyKeyValueStore[K, V], after []byte) (storeapi.RawKeyIterator[K, V], bool) {
		sc, ok := kv.(storeapi.Scanner[K, V])
		if !ok {
			return nil, false
		}
		s := scan
		s.After = after
		return sc.Scan(s)
	}, open)
}

// Range implements store.ReadOnlyKeyValueStore (each store's range in turn, as Java's
// composite store).
func (c *compositeKV[K, V]) Range(from, to K) store.KeyValueIterator[K, V] {
	return c.concat(storeapi.Scan[K]{Kind: storeapi.ScanRange, From: from, To: to},
		func(s store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V] { return s.Range(from, to) })
}

// ReverseRange implements store.ReadOnlyKeyValueStore.
func (c *compositeKV[K, V]) ReverseRange(from, to K) store.KeyValueIterator[K, V] {
	return c.concat(storeapi.Scan[K]{Kind: storeapi.ScanRange, From: from, To: to, Reverse: true},
		func(s store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V] {
			return s.ReverseRange(from, to)
		})
}

// All implements store.ReadOnlyKeyValueStore.
func (c *compositeKV[K, V]) All() store.KeyValueIterator[K, V] {
	return c.concat(storeapi.Scan[K]{Kind: storeapi.ScanAll},
		func(s store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V] { return s.All() })
}

// ReverseAll implements store.ReadOnlyKeyValueStore.
func (c *compositeKV[K, V]) ReverseAll() store.KeyValueIterator[K, V] {
	return c.concat(storeapi.Scan[K]{Kind: storeapi.ScanAll, Reverse: true},
		func(s store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V] { return s.ReverseAll() })
}

// PrefixScan implements store.ReadOnlyKeyValueStore.
func (c *compositeKV[K, V]) PrefixScan(prefix []byte) store.KeyValueIterator[K, V] {
	return c.concat(storeapi.Scan[K]{Kind: storeapi.ScanPrefix, Prefix: prefix},
		func(s store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V] { return s.PrefixScan(prefix) })
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

// queryChunk is how many entries a view's iterator reads from a store at a time: the stream
// thread owning the store waits for one chunk (well under a millisecond), and the iterator
// holds at most one chunk, whatever the size of the store.
var queryChunk = 256

// chunkReader reads one task's next chunk: the entries after the raw key after (nil: from the
// start), appended to buf, and the raw key to resume after when there may be more (nil when
// the task's entries are all read).
type chunkReader[KK, V any] func(after []byte, buf []store.KeyValue[KK, V]) (out []store.KeyValue[KK, V], next []byte, err error)

// newChunkIter returns the iterator over the tasks ts (see chunkIter): scan opens a task's
// store iteration resumed after a raw key (false: the store cannot, a custom store type), open
// its plain iteration, read whole instead; firstOnly stops after the first task with entries
// (a key's lookups: a key lives in one task); err is the lookup's error, if any.
func newChunkIter[S, KK, V any](name string, ts []taskView[S], err error, firstOnly bool,
	scan func(s S, after []byte) (storeapi.RawKeyIterator[KK, V], bool), open func(S) store.KeyValueIterator[KK, V]) *chunkIter[KK, V] {
	it := &chunkIter[KK, V]{err: err, pos: -1, firstOnly: firstOnly}
	for _, t := range ts {
		it.tasks = append(it.tasks, chunked(name, t, scan, open))
	}
	return it
}

// chunked is the chunkReader of task t: each chunk is up to queryChunk entries of a fresh
// scan resumed after the last raw key read, read while the owning stream thread leaves the
// store alone; a store that cannot scan is read whole, under one lock.
func chunked[S, KK, V any](name string, t taskView[S], scan func(s S, after []byte) (storeapi.RawKeyIterator[KK, V], bool), open func(S) store.KeyValueIterator[KK, V]) chunkReader[KK, V] {
	return func(after []byte, buf []store.KeyValue[KK, V]) (out []store.KeyValue[KK, V], next []byte, err error) {
		out = buf
		rerr := t.read(name, func(s S) {
			raw, ok := scan(s, after)
			if !ok {
				out, err = store.Collect(open(s))
				return
			}
			for len(out) < queryChunk && raw.Next() {
				out = append(out, store.Pair(raw.Key(), raw.Value()))
			}
			if err = raw.Err(); err == nil && len(out) == queryChunk {
				next = bytes.Clone(raw.RawKey())
			}
			if cerr := raw.Close(); err == nil {
				err = cerr
			}
		})
		if rerr != nil {
			return nil, nil, rerr
		}
		return out, next, err
	}
}

// chunkIter walks the entries of several tasks' stores one task after another, the views'
// iterator of every kind of store (key-value, window, session). It reads each task in chunks
// of queryChunk entries (chunkReader), so that neither a large store nor a slow reader holds
// memory or the stream thread: the entries of one task come in the store's order, each once,
// and an entry written between two chunks is seen when the scan has not passed it (see
// storeapi.Scan and storeapi.WindowScan). A store that cannot resume a scan (a custom store type) is
// read whole, under one lock.
type chunkIter[KK, V any] struct {
	tasks     []chunkReader[KK, V]
	firstOnly bool
	cur       []store.KeyValue[KK, V]
	pos       int
	// inTask says tasks[0] is being read; more that it may have entries after the raw key
	// after; got that it gave entries.
	inTask, more, got bool
	after             []byte
	err               error
	closed            bool
}

func (it *chunkIter[KK, V]) Next() bool {
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
		it.cur, it.pos = it.cur[:0], -1
		if it.inTask && it.more {
			it.cur, it.after, it.err = it.tasks[0](it.after, it.cur)
			it.more, it.got = it.after != nil, it.got || len(it.cur) > 0
			continue
		}
		if it.inTask {
			it.tasks, it.inTask = it.tasks[1:], false
			if it.firstOnly && it.got {
				break
			}
		}
		if len(it.tasks) == 0 {
			break
		}
		it.inTask, it.more, it.got, it.after = true, true, false, nil
	}
	it.cur, it.pos, it.tasks = nil, -1, nil
	return false
}

// entry is the entry Next moved to; the zero entry before the first Next, at the end, after
// an error and after Close (as the store package's iterators, never a panic).
func (it *chunkIter[KK, V]) entry() (kv store.KeyValue[KK, V]) {
	if it.pos >= 0 && it.pos < len(it.cur) {
		kv = it.cur[it.pos]
	}
	return kv
}

func (it *chunkIter[KK, V]) Key() KK    { return it.entry().Key }
func (it *chunkIter[KK, V]) Value() V   { return it.entry().Value }
func (it *chunkIter[KK, V]) Err() error { return it.err }
func (it *chunkIter[KK, V]) Close() error {
	it.cur, it.tasks, it.pos = nil, nil, -1
	it.closed = true
	return nil
}
