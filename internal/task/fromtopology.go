package task

import (
	"fmt"
	"slices"

	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// SpecFromTopology builds the Spec of the non-global nodes of the given node groups
// (sub-topology ids; nil means every non-global group, as Java's TopologyTestDriver which runs
// the whole topology in one task). Internal (repartition) topics of sources and sinks are
// decorated with applicationID ("<application.id>-<topic>"), and each store gets its run-time
// changelog topic (a source-topic changelog is marked so that the engine does not write to it).
// Nodes keep the order they were added (Java builds and initialises processors in that
// order); stores are ordered by the first processor (in node order) connected to them, as
// Java's ProcessorTopology.stateStores(). Payloads of the wrong dynamic type yield an error
// wrapping ErrInvalidSpec; a store connected to no processor one wrapping
// topology.ErrUnusedStore.
func SpecFromTopology(b *topology.Builder, applicationID string, groups []int) (Spec, error) {
	if err := b.CheckStoresConnected(); err != nil {
		return Spec{}, err
	}
	include := map[string]bool{}
	for _, g := range b.NodeGroups() {
		if g.Global || (groups != nil && !slices.Contains(groups, g.ID)) {
			continue
		}
		for _, n := range g.Nodes {
			include[n] = true
		}
	}
	var spec Spec
	added := map[string]bool{}
	for _, n := range b.Nodes() {
		if !include[n.Name] {
			continue
		}
		ns, err := nodeSpec(n)
		if err != nil {
			return Spec{}, err
		}
		decorate(b, applicationID, &ns)
		for _, c := range n.Children {
			if include[c] {
				ns.Children = append(ns.Children, c)
			}
		}
		spec.Nodes = append(spec.Nodes, ns)
		for _, s := range n.Stores {
			st := b.Store(s)
			if st == nil || st.Global || added[s] {
				continue
			}
			sb, ok := st.Builder.(processor.StoreBuilder)
			if !ok {
				return Spec{}, fmt.Errorf("%w: store %q: builder %T is not a processor.StoreBuilder", ErrInvalidSpec, s, st.Builder)
			}
			added[s] = true
			spec.Stores = append(spec.Stores, StoreSpec{Builder: sb, ChangelogTopic: b.ChangelogTopic(applicationID, s),
				ChangelogIsSource: st.SourceTopic != ""})
		}
	}
	return spec, nil
}

// GlobalSpec builds the Spec of the global store groups: their sources, processors and stores
// (a global store never writes a changelog: its source topic is its changelog).
func GlobalSpec(b *topology.Builder, applicationID string) (Spec, error) {
	var spec Spec
	for _, g := range b.NodeGroups() {
		if !g.Global {
			continue
		}
		for _, name := range g.Nodes {
			n := b.Node(name)
			ns, err := nodeSpec(n)
			if err != nil {
				return Spec{}, err
			}
			decorate(b, applicationID, &ns)
			ns.Children = slices.Clone(n.Children)
			spec.Nodes = append(spec.Nodes, ns)
			for _, s := range n.Stores {
				st := b.Store(s)
				if st == nil {
					continue
				}
				sb, ok := st.Builder.(processor.StoreBuilder)
				if !ok {
					return Spec{}, fmt.Errorf("%w: store %q: builder %T is not a processor.StoreBuilder", ErrInvalidSpec, s, st.Builder)
				}
				spec.Stores = append(spec.Stores, StoreSpec{Builder: sb, ChangelogTopic: st.SourceTopic, ChangelogIsSource: true})
			}
		}
	}
	return spec, nil
}

// decorate replaces internal topic names by their run-time names.
func decorate(b *topology.Builder, applicationID string, ns *NodeSpec) {
	for i, t := range ns.Topics {
		ns.Topics[i] = b.DecorateTopic(applicationID, t)
	}
	if ns.Topic != "" {
		ns.Topic = b.DecorateTopic(applicationID, ns.Topic)
	}
}

func as[T any](node, what string, v any) (T, error) {
	var zero T
	if v == nil {
		return zero, nil
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%w: node %q: %s has type %T", ErrInvalidSpec, node, what, v)
	}
	return t, nil
}

func nodeSpec(n *topology.Node) (NodeSpec, error) {
	ns := NodeSpec{Name: n.Name, Stores: slices.Clone(n.Stores)}
	var err error
	switch n.Kind {
	case topology.SourceNode:
		ns.Kind = SourceNode
		ns.Topics = slices.Clone(n.Topics)
		ns.Pattern = n.Pattern
		if ns.KeyDeserializer, err = as[serde.Deserializer[any]](n.Name, "key deserializer", n.KeyDeserializer); err != nil {
			return ns, err
		}
		if ns.ValueDeserializer, err = as[serde.Deserializer[any]](n.Name, "value deserializer", n.ValueDeserializer); err != nil {
			return ns, err
		}
		if ns.TimestampExtractor, err = as[processor.TimestampExtractor](n.Name, "timestamp extractor", n.TimestampExtractor); err != nil {
			return ns, err
		}
	case topology.ProcessorNode:
		ns.Kind = ProcessorNode
		sup, err := as[processor.ProcessorSupplier[any, any, any, any]](n.Name, "processor supplier", n.Supplier)
		if err != nil {
			return ns, err
		}
		if sup == nil {
			return ns, fmt.Errorf("%w: node %q has no processor supplier", ErrInvalidSpec, n.Name)
		}
		ns.NewProcessor = func() (UntypedProcessor, error) {
			p := sup.Get()
			if p == nil {
				return nil, fmt.Errorf("node %q: processor supplier returned nil", n.Name)
			}
			return p, nil
		}
	case topology.SinkNode:
		ns.Kind = SinkNode
		ns.Topic = n.Topic
		if ns.TopicExtractor, err = as[processor.TopicNameExtractor[any, any]](n.Name, "topic extractor", n.TopicExtractor); err != nil {
			return ns, err
		}
		if ns.KeySerializer, err = as[serde.Serializer[any]](n.Name, "key serializer", n.KeySerializer); err != nil {
			return ns, err
		}
		if ns.ValueSerializer, err = as[serde.Serializer[any]](n.Name, "value serializer", n.ValueSerializer); err != nil {
			return ns, err
		}
		if ns.Partitioner, err = as[processor.StreamPartitioner[any, any]](n.Name, "partitioner", n.Partitioner); err != nil {
			return ns, err
		}
	}
	return ns, nil
}
