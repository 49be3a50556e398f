package processor

import (
	"slices"

	"github.com/kstreams-go/kstreams/internal/topology"
)

// TopologyDescription describes a topology: its sub-topologies and its global stores. Its
// String() is byte for byte Java's TopologyDescription.toString(), orderings included.
// Counterpart of Java's org.apache.kafka.streams.TopologyDescription.
type TopologyDescription struct {
	// Subtopologies are the sub-topologies by increasing ID. Java: subtopologies().
	Subtopologies []*SubtopologyDescription
	// GlobalStores are the global stores by increasing ID. Java: globalStores().
	GlobalStores []*GlobalStoreDescription

	d *topology.Description
}

// String formats the description as Java's TopologyDescription.toString(): "Topologies:\n "
// then each sub-topology and global store (interleaved by id), nodes indented by 4 spaces and
// their neighbours by 6, "none" for empty neighbour lists.
func (d *TopologyDescription) String() string { return d.d.String() }

// SubtopologyDescription is one sub-topology: a set of connected nodes that runs as one task
// per input partition. Java: TopologyDescription.Subtopology.
type SubtopologyDescription struct {
	// ID is the sub-topology number (the first part of its task ids). Java: id().
	ID int
	// Nodes are the nodes in Java's order: by decreasing size of the sub-graph below the
	// node, then by name. Java: nodes().
	Nodes []NodeDescription

	d *topology.DescSubtopology
}

// String formats the sub-topology as Java's Subtopology.toString().
func (s *SubtopologyDescription) String() string { return s.d.String() }

// GlobalStoreDescription is one global store with its source and processor. Java:
// TopologyDescription.GlobalStore.
type GlobalStoreDescription struct {
	// ID is the number of the store's node group. Java: id().
	ID int
	// Source is the store's source node. Java: source().
	Source *SourceDescription
	// Processor is the node writing the store. Java: processor().
	Processor *ProcessorDescription

	d *topology.DescGlobalStore
}

// String formats the global store as Java's GlobalStore.toString().
func (g *GlobalStoreDescription) String() string { return g.d.String() }

// NodeDescription is a node of a description: a *SourceDescription, *ProcessorDescription or
// *SinkDescription. Java: TopologyDescription.Node.
type NodeDescription interface {
	// Name returns the node name. Java: name().
	Name() string
	// Predecessors returns the parent nodes in Java's order (empty for sources). Java: predecessors().
	Predecessors() []NodeDescription
	// Successors returns the child nodes in Java's order (empty for sinks). Java: successors().
	Successors() []NodeDescription
	// String formats the node as Java's toString() of the node.
	String() string
}

type nodeBase struct {
	d            *topology.DescNode
	preds, succs []NodeDescription
}

// Name returns the node name. Java: name().
func (n *nodeBase) Name() string { return n.d.Name }

// Predecessors returns the parent nodes in Java's order. Java: predecessors().
func (n *nodeBase) Predecessors() []NodeDescription { return slices.Clone(n.preds) }

// Successors returns the child nodes in Java's order. Java: successors().
func (n *nodeBase) Successors() []NodeDescription { return slices.Clone(n.succs) }

// String formats the node as Java's node toString().
func (n *nodeBase) String() string { return n.d.String() }

// SourceDescription describes a source node. Java: TopologyDescription.Source.
type SourceDescription struct{ nodeBase }

// Topics returns the topics in Java's (HashSet) order, or nil for a pattern source. Java: topicSet().
func (s *SourceDescription) Topics() []string { return slices.Clone(s.d.Topics) }

// TopicPattern returns the pattern text of a pattern source, or "". Java: topicPattern().
func (s *SourceDescription) TopicPattern() string { return s.d.Pattern }

// ProcessorDescription describes a processor node. Java: TopologyDescription.Processor.
type ProcessorDescription struct{ nodeBase }

// Stores returns the names of the connected stores in Java's (HashSet) order. Java: stores().
func (p *ProcessorDescription) Stores() []string { return slices.Clone(p.d.Stores) }

// SinkDescription describes a sink node. Java: TopologyDescription.Sink.
type SinkDescription struct{ nodeBase }

// Topic returns the output topic, or "" for a dynamic sink. Java: topic().
func (s *SinkDescription) Topic() string { return s.d.Topic }

// TopicNameExtractor returns the description of a dynamic sink's extractor, or "". Java:
// topicNameExtractor() (which returns the extractor itself).
func (s *SinkDescription) TopicNameExtractor() string { return s.d.Extractor }

func newDescription(d *topology.Description) *TopologyDescription {
	out := &TopologyDescription{d: d}
	for _, st := range d.Subtopologies {
		wrapped := map[*topology.DescNode]NodeDescription{}
		for _, n := range st.Nodes {
			wrapped[n] = wrapNode(n)
		}
		sd := &SubtopologyDescription{ID: st.ID, d: st}
		for _, n := range st.Nodes {
			w := wrapped[n]
			b := baseOf(w)
			for _, p := range n.Predecessors {
				b.preds = append(b.preds, wrapped[p])
			}
			for _, c := range n.Successors {
				b.succs = append(b.succs, wrapped[c])
			}
			sd.Nodes = append(sd.Nodes, w)
		}
		out.Subtopologies = append(out.Subtopologies, sd)
	}
	for _, g := range d.GlobalStores {
		src := &SourceDescription{nodeBase{d: g.Source}}
		proc := &ProcessorDescription{nodeBase{d: g.Processor}}
		src.succs = []NodeDescription{proc}
		proc.preds = []NodeDescription{src}
		out.GlobalStores = append(out.GlobalStores, &GlobalStoreDescription{ID: g.ID, Source: src, Processor: proc, d: g})
	}
	return out
}

func wrapNode(n *topology.DescNode) NodeDescription {
	switch n.Kind {
	case topology.SourceNode:
		return &SourceDescription{nodeBase{d: n}}
	case topology.ProcessorNode:
		return &ProcessorDescription{nodeBase{d: n}}
	default:
		return &SinkDescription{nodeBase{d: n}}
	}
}

func baseOf(n NodeDescription) *nodeBase {
	switch v := n.(type) {
	case *SourceDescription:
		return &v.nodeBase
	case *ProcessorDescription:
		return &v.nodeBase
	case *SinkDescription:
		return &v.nodeBase
	}
	return nil
}
