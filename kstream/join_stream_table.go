package kstream

import (
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/internal/topology"
	"slices"

	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Name prefixes of the join processors (Java: KStreamImpl's and KTableImpl's constants).
const (
	joinName        = "KSTREAM-JOIN-"
	leftJoinName    = "KSTREAM-LEFTJOIN-"
	joinThisName    = "KSTREAM-JOINTHIS-"
	joinOtherName   = "KSTREAM-JOINOTHER-"
	outerThisName   = "KSTREAM-OUTERTHIS-"
	outerOtherName  = "KSTREAM-OUTEROTHER-"
	windowedName    = "KSTREAM-WINDOWED-"
	outerSharedName = "KSTREAM-OUTERSHARED-"
	tableJoinName   = "KTABLE-JOINTHIS-"
	tableJoinOther  = "KTABLE-JOINOTHER-"
	tableLeftThis   = "KTABLE-LEFTTHIS-"
	tableLeftOther  = "KTABLE-LEFTOTHER-"
	tableOuterThis  = "KTABLE-OUTERTHIS-"
	tableOuterOther = "KTABLE-OUTEROTHER-"
	tableMergeName  = "KTABLE-MERGE-"
)

// untypedJoiner is a value joiner on engine values (nil = null).
type untypedJoiner func(key, value, other any) (any, error)

// joinerOf adapts a typed joiner; null sides reach it as the zero value of their type.
func joinerOf[K, V, VO, VR any](f func(K, V, VO) VR) untypedJoiner {
	return func(key, value, other any) (any, error) {
		k, err := cast[K]("key", key)
		if err != nil {
			return nil, err
		}
		v, err := cast[V]("value", value)
		if err != nil {
			return nil, err
		}
		o, err := cast[VO]("other value", other)
		if err != nil {
			return nil, err
		}
		return box(f(k, v, o)), nil
	}
}

// reverse swaps the value arguments (Java: AbstractStream.reverseJoinerWithKey).
func (j untypedJoiner) reverse() untypedJoiner {
	return func(key, value, other any) (any, error) { return j(key, other, value) }
}

// sourceNodesOf returns the source nodes feeding node in its sub-topology (walking parents up
// to the sources). Java: AbstractStream.subTopologySourceNodes.
func sourceNodesOf(t *processor.Topology, node string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		nd := topology.Of(t).Node(n)
		if nd == nil {
			return
		}
		if len(nd.Parents) == 0 {
			out = append(out, n)
			return
		}
		for _, p := range nd.Parents {
			walk(p)
		}
	}
	walk(node)
	return out
}

// copartition records that the sources feeding nodes must be co-partitioned (Java:
// ensureCopartitionWith) and fails (a *processor.TopologyError) when two of their repartition
// topics have different fixed partition counts.
func copartition(t *processor.Topology, what string, nodes ...string) error {
	var srcs []string
	for _, n := range nodes {
		for _, s := range sourceNodesOf(t, n) {
			if !slices.Contains(srcs, s) {
				srcs = append(srcs, s)
			}
		}
	}
	topology.Of(t).CopartitionSourcesFor(what, srcs...)
	fixed, fixedTopic := int32(0), ""
	for _, s := range srcs {
		for _, topic := range topology.Of(t).Node(s).Topics {
			p, ok := topology.Of(t).InternalTopic(topic)
			if !ok || p.NumberOfPartitions == 0 {
				continue
			}
			if fixed != 0 && p.NumberOfPartitions != fixed {
				return dslErr(what, nil, "%s: repartition topics %s (%d partitions) and %s (%d partitions) must have the same number of partitions; "+
					"give both Repartitioned the same WithNumberOfPartitions", what, fixedTopic, fixed, topic, p.NumberOfPartitions)
			}
			fixed, fixedTopic = p.NumberOfPartitions, topic
		}
	}
	return nil
}

// checkSameBuilder records a *processor.TopologyError when other is not from s's builder.
func (s *streamImpl) checkSameBuilder(other *StreamsBuilder, what string) bool {
	if other != s.b {
		s.b.fail(dslErr(s.name, nil, "%s of %s: the other side was created by another StreamsBuilder", what, s.name))
		return false
	}
	return true
}

// streamTableJoin is the processor supplier of stream-table and stream-globalTable joins.
// Java: KStreamKTableJoin / KStreamGlobalKTableJoin with KStreamKTableJoinProcessor.
type streamTableJoin struct {
	getter    ktable.ValueGetterSupplier
	keyMapper func(key, value any) (any, error) // nil: the record key
	joiner    untypedJoiner
	left      bool
	// bufferStore names the grace-period buffer (KIP-923; "" without grace); keySerde and
	// valueSerde serialize the buffered records (nil: the default serdes), with the join's
	// name as topic.
	bufferStore          string
	name                 string
	keySerde, valueSerde serde.Serde[any]
}

func (j *streamTableJoin) Get() processor.Processor[any, any, any, any] {
	return &streamTableJoinProc{j: j, getter: j.getter.Get()}
}

type streamTableJoinProc struct {
	j                    *streamTableJoin
	getter               ktable.ValueGetter
	versioned            bool
	buf                  *ktable.JoinBuffer
	keySerde, valueSerde serde.Serde[any]
	ctx                  processor.ProcessorContext[any, any]
}

func (p *streamTableJoinProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	if err := p.getter.Init(ctx); err != nil {
		return err
	}
	p.versioned = ktable.IsVersionedGetter(p.getter)
	if p.j.bufferStore == "" {
		return nil
	}
	if !p.versioned {
		return dslErr(p.j.name, nil, "%s: the table must be versioned to use a grace period in a stream-table join", p.j.name)
	}
	var err error
	if p.buf, err = processor.GetStateStore[*ktable.JoinBuffer](ctx, p.j.bufferStore); err != nil {
		return err
	}
	p.keySerde, p.valueSerde = p.j.keySerde, p.j.valueSerde
	if p.keySerde == nil {
		p.keySerde = ctx.KeySerde()
	}
	if p.valueSerde == nil {
		p.valueSerde = ctx.ValueSerde()
	}
	if p.keySerde == nil || p.valueSerde == nil {
		return fmt.Errorf("%s: no serdes for the grace-period buffer %s: give Joined key and value serdes or set default.key.serde and default.value.serde",
			p.j.name, p.j.bufferStore)
	}
	return nil
}

func (p *streamTableJoinProc) mapKey(r processor.Record[any, any]) (any, error) {
	if p.j.keyMapper == nil {
		return r.Key, nil
	}
	return p.j.keyMapper(r.Key, r.Value)
}

func (p *streamTableJoinProc) Process(r processor.Record[any, any]) error {
	mapped, err := p.mapKey(r)
	if err != nil {
		return err
	}
	// Java drops records with a null join key or a null value, except that a left join keeps a
	// null-key record with a value (joined with null).
	if !(p.j.left && r.Key == nil && r.Value != nil) && (mapped == nil || r.Value == nil) {
		return nil
	}
	// A null-key record of a left join is not buffered: it joins with null at once.
	if p.buf == nil || r.Key == nil {
		return p.join(r, mapped)
	}
	kb, err := p.keySerde.Serialize(p.j.name, nil, r.Key)
	if err != nil {
		return fmt.Errorf("%s: serialize key for the buffer: %w", p.j.name, err)
	}
	vb, err := p.valueSerde.Serialize(p.j.name, nil, r.Value)
	if err != nil {
		return fmt.Errorf("%s: serialize value for the buffer: %w", p.j.name, err)
	}
	rc := processor.RecordContext{Timestamp: r.Timestamp, Headers: r.Headers, Partition: -1, Offset: -1}
	if md, ok := p.ctx.RecordMetadata(); ok {
		rc.Topic, rc.Partition, rc.Offset = md.Topic, md.Partition, md.Offset
	}
	buffered, err := p.buf.Put(kb, vb, rc)
	if err != nil {
		return err
	}
	if !buffered { // later than the grace period: joined at once (Java)
		return p.join(r, mapped)
	}
	return p.buf.EvictExpired(p.emit)
}

// emit joins a record leaving the buffer (its key is the stream key: no key mapper with grace).
func (p *streamTableJoinProc) emit(br ktable.BufferedRecord) error {
	key, err := p.keySerde.Deserialize(p.j.name, nil, br.Key)
	if err != nil {
		return fmt.Errorf("%s: deserialize buffered key: %w", p.j.name, err)
	}
	value, err := p.valueSerde.Deserialize(p.j.name, nil, br.Value)
	if err != nil {
		return fmt.Errorf("%s: deserialize buffered value: %w", p.j.name, err)
	}
	return p.join(processor.Record[any, any]{Key: key, Value: value, Timestamp: br.Context.Timestamp, Headers: br.Context.Headers}, key)
}

// join looks the mapped key up (as of the record's timestamp in a versioned table, KIP-914)
// and forwards the joined record.
func (p *streamTableJoinProc) join(r processor.Record[any, any], mapped any) error {
	var other any
	if mapped != nil {
		var vt *ktable.ValueAndTimestamp
		var err error
		if p.versioned {
			vt, err = p.getter.(ktable.VersionedValueGetter).GetAsOf(mapped, r.Timestamp)
		} else {
			vt, err = p.getter.Get(mapped)
		}
		if err != nil {
			return err
		}
		if vt != nil {
			other = vt.Value
		}
	}
	if !p.j.left && other == nil {
		return nil
	}
	out, err := p.j.joiner(r.Key, r.Value, other)
	if err != nil {
		return err
	}
	r.Value = out
	return p.ctx.Forward(r)
}

func (p *streamTableJoinProc) Close() error { p.getter.Close(); return nil }

// checkGrace fails (a *processor.TopologyError) unless every store the join reads is versioned with a
// history retention of at least graceMs (Java: StreamTableJoinNode.writeToTopology).
func checkGrace(t *processor.Topology, name string, graceMs int64, stores []string) error {
	if graceMs < 0 {
		return dslErr(name, nil, "%s: grace period must not be negative (got %d ms)", name, graceMs)
	}
	if len(stores) == 0 {
		return dslErr(name, nil, "%s: the table must be versioned to use a grace period in a stream-table join", name)
	}
	for _, s := range stores {
		var info storeapi.BuilderInfo
		if st := topology.Of(t).Store(s); st != nil {
			sb, _ := st.Builder.(processor.StoreBuilder)
			info, _ = storeapi.DescribeBuilder(sb)
		}
		if !info.Versioned {
			return dslErr(name, nil, "%s: the table must be versioned to use a grace period in a stream-table join (store %s is not versioned; use MaterializedAsVersioned)", name, s)
		}
		if graceMs > info.HistoryRetentionMs {
			return dslErr(name, nil, "%s: the history retention of store %s (%d ms) must be at least the grace period (%d ms)", name, s, info.HistoryRetentionMs, graceMs)
		}
	}
	return nil
}

// Join joins each record of this stream with the table's current value for its key (inner
// join: records whose key has no table value, and records with a null key or value, are
// dropped); against a versioned table (MaterializedAsVersioned, or a filter/mapValues of one
// that is not materialized) it is the version as of the record's timestamp (KIP-914), and
// Joined.WithGracePeriod makes records wait for out-of-order table updates (KIP-923); the result has the stream record's key and timestamp and the value joiner(value,
// tableValue). If this stream's key was changed (SelectKey, Map, ...) it is repartitioned first
// through "<name or stream name>-repartition" with the Joined's serdes. The stream and table
// must be co-partitioned (checked when the application starts; fixed repartition counts at
// Build, a *processor.TopologyError). The processor is named by Joined or "KSTREAM-JOIN-<n>".
// Java: KStream.join(KTable, ValueJoiner, Joined).
func (s KStream[K, V]) Join[VO, VR any](table KTable[K, VO], joiner func(value V, tableValue VO) VR, joined ...Joined[K, V, VO]) KStream[K, VR] {
	var f func(K, V, VO) VR
	if joiner != nil {
		f = func(_ K, v V, o VO) VR { return joiner(v, o) }
	}
	return streamTableJoinOp[K, V, VO, VR](s, table, f, lastJoined(joined), false)
}

// JoinWithKey is Join with a joiner that also gets the (read-only) key. Java: join(KTable,
// ValueJoinerWithKey, Joined).
func (s KStream[K, V]) JoinWithKey[VO, VR any](table KTable[K, VO], joiner func(key K, value V, tableValue VO) VR, joined ...Joined[K, V, VO]) KStream[K, VR] {
	return streamTableJoinOp[K, V, VO, VR](s, table, joiner, lastJoined(joined), false)
}

// LeftJoin is Join that keeps records without a table value (and null-key records with a
// value): they are joined with null (the zero VO; nil when table is viewed with
// NullableTableValues). Processor "KSTREAM-LEFTJOIN-<n>".
// Java: KStream.leftJoin(KTable, ValueJoiner, Joined).
func (s KStream[K, V]) LeftJoin[VO, VR any](table KTable[K, VO], joiner func(value V, tableValue VO) VR, joined ...Joined[K, V, VO]) KStream[K, VR] {
	var f func(K, V, VO) VR
	if joiner != nil {
		f = func(_ K, v V, o VO) VR { return joiner(v, o) }
	}
	return streamTableJoinOp[K, V, VO, VR](s, table, f, lastJoined(joined), true)
}

// LeftJoinWithKey is LeftJoin with a joiner that also gets the key. Java: leftJoin(KTable,
// ValueJoinerWithKey, Joined).
func (s KStream[K, V]) LeftJoinWithKey[VO, VR any](table KTable[K, VO], joiner func(key K, value V, tableValue VO) VR, joined ...Joined[K, V, VO]) KStream[K, VR] {
	return streamTableJoinOp[K, V, VO, VR](s, table, joiner, lastJoined(joined), true)
}

func streamTableJoinOp[K, V, VO, VR any](s KStream[K, V], table KTable[K, VO], joiner func(K, V, VO) VR, jd Joined[K, V, VO], left bool) KStream[K, VR] {
	b := s.s.b
	if table.t == nil || !s.s.checkSameBuilder(table.t.b, "stream-table join") {
		return KStream[K, VR]{s: s.derive("", s.s.node, nil, nil, false)}
	}
	this := s.s
	if this.repartitionRequired {
		prefix := jd.name
		if prefix == "" {
			prefix = this.name
		}
		this = this.repartitionForJoin(prefix, untyped(jd.keySerde), untyped(jd.valueSerde))
	}
	prefix := joinName
	if left {
		prefix = leftJoinName
	}
	name := b.orElseGenerate(jd.name, prefix)
	if joiner == nil {
		b.fail(dslErr(name, nil, "%s: joiner must not be nil", name))
	}
	getter := table.t.supplier.View()
	sup := &streamTableJoin{getter: getter, joiner: joinerOf(joiner), left: left, name: name}
	var buffer *ktable.JoinBufferBuilder
	if jd.hasGrace {
		// Java 4.4: the buffer serdes are Joined's, else the stream's (else the defaults).
		sup.bufferStore = name + "-Buffer"
		sup.keySerde, sup.valueSerde = this.keySerde, this.valueSerde
		if jd.keySerde != nil {
			sup.keySerde = untyped(jd.keySerde)
		}
		if jd.valueSerde != nil {
			sup.valueSerde = untyped(jd.valueSerde)
		}
		buffer = &ktable.JoinBufferBuilder{StoreName: sup.bufferStore, GraceMs: jd.graceMs}
		b.checkName(sup.bufferStore)
	}
	tableNode := table.t.name
	n := b.addNode(&graphNode{name: name, write: func(t *processor.Topology, parents []string) error {
		if err := copartition(t, name, parents[0], tableNode); err != nil {
			return err
		}
		if err := t.AddProcessor(name, processor.ProcessorSupplier[any, any, any, any](sup), parents...); err != nil {
			return err
		}
		stores := getter.StoreNames()
		if len(stores) > 0 {
			topology.Of(t).MarkStoreReaders(name, stores...) // the join looks the table up
		}
		if buffer != nil {
			if err := checkGrace(t, name, jd.graceMs, stores); err != nil {
				return err
			}
			if err := t.AddStateStore(*buffer); err != nil {
				return err
			}
			stores = append(slices.Clone(stores), buffer.StoreName)
		}
		if len(stores) > 0 {
			return t.ConnectProcessorAndStateStores(name, stores...)
		}
		return nil
	}}, this.node)
	n.nullKeyRelaxedJoin = left // KIP-962: keeps null keys at upstream repartitions
	keySerde := this.keySerde
	if jd.keySerde != nil {
		keySerde = untyped(jd.keySerde)
	}
	srcs := append(append([]string(nil), this.sourceNodes...), table.t.sourceNodes...)
	return KStream[K, VR]{s: &streamImpl{b: b, name: name, node: n, keySerde: keySerde, sourceNodes: srcs}}
}

// JoinGlobal joins each record with the global table's value for the key keySelector returns
// (inner: records with no match, a null value or a null selected key are dropped). The result
// keeps the stream's key and timestamp. No repartitioning or co-partitioning is needed. The
// processor is named by named or "KSTREAM-JOIN-<n>". Java: KStream.join(GlobalKTable,
// KeyValueMapper, ValueJoiner[, Named]).
func (s KStream[K, V]) JoinGlobal[KG, VG, VR any](table GlobalKTable[KG, VG], keySelector func(K, V) KG, joiner func(value V, tableValue VG) VR, named ...Named) KStream[K, VR] {
	return globalJoinOp(s, table, keySelector, joiner, lastNamed(named), false)
}

// LeftJoinGlobal is JoinGlobal that keeps records without a match (joined with the zero VG).
// Processor "KSTREAM-LEFTJOIN-<n>". Java: KStream.leftJoin(GlobalKTable, KeyValueMapper,
// ValueJoiner[, Named]).
func (s KStream[K, V]) LeftJoinGlobal[KG, VG, VR any](table GlobalKTable[KG, VG], keySelector func(K, V) KG, joiner func(value V, tableValue VG) VR, named ...Named) KStream[K, VR] {
	return globalJoinOp(s, table, keySelector, joiner, lastNamed(named), true)
}

func globalJoinOp[K, V, KG, VG, VR any](s KStream[K, V], table GlobalKTable[KG, VG], keySelector func(K, V) KG, joiner func(V, VG) VR, named string, left bool) KStream[K, VR] {
	b := s.s.b
	// Java names both the inner and the left global join with the LEFTJOIN prefix.
	name := b.orElseGenerate(named, leftJoinName)
	if keySelector == nil || joiner == nil {
		b.fail(dslErr(name, nil, "%s: key selector and joiner must not be nil", name))
	}
	if table.getter == nil {
		b.fail(dslErr(name, nil, "%s: the global table is the zero value", name))
	}
	km := func(key, value any) (any, error) {
		k, v, err := cast2[K, V](key, value)
		if err != nil {
			return nil, err
		}
		return box(keySelector(k, v)), nil
	}
	var jf func(K, V, VG) VR
	if joiner != nil {
		jf = func(_ K, v V, o VG) VR { return joiner(v, o) }
	}
	sup := &streamTableJoin{getter: table.getter, keyMapper: km, joiner: joinerOf(jf), left: left}
	n := b.addNode(processorNode(name, sup, nil, nil), s.s.node)
	n.nullKeyRelaxedJoin = left // KIP-962: keeps null keys at upstream repartitions
	return KStream[K, VR]{s: &streamImpl{b: b, name: name, node: n, keySerde: s.s.keySerde, repartitionRequired: s.s.repartitionRequired,
		sourceNodes: s.s.sourceNodes}}
}
