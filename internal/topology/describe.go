package topology

import (
	"strconv"
	"strings"
)

// DescNode is one node of a [Description], with its sets in the order Java prints them.
type DescNode struct {
	// Name is the node name.
	Name string
	// Kind is the node kind.
	Kind NodeKind
	// Topics are a source's topics in Java's HashSet order (nil for a pattern source).
	Topics []string
	// Pattern is a pattern source's pattern text (empty otherwise).
	Pattern string
	// Stores are a processor's connected stores in Java's HashSet order.
	Stores []string
	// Topic is a sink's static topic (empty for a dynamic sink).
	Topic string
	// Extractor is a dynamic sink's extractor text.
	Extractor string

	size         int
	preds, succs *treeSet[*DescNode]
	// Predecessors and Successors are the neighbour nodes in Java's order (TreeSets ordered
	// by sub-tree size, then name).
	Predecessors, Successors []*DescNode
}

// DescSubtopology is one sub-topology of a [Description].
type DescSubtopology struct {
	// ID is the sub-topology number.
	ID int
	// Nodes are the nodes by decreasing sub-tree size, then by name (Java's NodeComparator).
	Nodes []*DescNode
}

// DescGlobalStore is one global store of a [Description].
type DescGlobalStore struct {
	// ID is the number of the store's node group.
	ID int
	// Source and Processor are the store's source and processor nodes.
	Source, Processor *DescNode
}

// Description is the data of Java's TopologyDescription, ordered as Java orders it.
type Description struct {
	// Subtopologies by increasing ID.
	Subtopologies []*DescSubtopology
	// GlobalStores by increasing ID.
	GlobalStores []*DescGlobalStore
}

func nodeCompare(a, b *DescNode) int {
	if a == b {
		return 0
	}
	if a.size != b.size {
		return b.size - a.size
	}
	return compareJavaStrings(a.Name, b.Name)
}

func (b *Builder) describeNode(n *Node) *DescNode {
	d := &DescNode{Name: n.Name, Kind: n.Kind, size: 1, preds: newTreeSet(nodeCompare), succs: newTreeSet(nodeCompare)}
	switch n.Kind {
	case SourceNode:
		if n.Pattern != nil {
			d.Pattern = n.PatternText
		} else {
			d.Topics = copyHashOrder(n.Topics)
		}
	case ProcessorNode:
		d.Stores = copyHashOrder(seqHashOrder(n.Stores))
	case SinkNode:
		d.Topic, d.Extractor = n.Topic, n.ExtractorText
	}
	return d
}

func growSize(d *DescNode, delta int) {
	d.size += delta
	for _, p := range d.preds.items() {
		growSize(p, delta)
	}
}

// Describe returns the topology description, computed as Java's
// InternalTopologyBuilder.describe(): one entry per node group, global store groups apart.
func (b *Builder) Describe() *Description {
	desc := &Description{}
	for _, g := range b.NodeGroups() {
		// Java walks the group's nodes in HashSet order (a HashSet filled in node order).
		names := seqHashOrder(g.Nodes)
		if g.Global {
			desc.GlobalStores = append(desc.GlobalStores, b.describeGlobal(g.ID, names))
			continue
		}
		byName := map[string]*DescNode{}
		for _, nm := range names {
			byName[nm] = b.describeNode(b.byName[nm])
		}
		for _, nm := range names {
			d := byName[nm]
			for _, pn := range b.byName[nm].Parents {
				p := byName[pn]
				d.preds.add(p)
				p.succs.add(d)
				growSize(p, d.size)
			}
		}
		all := newTreeSet(nodeCompare)
		for _, nm := range names {
			d := byName[nm]
			d.Predecessors, d.Successors = d.preds.items(), d.succs.items()
			all.add(d)
		}
		desc.Subtopologies = append(desc.Subtopologies, &DescSubtopology{ID: g.ID, Nodes: all.items()})
	}
	return desc
}

func (b *Builder) describeGlobal(id int, names []string) *DescGlobalStore {
	var src, proc string
	for _, nm := range names {
		if src == "" && b.IsGlobalSource(nm) {
			src = nm
		} else if proc == "" {
			proc = nm
		}
		if src != "" && proc != "" {
			break
		}
	}
	pn := b.byName[proc]
	store := ""
	if st := seqHashOrder(pn.Stores); len(st) > 0 {
		store = st[0]
	}
	s := &DescNode{Name: src, Kind: SourceNode, Topics: []string{b.byName[src].Topics[0]}, size: 1}
	p := &DescNode{Name: proc, Kind: ProcessorNode, Stores: []string{store}, size: 1}
	s.Successors = []*DescNode{p}
	p.Predecessors = []*DescNode{s}
	return &DescGlobalStore{ID: id, Source: s, Processor: p}
}

func nodeNames(ns []*DescNode) string {
	if len(ns) == 0 {
		return "none"
	}
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = n.Name
	}
	return strings.Join(names, ", ")
}

// String formats the node as Java's TopologyDescription.Node toString() (without the
// leading indentation and trailing newline the enclosing sub-topology adds).
func (d *DescNode) String() string {
	switch d.Kind {
	case SourceNode:
		topics := d.Pattern
		if d.Topics != nil {
			topics = "[" + strings.Join(d.Topics, ", ") + "]"
		}
		return "Source: " + d.Name + " (topics: " + topics + ")\n      --> " + nodeNames(d.Successors)
	case ProcessorNode:
		return "Processor: " + d.Name + " (stores: [" + strings.Join(d.Stores, ", ") + "])\n      --> " +
			nodeNames(d.Successors) + "\n      <-- " + nodeNames(d.Predecessors)
	default:
		if d.Topic != "" {
			return "Sink: " + d.Name + " (topic: " + d.Topic + ")\n      <-- " + nodeNames(d.Predecessors)
		}
		return "Sink: " + d.Name + " (extractor class: " + d.Extractor + ")\n      <-- " + nodeNames(d.Predecessors)
	}
}

// String formats the sub-topology as Java's SubtopologyDescription.toString().
func (s *DescSubtopology) String() string {
	var sb strings.Builder
	sb.WriteString("Sub-topology: " + strconv.Itoa(s.ID) + "\n")
	for _, n := range s.Nodes {
		sb.WriteString("    " + n.String() + "\n")
	}
	sb.WriteString("\n")
	return sb.String()
}

// String formats the global store as Java's GlobalStore.toString().
func (g *DescGlobalStore) String() string {
	return "Sub-topology: " + strconv.Itoa(g.ID) + " for global store (will not generate tasks)\n" +
		"    " + g.Source.String() + "\n" +
		"    " + g.Processor.String() + "\n"
}

// String formats the description byte for byte as Java's TopologyDescription.toString():
// sub-topologies and global stores interleaved by id (with Java's quirk of taking the next
// global store whenever the next sub-topology's id is not the expected one).
func (d *Description) String() string {
	var sb strings.Builder
	sb.WriteString("Topologies:\n ")
	si, gi, expected := 0, 0, 0
	for si < len(d.Subtopologies) && gi < len(d.GlobalStores) {
		sb.WriteString("  ")
		if d.Subtopologies[si].ID == expected {
			sb.WriteString(d.Subtopologies[si].String())
			si++
		} else {
			sb.WriteString(d.GlobalStores[gi].String())
			gi++
		}
		expected++
	}
	for ; si < len(d.Subtopologies); si++ {
		sb.WriteString("  " + d.Subtopologies[si].String())
	}
	for ; gi < len(d.GlobalStores); gi++ {
		sb.WriteString("  " + d.GlobalStores[gi].String())
	}
	return sb.String()
}
