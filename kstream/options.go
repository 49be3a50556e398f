package kstream

import (
	"maps"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// Options are small immutable values: constructors make them and With... methods return
// modified copies, as Java's Consumed, Produced, Grouped, Materialized, Repartitioned, Named and
// Branched do. A nil serde (or an option not given) means the default serde of the
// configuration (default.key.serde / default.value.serde) or, where Java infers one, the
// upstream operator's serde; a default serde of the wrong type fails at run time with an error
// wrapping serde.ErrWrongType, as Java fails with a ClassCastException.

// untyped adapts a typed serde for the engine; nil stays nil.
func untyped[T any](s serde.Serde[T]) serde.Serde[any] {
	if s == nil {
		return nil
	}
	return serde.Untyped(s)
}

// Named gives a processor (and, for some operators, its internal topics and stores) a name
// instead of a generated one. Names may contain ASCII letters and digits, '.', '_' and '-', at
// most 249 characters. Operators that produce a table take [TableNamed] instead, which carries
// the result's types. Java counterpart: org.apache.kafka.streams.kstream.Named.
type Named struct{ name string }

// NamedAs returns a Named with the given name. Java: Named.as(name).
func NamedAs(name string) Named { return Named{name: name} }

// TableOption is an optional argument of an operator whose result is a KTable[K, V] (for a
// windowed aggregation, a KTable[Windowed[K], V]): a [Materialized][K, V] (the result's store)
// or a [TableNamed][K, V] (the processor's name). The compiler checks the types: a
// Materialized of other key or value types than the result's does not compile. Java: the
// Named and Materialized overloads of count, reduce, aggregate, filter, mapValues, join and
// toTable.
type TableOption[K, V any] interface {
	applyTable(*tableOptions[K, V])
}

// tableOptions are the options a table operator was given (the last of each kind wins).
type tableOptions[K, V any] struct {
	name string
	mat  *Materialized[K, V]
}

// TableNamed names the processor of an operator that produces a KTable[K, V], as [Named]
// names a stream operator's (a table operator's options are typed by the result's key and
// value types, which Named does not carry). Java: Named passed to a table operator.
type TableNamed[K, V any] struct{ name string }

// TableNamedAs returns the option naming a table operator's processor, e.g.
// Count(kstream.TableNamedAs[string, int64]("counter")). Names follow [NamedAs]'s rules.
// Java: Named.as(name).
func TableNamedAs[K, V any](name string) TableNamed[K, V] { return TableNamed[K, V]{name: name} }

func (n TableNamed[K, V]) applyTable(o *tableOptions[K, V]) { o.name = n.name }

func lastNamed(named []Named) string {
	if len(named) == 0 {
		return ""
	}
	return named[len(named)-1].name
}

// Consumed says how a source reads its topic: key and value serdes, timestamp extractor,
// offset reset policy and the source processor name. Java counterpart:
// org.apache.kafka.streams.kstream.Consumed.
type Consumed[K, V any] struct {
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
	extractor  processor.TimestampExtractor
	reset      processor.AutoOffsetReset
	name       string
}

// ConsumedWith returns a Consumed with the given serdes. Java: Consumed.with(keySerde, valueSerde).
func ConsumedWith[K, V any](keySerde serde.Serde[K], valueSerde serde.Serde[V]) Consumed[K, V] {
	return Consumed[K, V]{keySerde: keySerde, valueSerde: valueSerde}
}

// ConsumedAs returns a Consumed naming the source processor. Java: Consumed.as(name).
func ConsumedAs[K, V any](name string) Consumed[K, V] { return Consumed[K, V]{name: name} }

// WithKeySerde returns a copy with the key serde set.
func (c Consumed[K, V]) WithKeySerde(s serde.Serde[K]) Consumed[K, V] { c.keySerde = s; return c }

// WithValueSerde returns a copy with the value serde set.
func (c Consumed[K, V]) WithValueSerde(s serde.Serde[V]) Consumed[K, V] { c.valueSerde = s; return c }

// WithTimestampExtractor returns a copy with the timestamp extractor set (default:
// default.timestamp.extractor).
func (c Consumed[K, V]) WithTimestampExtractor(e processor.TimestampExtractor) Consumed[K, V] {
	c.extractor = e
	return c
}

// WithOffsetResetPolicy returns a copy with the offset reset policy set. Java: withOffsetResetPolicy.
func (c Consumed[K, V]) WithOffsetResetPolicy(r processor.AutoOffsetReset) Consumed[K, V] {
	c.reset = r
	return c
}

// WithName returns a copy naming the source processor. Java: withName.
func (c Consumed[K, V]) WithName(name string) Consumed[K, V] { c.name = name; return c }

func lastConsumed[K, V any](cs []Consumed[K, V]) Consumed[K, V] {
	if len(cs) == 0 {
		return Consumed[K, V]{}
	}
	return cs[len(cs)-1]
}

func (c Consumed[K, V]) sourceOptions() []processor.SourceOption {
	var opts []processor.SourceOption
	if c.keySerde != nil {
		opts = append(opts, processor.WithKeyDeserializer[K](c.keySerde))
	}
	if c.valueSerde != nil {
		opts = append(opts, processor.WithValueDeserializer[V](c.valueSerde))
	}
	if c.extractor != nil {
		opts = append(opts, processor.WithTimestampExtractor(c.extractor))
	}
	if c.reset != (processor.AutoOffsetReset{}) {
		opts = append(opts, processor.WithOffsetReset(c.reset))
	}
	return opts
}

// Produced says how a sink writes: key and value serdes, partitioner and the sink processor
// name. Java counterpart: org.apache.kafka.streams.kstream.Produced.
type Produced[K, V any] struct {
	keySerde    serde.Serde[K]
	valueSerde  serde.Serde[V]
	partitioner processor.StreamPartitioner[K, V]
	name        string
}

// ProducedWith returns a Produced with the given serdes. Java: Produced.with(keySerde, valueSerde).
func ProducedWith[K, V any](keySerde serde.Serde[K], valueSerde serde.Serde[V]) Produced[K, V] {
	return Produced[K, V]{keySerde: keySerde, valueSerde: valueSerde}
}

// ProducedAs returns a Produced naming the sink processor. Java: Produced.as(name).
func ProducedAs[K, V any](name string) Produced[K, V] { return Produced[K, V]{name: name} }

// WithKeySerde returns a copy with the key serde set.
func (p Produced[K, V]) WithKeySerde(s serde.Serde[K]) Produced[K, V] { p.keySerde = s; return p }

// WithValueSerde returns a copy with the value serde set.
func (p Produced[K, V]) WithValueSerde(s serde.Serde[V]) Produced[K, V] { p.valueSerde = s; return p }

// WithStreamPartitioner returns a copy with a custom partitioner (default: murmur2 of the
// serialized key, as Java's producer). Java: withStreamPartitioner.
func (p Produced[K, V]) WithStreamPartitioner(sp processor.StreamPartitioner[K, V]) Produced[K, V] {
	p.partitioner = sp
	return p
}

// WithName returns a copy naming the sink processor. Java: withName.
func (p Produced[K, V]) WithName(name string) Produced[K, V] { p.name = name; return p }

// Grouped gives the serdes of a grouping's repartition topic and its name (the repartition
// topic becomes "<name>-repartition", the key-selecting processor of GroupBy is named name).
// Java counterpart: org.apache.kafka.streams.kstream.Grouped.
type Grouped[K, V any] struct {
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
	name       string
}

// GroupedWith returns a Grouped with the given serdes. Java: Grouped.with(keySerde, valueSerde).
func GroupedWith[K, V any](keySerde serde.Serde[K], valueSerde serde.Serde[V]) Grouped[K, V] {
	return Grouped[K, V]{keySerde: keySerde, valueSerde: valueSerde}
}

// GroupedAs returns a named Grouped. Java: Grouped.as(name).
func GroupedAs[K, V any](name string) Grouped[K, V] { return Grouped[K, V]{name: name} }

// WithKeySerde returns a copy with the key serde set.
func (g Grouped[K, V]) WithKeySerde(s serde.Serde[K]) Grouped[K, V] { g.keySerde = s; return g }

// WithValueSerde returns a copy with the value serde set.
func (g Grouped[K, V]) WithValueSerde(s serde.Serde[V]) Grouped[K, V] { g.valueSerde = s; return g }

// WithName returns a copy with the name set.
func (g Grouped[K, V]) WithName(name string) Grouped[K, V] { g.name = name; return g }

// Materialized describes the store of a table: its name (which makes the table queryable and
// names its changelog "<application.id>-<name>-changelog"), serdes, store supplier, caching
// (default on), change logging (default on, with extra topic configs) and retention. Without a
// name, a generated internal name is used when the table needs a store. Java counterpart:
// org.apache.kafka.streams.kstream.Materialized.
type Materialized[K, V any] struct {
	storeName   string
	keySerde    serde.Serde[K]
	valueSerde  serde.Serde[V]
	supplier    store.KeyValueBytesStoreSupplier
	versioned   store.VersionedBytesStoreSupplier
	noCaching   bool
	noLogging   bool
	logConfig   map[string]string
	retention   time.Duration
	retentionOK bool
}

func (m Materialized[K, V]) applyTable(o *tableOptions[K, V]) { o.mat = &m }

func (Materialized[K, V]) fkJoinOption() {}

// MaterializedAs returns a Materialized naming the store. Java: Materialized.as(storeName).
func MaterializedAs[K, V any](storeName string) Materialized[K, V] {
	return Materialized[K, V]{storeName: storeName}
}

// MaterializedAsSupplier returns a Materialized using supplier's engines (and its name).
// Java: Materialized.as(KeyValueBytesStoreSupplier).
func MaterializedAsSupplier[K, V any](supplier store.KeyValueBytesStoreSupplier) Materialized[K, V] {
	return Materialized[K, V]{storeName: supplier.Name(), supplier: supplier}
}

// MaterializedAsVersioned returns a Materialized using supplier's versioned engines (and its
// name): the table is a versioned table (KIP-889). Its store keeps the history of every key for
// the supplier's history retention and has no record cache (WithCachingEnabled is ignored, as
// Java ignores caching for versioned stores). An update older than the history retention is
// neither stored nor forwarded, and table-table joins and table aggregations (groupBy) drop
// out-of-order updates (KIP-914); value getters read the latest version. Java:
// Materialized.as(VersionedBytesStoreSupplier).
func MaterializedAsVersioned[K, V any](supplier store.VersionedBytesStoreSupplier) Materialized[K, V] {
	return Materialized[K, V]{storeName: supplier.Name(), versioned: supplier}
}

// MaterializedWith returns a Materialized with the given serdes (and a generated store name).
// Java: Materialized.with(keySerde, valueSerde).
func MaterializedWith[K, V any](keySerde serde.Serde[K], valueSerde serde.Serde[V]) Materialized[K, V] {
	return Materialized[K, V]{keySerde: keySerde, valueSerde: valueSerde}
}

// WithKeySerde returns a copy with the key serde set.
func (m Materialized[K, V]) WithKeySerde(s serde.Serde[K]) Materialized[K, V] {
	m.keySerde = s
	return m
}

// WithValueSerde returns a copy with the value serde set.
func (m Materialized[K, V]) WithValueSerde(s serde.Serde[V]) Materialized[K, V] {
	m.valueSerde = s
	return m
}

// WithCachingEnabled returns a copy with the record cache on (the default).
func (m Materialized[K, V]) WithCachingEnabled() Materialized[K, V] { m.noCaching = false; return m }

// WithCachingDisabled returns a copy with the record cache off.
func (m Materialized[K, V]) WithCachingDisabled() Materialized[K, V] { m.noCaching = true; return m }

// WithLoggingEnabled returns a copy with the changelog on (the default) and extra changelog
// topic configs (copied; nil for none).
func (m Materialized[K, V]) WithLoggingEnabled(config map[string]string) Materialized[K, V] {
	m.noLogging = false
	m.logConfig = maps.Clone(config)
	return m
}

// WithLoggingDisabled returns a copy without changelog.
func (m Materialized[K, V]) WithLoggingDisabled() Materialized[K, V] {
	m.noLogging = true
	m.logConfig = nil
	return m
}

// WithRetention returns a copy with the retention of window and session stores (ms
// precision; ignored by key-value stores, as in Java). Java: withRetention(Duration).
func (m Materialized[K, V]) WithRetention(d time.Duration) Materialized[K, V] {
	m.retention, m.retentionOK = d, true
	return m
}

// Repartitioned configures KStream.Repartition: the repartition topic's name
// ("<name>-repartition"), serdes, number of partitions and partitioner. Java counterpart:
// org.apache.kafka.streams.kstream.Repartitioned.
type Repartitioned[K, V any] struct {
	name          string
	keySerde      serde.Serde[K]
	valueSerde    serde.Serde[V]
	numPartitions int32
	partitioner   processor.StreamPartitioner[K, V]
}

// RepartitionedAs returns a named Repartitioned. Java: Repartitioned.as(name).
func RepartitionedAs[K, V any](name string) Repartitioned[K, V] {
	return Repartitioned[K, V]{name: name}
}

// RepartitionedWith returns a Repartitioned with the given serdes. Java: Repartitioned.with.
func RepartitionedWith[K, V any](keySerde serde.Serde[K], valueSerde serde.Serde[V]) Repartitioned[K, V] {
	return Repartitioned[K, V]{keySerde: keySerde, valueSerde: valueSerde}
}

// WithName returns a copy with the name set.
func (r Repartitioned[K, V]) WithName(name string) Repartitioned[K, V] { r.name = name; return r }

// WithKeySerde returns a copy with the key serde set.
func (r Repartitioned[K, V]) WithKeySerde(s serde.Serde[K]) Repartitioned[K, V] {
	r.keySerde = s
	return r
}

// WithValueSerde returns a copy with the value serde set.
func (r Repartitioned[K, V]) WithValueSerde(s serde.Serde[V]) Repartitioned[K, V] {
	r.valueSerde = s
	return r
}

// WithNumberOfPartitions returns a copy fixing the repartition topic's partition count (default:
// that of the upstream topics). Java: withNumberOfPartitions.
func (r Repartitioned[K, V]) WithNumberOfPartitions(n int32) Repartitioned[K, V] {
	r.numPartitions = n
	return r
}

// WithStreamPartitioner returns a copy with a custom partitioner. Java: withStreamPartitioner.
func (r Repartitioned[K, V]) WithStreamPartitioner(p processor.StreamPartitioner[K, V]) Repartitioned[K, V] {
	r.partitioner = p
	return r
}

// Branched configures one branch of KStream.Split: its name (the branch's processor and map
// key become "<split name><branch name>") and what to do with the branch stream (a function
// whose result is put in the map, or a consumer, after which the branch is not in the map).
// Java counterpart: org.apache.kafka.streams.kstream.Branched.
type Branched[K, V any] struct {
	name     string
	function func(KStream[K, V]) KStream[K, V]
	consumer func(KStream[K, V])
}

// BranchedAs returns a named branch. Java: Branched.as(name).
func BranchedAs[K, V any](name string) Branched[K, V] { return Branched[K, V]{name: name} }

// BranchedWithFunction returns a branch transformed by f (the result goes into the map, unless
// nil). Java: Branched.withFunction(f[, name]).
func BranchedWithFunction[K, V any](f func(KStream[K, V]) KStream[K, V], name ...string) Branched[K, V] {
	b := Branched[K, V]{function: f}
	if len(name) > 0 {
		b.name = name[len(name)-1]
	}
	return b
}

// BranchedWithConsumer returns a branch handed to f (it is then not in the map). Java:
// Branched.withConsumer(c[, name]).
func BranchedWithConsumer[K, V any](f func(KStream[K, V]), name ...string) Branched[K, V] {
	b := Branched[K, V]{consumer: f}
	if len(name) > 0 {
		b.name = name[len(name)-1]
	}
	return b
}

// splitTableOptions returns the name and the Materialized[K, V] given in opts (nil ones are
// skipped).
func splitTableOptions[K, V any](opts []TableOption[K, V]) (string, *Materialized[K, V]) {
	var o tableOptions[K, V]
	for _, opt := range opts {
		if opt != nil {
			opt.applyTable(&o)
		}
	}
	return o.name, o.mat
}
