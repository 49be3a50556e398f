package kstream

import (
	"regexp"

	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Name prefixes of generated processor names (Java's constants in KStreamImpl, KTableImpl,
// KGroupedStreamImpl, KGroupedTableImpl, CogroupedKStreamImpl, BranchedKStreamImpl).
const (
	sourceName         = "KSTREAM-SOURCE-"
	sinkName           = "KSTREAM-SINK-"
	filterName         = "KSTREAM-FILTER-"
	peekName           = "KSTREAM-PEEK-"
	flatMapName        = "KSTREAM-FLATMAP-"
	flatMapValuesName  = "KSTREAM-FLATMAPVALUES-"
	mapName            = "KSTREAM-MAP-"
	mapValuesName      = "KSTREAM-MAPVALUES-"
	processorName      = "KSTREAM-PROCESSOR-"
	processValuesName  = "KSTREAM-PROCESSVALUES-"
	keySelectName      = "KSTREAM-KEY-SELECT-"
	foreachName        = "KSTREAM-FOREACH-"
	toTableName        = "KSTREAM-TOTABLE-"
	repartitionName    = "KSTREAM-REPARTITION-"
	mergeName          = "KSTREAM-MERGE-"
	branchName         = "KSTREAM-BRANCH-"
	streamAggName      = "KSTREAM-AGGREGATE-"
	streamReduceName   = "KSTREAM-REDUCE-"
	tableSourceName    = "KTABLE-SOURCE-"
	tableFilterName    = "KTABLE-FILTER-"
	tableMapValuesName = "KTABLE-MAPVALUES-"
	tableTransformName = "KTABLE-TRANSFORMVALUES-"
	tableSelectName    = "KTABLE-SELECT-"
	tableToStreamName  = "KTABLE-TOSTREAM-"
	tableAggName       = "KTABLE-AGGREGATE-"
	tableReduceName    = "KTABLE-REDUCE-"
	cogroupAggName     = "COGROUPKSTREAM-AGGREGATE-"
	cogroupMergeName   = "COGROUPKSTREAM-MERGE-"
	repartitionSuffix  = "-repartition"
)

// procFunc is the body of a stateless untyped processor.
type procFunc func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error

// funcSupplier makes processors running a procFunc.
type funcSupplier struct{ f procFunc }

func (s funcSupplier) Get() processor.Processor[any, any, any, any] { return &funcProc{f: s.f} }

type funcProc struct {
	ctx processor.ProcessorContext[any, any]
	f   procFunc
}

func (p *funcProc) Init(ctx processor.ProcessorContext[any, any]) error { p.ctx = ctx; return nil }
func (p *funcProc) Process(r processor.Record[any, any]) error          { return p.f(p.ctx, r) }
func (p *funcProc) Close() error                                        { return nil }

// processorNode returns a graph node adding one processor (with optional connected stores and a
// store builder to add). Java: ProcessorGraphNode / StatefulProcessorNode / TableProcessorNode.
func processorNode(name string, sup processor.ProcessorSupplier[any, any, any, any], stores []string, sb func() processor.StoreBuilder) *graphNode {
	return &graphNode{name: name, write: func(t *processor.Topology, parents []string) error {
		if err := t.AddProcessor(name, sup, parents...); err != nil {
			return err
		}
		if len(stores) > 0 {
			if err := t.ConnectProcessorAndStateStores(name, stores...); err != nil {
				return err
			}
		}
		if sb != nil {
			if b := sb(); b != nil {
				return t.AddStateStore(b, name)
			}
		}
		return nil
	}}
}

// sinkOpts returns the sink options for untyped serdes and partitioner (nil = default).
func sinkOpts(keySerde, valueSerde serde.Serde[any], partitioner processor.StreamPartitioner[any, any]) []processor.SinkOption {
	var opts []processor.SinkOption
	if keySerde != nil {
		opts = append(opts, processor.WithKeySerializer[any](keySerde))
	}
	if valueSerde != nil {
		opts = append(opts, processor.WithValueSerializer[any](valueSerde))
	}
	if partitioner != nil {
		opts = append(opts, processor.WithStreamPartitioner[any, any](partitioner))
	}
	return opts
}

// sourceOpts returns the source options for untyped serdes (nil = default).
func sourceOpts(keySerde, valueSerde serde.Serde[any], extractor processor.TimestampExtractor) []processor.SourceOption {
	var opts []processor.SourceOption
	if keySerde != nil {
		opts = append(opts, processor.WithKeyDeserializer[any](keySerde))
	}
	if valueSerde != nil {
		opts = append(opts, processor.WithValueDeserializer[any](valueSerde))
	}
	if extractor != nil {
		opts = append(opts, processor.WithTimestampExtractor(extractor))
	}
	return opts
}

var generatedPrefix = regexp.MustCompile(`^KSTREAM.*-[0-9]{10}$`)

// repartitionSpec is a repartition topic with its sink, pass-all filter and source (Java:
// BaseRepartitionNode and its builders).
type repartitionSpec struct {
	topic, sink, filter, source string
	keySerde, valueSerde        serde.Serde[any]
	partitioner                 processor.StreamPartitioner[any, any]
	partitions                  int32
	// keepNullKeys lets null-key records through the filter. Java 4.4 replaces the pass-all
	// filter of every repartition with "key != null" unless a join that relaxes the null-key
	// requirement (KIP-962: stream-table and stream-globalTable left joins, stream-stream
	// left/outer joins) is downstream (InternalStreamsBuilder.rewriteRepartitionNodes);
	// relaxNullKeyRepartitions sets it at Build.
	keepNullKeys bool
}

// newRepartition names a repartition: three counter values are always used (sink, filter,
// source); when prefix is itself a generated name the generated names are used, otherwise
// "<topic>-sink", "<topic>-filter", "<topic>-source". Java: KStreamImpl.createRepartitionedSource.
func (b *StreamsBuilder) newRepartition(prefix string, keySerde, valueSerde serde.Serde[any], partitioner processor.StreamPartitioner[any, any]) *repartitionSpec {
	topic := prefix
	if len(topic) < len(repartitionSuffix) || topic[len(topic)-len(repartitionSuffix):] != repartitionSuffix {
		topic += repartitionSuffix
	}
	r := &repartitionSpec{topic: topic, keySerde: keySerde, valueSerde: valueSerde, partitioner: partitioner}
	gs, gf, gso := b.newProcessorName(sinkName), b.newProcessorName(filterName), b.newProcessorName(sourceName)
	if generatedPrefix.MatchString(prefix) {
		r.sink, r.filter, r.source = gs, gf, gso
	} else {
		r.sink, r.filter, r.source = topic+"-sink", topic+"-filter", topic+"-source"
		b.checkName(r.source)
	}
	return r
}

// node returns the graph node writing the repartition: internal topic, filter, sink, source.
// Its name (what children attach to) is the source. Java: OptimizableRepartitionNode /
// UnoptimizableRepartitionNode.writeToTopology.
func (r *repartitionSpec) node() *graphNode {
	// Records with a null key are dropped (see keepNullKeys; checked with the dsl-reduce and
	// dsl-repartition vectors against Java).
	pass := funcSupplier{f: func(ctx processor.ProcessorContext[any, any], rec processor.Record[any, any]) error {
		if rec.Key == nil && !r.keepNullKeys {
			return nil
		}
		return ctx.Forward(rec)
	}}
	return &graphNode{name: r.source, optimizable: r, repartition: r, write: func(t *processor.Topology, parents []string) error {
		topology.Of(t).AddInternalTopic(r.topic, topology.InternalTopicProperties{NumberOfPartitions: r.partitions})
		if err := t.AddProcessor(r.filter, processor.ProcessorSupplier[any, any, any, any](pass), parents...); err != nil {
			return err
		}
		if err := t.AddSink(r.sink, r.topic, []string{r.filter}, sinkOpts(r.keySerde, r.valueSerde, r.partitioner)...); err != nil {
			return err
		}
		return t.AddSource(r.source, []string{r.topic}, sourceOpts(r.keySerde, r.valueSerde, processor.FailOnInvalidTimestamp{})...)
	}}
}

// relaxNullKeyRepartitions sets keepNullKeys on every stream repartition with a null-key
// relaxed join anywhere downstream of it (through any path of the graph), and clears it on the
// others, which then drop null-key records. It runs after the optimizer's rewrites, as Java's
// rewriteRepartitionNodes runs last in optimizeTopology (whatever topology.optimization says).
// Java: NodesWithRelaxedNullKeyJoinDownstream.
func (b *StreamsBuilder) relaxNullKeyRepartitions() {
	memo := map[*graphNode]bool{}
	var relaxedBelow func(n *graphNode) bool
	relaxedBelow = func(n *graphNode) bool {
		if v, ok := memo[n]; ok {
			return v
		}
		below := false
		for _, c := range n.children {
			// Every child is visited (no short cut) so the memo covers the whole graph.
			if relaxedBelow(c) || c.nullKeyRelaxedJoin {
				below = true
			}
		}
		memo[n] = below
		return below
	}
	for _, n := range b.nodes {
		if n.repartition != nil && !n.removed {
			n.repartition.keepNullKeys = relaxedBelow(n)
		}
	}
}

// tableRepartitionNode writes a KGroupedTable repartition (no filter): internal topic, sink
// with the Change serde, source. Java: GroupedTableOperationRepartitionNode.
func tableRepartitionNode(topic, sink, source string, keySerde, valueSerde serde.Serde[any]) *graphNode {
	return &graphNode{name: source, write: func(t *processor.Topology, parents []string) error {
		topology.Of(t).AddInternalTopic(topic, topology.InternalTopicProperties{})
		if err := t.AddSink(sink, topic, parents, sinkOpts(keySerde, ktable.ChangeSerde(valueSerde), nil)...); err != nil {
			return err
		}
		return t.AddSource(source, []string{topic}, sourceOpts(keySerde, ktable.ChangeSerde(valueSerde), processor.FailOnInvalidTimestamp{})...)
	}}
}
