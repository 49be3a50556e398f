package kstream

import (
	"errors"
	"fmt"

	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// Name prefixes of the foreign-key join (Java: KTableImpl's FK_JOIN constants).
const (
	fkJoinPrefix               = "KTABLE-FK-JOIN-"
	fkSubscriptionStoreName    = fkJoinPrefix + "SUBSCRIPTION-STATE-STORE-"
	fkSubscriptionRegistration = fkJoinPrefix + "SUBSCRIPTION-REGISTRATION-"
	fkSubscriptionResponse     = fkJoinPrefix + "SUBSCRIPTION-RESPONSE-"
	fkSubscriptionProcessor    = fkJoinPrefix + "SUBSCRIPTION-PROCESSOR-"
	fkResponseResolver         = fkJoinPrefix + "SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-"
	fkJoinOutputName           = fkJoinPrefix + "OUTPUT-"
	fkTopicSuffix              = "-topic"
	tableSinkName              = "KTABLE-SINK-"
)

// ErrForeignKeyPartitioner is returned (at processing time) when a TableJoined partitioner
// returns other than exactly one partition for a subscription or response record. Java:
// IllegalArgumentException "The partitions returned by StreamPartitioner#partitions method when
// used for FK join should be a singleton set".
var ErrForeignKeyPartitioner = errors.New("a foreign-key join partitioner must return exactly one partition")

// fkJoinOption makes TableJoined usable as an option of [KTable.JoinFK] and [KTable.LeftJoinFK].
func (TableJoined[K, KO]) fkJoinOption() {}

// FKJoinOption is an optional argument of the foreign-key joins: a TableJoined[K, KO] (name,
// partitioners) or a Materialized[K, VR] (the result's store). Go cannot check both kinds'
// type arguments in one argument list (TableJoined has the other table's key type, Materialized
// the result's value type), so one of other types fails Build (a *processor.TopologyError). Java: the
// TableJoined and Materialized overloads of join and leftJoin with a foreign-key extractor.
type FKJoinOption interface{ fkJoinOption() }

// JoinFK returns the inner foreign-key join of this table with other (KIP-213): each row of
// this table whose foreignKey(value) is a key of other gets the value joiner(value,
// otherValue); rows whose foreign key is null (a nil pointer, slice, map or interface), or has
// no row in other, are absent. Changes of either side update the result, also when a row's
// foreign key changes; responses computed for a value the row no longer has are dropped
// (a murmur3 hash of the value travels with the subscription).
//
// The join writes (names in brackets are used when a TableJoined name N is given):
//   - the subscription topic "<application.id>-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-<n>-topic"
//     ["N-subscription-registration-topic"], keyed by the foreign key, with Java's
//     SubscriptionWrapper bytes, co-partitioned with other;
//   - the subscription store "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-<n>" ["N-subscription-store"]
//     (key: int32 length ‖ foreign key ‖ primary key; changelog on, its records carrying the
//     headers of the subscription record, as Java 4.4's headers store; no cache);
//   - the response topic "<application.id>-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-<n>-topic"
//     ["N-subscription-response-topic"], keyed by this table's key, co-partitioned with it;
//   - the result table "KTABLE-FK-JOIN-OUTPUT-<n>" ["N-result"], materialized only when a
//     Materialized names a store or a later operator needs it.
//
// Both tables are materialized (and send old values). Options: TableJoined[K, KO] (name,
// partitioners of this table's and other's topics; a partitioner must return one partition),
// Materialized[K, VR] (result store; key serde defaults to this table's); name the join with
// TableJoinedAs (Java 4.x has no Named variant). Serdes left nil are the defaults. Errors
// (reported by Build, a *processor.TopologyError): a nil extractor or joiner, a table of another
// builder, an option of other types, an illegal name; at processing time ErrForeignKeyPartitioner (a partitioner
// choosing other than one partition) and the serdes' errors. Java: KTable.join(KTable, Function, ValueJoiner[, TableJoined][, Materialized]).
func (t KTable[K, V]) JoinFK[KO, VO, VR any](other KTable[KO, VO], foreignKey func(V) KO, joiner func(V, VO) VR, opts ...FKJoinOption) KTable[K, VR] {
	var fk func(K, V) KO
	if foreignKey != nil {
		fk = func(_ K, v V) KO { return foreignKey(v) }
	}
	return fkJoin[K, V, KO, VO, VR](t, other, fk, joiner, false, "JoinFK", opts)
}

// JoinFKWithKey is [KTable.JoinFK] with a foreign-key extractor that also sees the row's key.
// Java: KTable.join(KTable, BiFunction, ValueJoiner[, TableJoined][, Materialized]).
func (t KTable[K, V]) JoinFKWithKey[KO, VO, VR any](other KTable[KO, VO], foreignKey func(K, V) KO, joiner func(V, VO) VR, opts ...FKJoinOption) KTable[K, VR] {
	return fkJoin[K, V, KO, VO, VR](t, other, foreignKey, joiner, false, "JoinFKWithKey", opts)
}

// LeftJoinFK returns the left foreign-key join: like [KTable.JoinFK], but every row of this
// table is in the result; joiner gets the zero value of VO (Java: null) when the foreign key is
// null or has no row in other. Java: KTable.leftJoin(KTable, Function, ValueJoiner[,
// TableJoined][, Materialized]).
func (t KTable[K, V]) LeftJoinFK[KO, VO, VR any](other KTable[KO, VO], foreignKey func(V) KO, joiner func(V, VO) VR, opts ...FKJoinOption) KTable[K, VR] {
	var fk func(K, V) KO
	if foreignKey != nil {
		fk = func(_ K, v V) KO { return foreignKey(v) }
	}
	return fkJoin[K, V, KO, VO, VR](t, other, fk, joiner, true, "LeftJoinFK", opts)
}

// LeftJoinFKWithKey is [KTable.LeftJoinFK] with a foreign-key extractor that also sees the
// row's key. Java: KTable.leftJoin(KTable, BiFunction, ValueJoiner[, TableJoined][, Materialized]).
func (t KTable[K, V]) LeftJoinFKWithKey[KO, VO, VR any](other KTable[KO, VO], foreignKey func(K, V) KO, joiner func(V, VO) VR, opts ...FKJoinOption) KTable[K, VR] {
	return fkJoin[K, V, KO, VO, VR](t, other, foreignKey, joiner, true, "LeftJoinFKWithKey", opts)
}

// fkJoin follows Java's KTableImpl.doJoinOnForeignKey step by step (the order of generated
// names, graph nodes and materializations matters for names and Describe).
func fkJoin[K, V, KO, VO, VR any](t KTable[K, V], other KTable[KO, VO], fk func(K, V) KO, joiner func(V, VO) VR, leftJoin bool, op string, opts []FKJoinOption) KTable[K, VR] {
	b := t.t.b
	var tj TableJoined[K, KO]
	var mat *Materialized[K, VR]
	for _, o := range opts {
		switch o := o.(type) {
		case nil:
		case TableJoined[K, KO]:
			tj = o
		case Materialized[K, VR]:
			m := o
			mat = &m
		default:
			b.fail(dslErr(tj.name, nil, "%s got %T; it needs TableJoined[%s, %s] (which also carries the name) or Materialized[%s, %s]",
				op, o, typeName[K](), typeName[KO](), typeName[K](), typeName[VR]()))
		}
	}
	if other.t == nil || other.t.b != b {
		b.fail(dslErr(tj.name, nil, "%s: the other table was created by another StreamsBuilder (or is the zero KTable)", op))
		return KTable[K, VR]{t: &tableImpl{b: b, name: t.t.name, node: t.t.node, supplier: t.t.supplier}}
	}
	if fk == nil || joiner == nil {
		b.fail(dslErr(tj.name, nil, "%s: foreign-key extractor and joiner must not be nil", op))
	}
	ot := other.t
	ot.enableSendingOldValues(true)
	t.t.enableSendingOldValues(true)
	name := tj.name

	subscriptionTopic := b.suffixOrElseGenerate(name, "-subscription-registration", fkSubscriptionRegistration) + fkTopicSuffix
	serdes := ktable.NewFKSerdes(subscriptionTopic, t.t.keySerde, ot.keySerde, t.t.valueSerde, ot.valueSerde)
	extract := func(key, value any) (any, error) {
		k, v, err := cast2[K, V](key, value)
		if err != nil {
			return nil, err
		}
		return box(fk(k, v)), nil
	}
	sendName := b.suffixOrElseGenerate(name, "-subscription-registration-processor", fkSubscriptionRegistration)
	send := ktable.NewSubscriptionSend(extract, serdes, leftJoin)
	sendNode := b.addNode(processorNode(sendName, send, nil, nil), t.t.node)

	var otherPart processor.StreamPartitioner[any, any]
	if tj.otherPartitioner != nil {
		otherPart = fkPartitioner[KO](tj.otherPartitioner)
	}
	subSinkName := b.suffixOrElseGenerate(name, "-subscription-registration-sink", tableSinkName)
	wrapperSerde := serdes.SubscriptionWrapperSerde()
	subSink := b.addNode(&graphNode{name: subSinkName, write: func(tp *processor.Topology, parents []string) error {
		topology.Of(tp).AddInternalTopic(subscriptionTopic, topology.InternalTopicProperties{})
		return tp.AddSink(subSinkName, subscriptionTopic, parents, sinkOpts(ot.keySerde, wrapperSerde, otherPart)...)
	}}, sendNode)
	subSourceName := b.suffixOrElseGenerate(name, "-subscription-registration-source", tableSourceName)
	subSource := b.addNode(&graphNode{name: subSourceName, write: func(tp *processor.Topology, _ []string) error {
		return tp.AddSource(subSourceName, []string{subscriptionTopic}, sourceOpts(ot.keySerde, wrapperSerde, nil)...)
	}}, subSink)
	b.copartition(ot.sourceNodes, []string{subSourceName})

	storeName := b.suffixOrElseGenerate(name, "-subscription-store", fkSubscriptionStoreName)
	// The subscription store's engine is the DSL default, chosen when the topology is built:
	// Pebble (Java: RocksDB), or in-memory with default.dsl.store=in_memory. Java:
	// SubscriptionStoreFactory.
	b.addNode(&graphNode{name: storeName, write: func(tp *processor.Topology, _ []string) error {
		sb := store.Stores.TimestampedKeyValueStoreBuilder[any, any](b.dslKeyValueStore(storeName, true), untyped(serde.Bytes()), wrapperSerde)
		sb.WithLoggingEnabled(nil)
		sb.WithCachingDisabled()
		storeapi.LogChangelogHeaders(sb) // Java 4.4: a headers store (KIP-1271)
		return tp.AddStateStore(sb)
	}})

	receiveName := b.suffixOrElseGenerate(name, "-subscription-receive", fkSubscriptionProcessor)
	receive := b.addNode(processorNode(receiveName, ktable.NewSubscriptionReceive(storeName, serdes), []string{storeName}, nil), subSource)

	foreignGetter := ot.valueGetterSupplier()
	subJoinName := b.suffixOrElseGenerate(name, "-subscription-join-foreign", fkSubscriptionProcessor)
	subJoin := b.addNode(processorNode(subJoinName, ktable.NewSubscriptionJoin(foreignGetter), foreignGetter.StoreNames(), nil), receive)

	foreignJoinName := b.suffixOrElseGenerate(name, "-foreign-join-subscription", fkSubscriptionProcessor)
	foreignJoin := b.addNode(processorNode(foreignJoinName, ktable.NewForeignTableJoin(storeName, serdes), []string{storeName}, nil), ot.node)

	responseTopic := b.suffixOrElseGenerate(name, "-subscription-response", fkSubscriptionResponse) + fkTopicSuffix
	var respPart processor.StreamPartitioner[any, any] = processor.StreamPartitionerFunc[any, any](primaryPartition)
	if tj.partitioner != nil {
		respPart = fkPartitioner[K](tj.partitioner)
	}
	respSinkName := b.suffixOrElseGenerate(name, "-subscription-response-sink", tableSinkName)
	responseSerde := serdes.ResponseWrapperSerde()
	respSink := &graphNode{name: respSinkName, write: func(tp *processor.Topology, parents []string) error {
		topology.Of(tp).AddInternalTopic(responseTopic, topology.InternalTopicProperties{})
		return tp.AddSink(respSinkName, responseTopic, parents, sinkOpts(t.t.keySerde, responseSerde, respPart)...)
	}}
	b.addNode(respSink, subJoin)
	b.addNode(respSink, foreignJoin)
	respSourceName := b.suffixOrElseGenerate(name, "-subscription-response-source", tableSourceName)
	respSource := b.addNode(&graphNode{name: respSourceName, write: func(tp *processor.Topology, _ []string) error {
		return tp.AddSource(respSourceName, []string{responseTopic}, sourceOpts(t.t.keySerde, responseSerde, nil)...)
	}}, respSink)
	resultSources := unionNames(t.t.sourceNodes, []string{respSourceName})
	b.copartition(resultSources)

	primaryGetter := t.t.valueGetterSupplier()
	resolverName := b.suffixOrElseGenerate(name, "-subscription-response-resolver", fkResponseResolver)
	var j ktable.ValueJoiner
	if joiner != nil {
		j = tableJoinerOf(joiner)
	}
	resolver := b.addNode(processorNode(resolverName, ktable.NewResponseJoin(primaryGetter, serdes, j, leftJoin), primaryGetter.StoreNames(), nil), respSource)

	resultName := b.suffixOrElseGenerate(name, "-result", fkJoinOutputName)
	mi := materialize(b, mat, fkJoinOutputName)
	if mi.keySerde == nil {
		mi.keySerde = t.t.keySerde
	}
	src := ktable.NewSource(mi.storeName, mi.queryable)
	n := b.addNode(&graphNode{name: resultName, write: func(tp *processor.Topology, parents []string) error {
		if err := tp.AddProcessor(resultName, processor.ProcessorSupplier[any, any, any, any](src), parents...); err != nil {
			return err
		}
		if src.Materialized() {
			return tp.AddStateStore(mi.storeBuilder(), resultName)
		}
		return nil
	}}, resolver)
	return KTable[K, VR]{t: &tableImpl{b: b, name: resultName, node: n, keySerde: t.t.keySerde, valueSerde: mi.valueSerde,
		supplier: src, queryableName: mi.queryableName(), sourceNodes: resultSources}}
}

// primaryPartition sends a response to the partition of the primary record that subscribed
// (Java's default response partitioner); unknown: the default partitioner.
func primaryPartition(_ string, _ any, value any, _ int32) ([]int32, bool, error) {
	if rw, ok := value.(*ktable.SubscriptionResponseWrapper); ok && rw.HasPartition {
		return []int32{rw.PrimaryPartition}, true, nil
	}
	return nil, false, nil
}

// fkPartitioner adapts a TableJoined partitioner (which sees only the key; Java passes a null
// value) to the untyped sink; it must choose exactly one partition.
func fkPartitioner[KK any](p processor.StreamPartitioner[KK, struct{}]) processor.StreamPartitioner[any, any] {
	return processor.StreamPartitionerFunc[any, any](func(topic string, key, _ any, n int32) ([]int32, bool, error) {
		k, err := cast[KK]("key", key)
		if err != nil {
			return nil, false, err
		}
		parts, ok, err := p.Partitions(topic, k, struct{}{}, n)
		if err != nil || !ok {
			return nil, ok, err
		}
		if len(parts) != 1 {
			return nil, false, fmt.Errorf("%w (got %d partitions)", ErrForeignKeyPartitioner, len(parts))
		}
		return parts, true, nil
	})
}
