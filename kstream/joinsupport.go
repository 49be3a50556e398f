package kstream

import (
	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// This file holds the hooks the join operators build on (see /work/notes/dsl-structure.md).

// repartitionForJoin returns this stream read back through the repartition topic
// "<name>-repartition" (serdes: the overrides, else the stream's), reusing the repartition node
// when the same stream is repartitioned again under its own name. Java:
// KStreamImpl.repartitionForJoin.
func (s *streamImpl) repartitionForJoin(name string, keySerde, valueSerde serde.Serde[any]) *streamImpl {
	if keySerde == nil {
		keySerde = s.keySerde
	}
	if valueSerde == nil {
		valueSerde = s.valueSerde
	}
	rp := s.b.newRepartition(name, keySerde, valueSerde, nil)
	if s.repartitionNode == nil || s.name != name {
		s.repartitionNode = s.b.addNode(rp.node(), s.node)
	}
	return &streamImpl{b: s.b, name: rp.source, node: s.repartitionNode, keySerde: keySerde, valueSerde: valueSerde,
		sourceNodes: []string{rp.source}}
}

// copartition records that the topics read by the given source nodes must be co-partitioned
// (applied to the topology at Build). Java: AbstractStream.ensureCopartitionWith /
// InternalTopologyBuilder.copartitionSources.
func (b *StreamsBuilder) copartition(sourceNodeSets ...[]string) {
	var all []string
	seen := map[string]bool{}
	for _, set := range sourceNodeSets {
		for _, n := range set {
			if !seen[n] {
				seen[n] = true
				all = append(all, n)
			}
		}
	}
	b.copartitions = append(b.copartitions, all)
}

// valueGetterSupplier returns the getter supplier of the table (materializing a source table if
// needed). Java: KTableImpl.valueGetterSupplier.
func (t *tableImpl) valueGetterSupplier() ktable.ValueGetterSupplier { return t.supplier.View() }

// enableSendingOldValues asks the table for old values. Java: KTableImpl.enableSendingOldValues.
func (t *tableImpl) enableSendingOldValues(force bool) bool {
	return t.supplier.EnableSendingOldValues(force)
}

// applyCopartitions writes the recorded co-partition groups into t.
func (b *StreamsBuilder) applyCopartitions(t *processor.Topology) {
	for _, g := range b.copartitions {
		topology.Of(t).CopartitionSources(g...)
	}
}
