package kstreams

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"

	"github.com/IBM/sarama"

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
// follows rebalances. Errors: ErrStoreNotAvailable when the instance is not Running or no
// local task has a store of that name and type.
func KeyValueStore[K, V any](k *KafkaStreams, name string) (store.ReadOnlyKeyValueStore[K, V], error) {
	c := &compositeKV[K, V]{k: k, name: name}
	if _, err := c.stores(); err != nil {
		return nil, err
	}
	return c, nil
}

// compositeKV is the read-only view over the local tasks' stores. Java:
// CompositeReadOnlyKeyValueStore.
type compositeKV[K, V any] struct {
	k    *KafkaStreams
	name string
}

func (c *compositeKV[K, V]) stores() ([]store.ReadOnlyKeyValueStore[K, V], error) {
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
	var out []store.ReadOnlyKeyValueStore[K, V]
	for _, id := range ids {
		kv, ok := byTask[id].(store.ReadOnlyKeyValueStore[K, V])
		if !ok {
			return nil, fmt.Errorf("%w: %q is a %T, not a key-value store of the requested types", ErrStoreNotAvailable, c.name, byTask[id])
		}
		out = append(out, kv)
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
		v, ok, err := s.Get(key)
		if err != nil || ok {
			return v, ok, err
		}
	}
	return zero, false, nil
}

func (c *compositeKV[K, V]) concat(f func(store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V]) store.KeyValueIterator[K, V] {
	ss, err := c.stores()
	return &concatIter[K, V]{stores: ss, open: f, err: err}
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
		n += s.ApproximateNumEntries()
	}
	return n
}

// concatIter walks the iterators of several stores one after another.
type concatIter[K, V any] struct {
	stores []store.ReadOnlyKeyValueStore[K, V]
	open   func(store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V]
	cur    store.KeyValueIterator[K, V]
	err    error
	closed bool
}

func (it *concatIter[K, V]) Next() bool {
	for !it.closed && it.err == nil {
		if it.cur == nil {
			if len(it.stores) == 0 {
				return false
			}
			it.cur = it.open(it.stores[0])
			it.stores = it.stores[1:]
		}
		if it.cur.Next() {
			return true
		}
		it.err = it.cur.Err()
		it.cur.Close()
		it.cur = nil
	}
	return false
}

func (it *concatIter[K, V]) Key() K   { return it.cur.Key() }
func (it *concatIter[K, V]) Value() V { return it.cur.Value() }
func (it *concatIter[K, V]) Err() error {
	return it.err
}
func (it *concatIter[K, V]) Close() error {
	if it.cur != nil {
		it.cur.Close()
		it.cur = nil
	}
	it.closed = true
	return nil
}
