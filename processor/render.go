package processor

import (
	"fmt"
	"strings"
)

// Rendering of a TopologyDescription as a picture. Java has no counterpart (its
// describe() is text only; people paste it into third-party visualizers); these render the
// same facts the text has: sub-topologies, global stores, nodes and their edges, the topics
// sources read and sinks write, and the stores processors use.

// renderGraph is the description flattened into what both formats draw.
type renderGraph struct {
	groups []renderGroup
	topics []renderItem // topics and patterns, in order of first appearance
	stores []renderItem // stores, in order of first appearance
	edges  []renderEdge
}

type renderGroup struct {
	title string
	nodes []renderItem
}

type renderItem struct {
	id, label string
	kind      string // "source", "processor", "sink", "topic", "pattern", "store"
}

type renderEdge struct {
	from, to string
	store    bool // a processor-store connection (drawn undirected and dashed)
}

func (d *TopologyDescription) graph() *renderGraph {
	g := &renderGraph{}
	nodeIDs := map[string]string{}
	topicIDs := map[string]string{}
	storeIDs := map[string]string{}
	topic := func(name, kind string) string {
		key := kind + ":" + name
		if id, ok := topicIDs[key]; ok {
			return id
		}
		id := fmt.Sprintf("t%d", len(g.topics))
		topicIDs[key] = id
		g.topics = append(g.topics, renderItem{id: id, label: name, kind: kind})
		return id
	}
	storeID := func(name string) string {
		if id, ok := storeIDs[name]; ok {
			return id
		}
		id := fmt.Sprintf("s%d", len(g.stores))
		storeIDs[name] = id
		g.stores = append(g.stores, renderItem{id: id, label: name, kind: "store"})
		return id
	}
	nodeID := func(scope, name string) string {
		key := scope + "\x00" + name
		if id, ok := nodeIDs[key]; ok {
			return id
		}
		id := fmt.Sprintf("n%d", len(nodeIDs))
		nodeIDs[key] = id
		return id
	}
	addNode := func(grp *renderGroup, scope string, n NodeDescription) {
		id := nodeID(scope, n.Name())
		switch v := n.(type) {
		case *SourceDescription:
			grp.nodes = append(grp.nodes, renderItem{id: id, label: v.Name(), kind: "source"})
			if p := v.TopicPattern(); p != "" {
				g.edges = append(g.edges, renderEdge{from: topic(p, "pattern"), to: id})
			}
			for _, tp := range v.Topics() {
				g.edges = append(g.edges, renderEdge{from: topic(tp, "topic"), to: id})
			}
		case *ProcessorDescription:
			grp.nodes = append(grp.nodes, renderItem{id: id, label: v.Name(), kind: "processor"})
			for _, s := range v.Stores() {
				g.edges = append(g.edges, renderEdge{from: id, to: storeID(s), store: true})
			}
		case *SinkDescription:
			grp.nodes = append(grp.nodes, renderItem{id: id, label: v.Name(), kind: "sink"})
			if tp := v.Topic(); tp != "" {
				g.edges = append(g.edges, renderEdge{from: id, to: topic(tp, "topic")})
			} else {
				g.edges = append(g.edges, renderEdge{from: id, to: topic(v.TopicNameExtractor(), "extractor")})
			}
		}
		for _, c := range n.Successors() {
			g.edges = append(g.edges, renderEdge{from: id, to: nodeID(scope, c.Name())})
		}
	}
	for _, st := range d.Subtopologies {
		grp := renderGroup{title: fmt.Sprintf("Sub-topology: %d", st.ID)}
		scope := fmt.Sprintf("sub%d", st.ID)
		for _, n := range st.Nodes {
			addNode(&grp, scope, n)
		}
		g.groups = append(g.groups, grp)
	}
	for _, gs := range d.GlobalStores {
		grp := renderGroup{title: fmt.Sprintf("Global store: %d", gs.ID)}
		scope := fmt.Sprintf("global%d", gs.ID)
		addNode(&grp, scope, gs.Source)
		addNode(&grp, scope, gs.Processor)
		g.groups = append(g.groups, grp)
	}
	return g
}

// mermaidText escapes a label for a double-quoted Mermaid label.
func mermaidText(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "\n", " ")
	return `"` + r.Replace(s) + `"`
}

func mermaidShape(it renderItem) string {
	l := mermaidText(it.label)
	switch it.kind {
	case "source", "sink":
		return it.id + "([" + l + "])" // stadium
	case "topic":
		return it.id + "[/" + l + "/]" // parallelogram
	case "pattern":
		return it.id + "[/" + mermaidText("pattern: "+it.label) + "/]"
	case "extractor":
		return it.id + "[/" + mermaidText("topic from: "+it.label) + "/]"
	case "store":
		return it.id + "[(" + l + ")]" // cylinder
	}
	return it.id + "[" + l + "]"
}

// Mermaid renders the description as a Mermaid flowchart (https://mermaid.js.org), top to
// bottom: one subgraph per sub-topology ("Sub-topology: <id>") and per global store ("Global
// store: <id>") holding its nodes (sources and sinks as stadiums, processors as rectangles);
// topics (parallelograms; "pattern: <regex>" for pattern sources, "topic from: <extractor>" for
// dynamic sinks) and stores (cylinders) outside them; solid arrows for topic -> source, node ->
// child and sink -> topic, dotted lines between a processor and its stores. A topic written
// by one sub-topology and read by another (a repartition topic) is drawn once, linking the two.
// Node ids are generated (n0, t0, s0, ... in description order), so the text is
// deterministic for a given description. The result ends with a newline and can be pasted
// into a ```mermaid block of a Markdown file. Java has no counterpart.
func (d *TopologyDescription) Mermaid() string {
	g := d.graph()
	var b strings.Builder
	b.WriteString("flowchart TB\n")
	for i, grp := range g.groups {
		fmt.Fprintf(&b, "  subgraph g%d[%s]\n", i, mermaidText(grp.title))
		for _, n := range grp.nodes {
			b.WriteString("    " + mermaidShape(n) + "\n")
		}
		b.WriteString("  end\n")
	}
	for _, t := range g.topics {
		b.WriteString("  " + mermaidShape(t) + "\n")
	}
	for _, s := range g.stores {
		b.WriteString("  " + mermaidShape(s) + "\n")
	}
	for _, e := range g.edges {
		arrow := " --> "
		if e.store {
			arrow = " -.- "
		}
		b.WriteString("  " + e.from + arrow + e.to + "\n")
	}
	return b.String()
}

// dotText quotes a string for Graphviz DOT.
func dotText(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func dotNode(it renderItem) string {
	label, shape := it.label, "box"
	switch it.kind {
	case "source", "sink":
		shape = "box, style=rounded"
	case "topic":
		shape = "parallelogram"
	case "pattern":
		label, shape = "pattern: "+it.label, "parallelogram"
	case "extractor":
		label, shape = "topic from: "+it.label, "parallelogram"
	case "store":
		shape = "cylinder"
	}
	return fmt.Sprintf("%s [label=%s, shape=%s];", it.id, dotText(label), shape)
}

// DOT renders the description as a Graphviz DOT digraph named "topology"
// (https://graphviz.org; render with `dot -Tsvg`): the same picture as [TopologyDescription.Mermaid], one
// cluster per sub-topology and global store, topics as parallelograms, stores as cylinders,
// processor-store connections as dashed lines without arrowheads. The result ends with a
// newline. Java has no counterpart.
func (d *TopologyDescription) DOT() string {
	g := d.graph()
	var b strings.Builder
	b.WriteString("digraph topology {\n  rankdir=TB;\n")
	for i, grp := range g.groups {
		fmt.Fprintf(&b, "  subgraph cluster_%d {\n    label=%s;\n", i, dotText(grp.title))
		for _, n := range grp.nodes {
			b.WriteString("    " + dotNode(n) + "\n")
		}
		b.WriteString("  }\n")
	}
	for _, t := range g.topics {
		b.WriteString("  " + dotNode(t) + "\n")
	}
	for _, s := range g.stores {
		b.WriteString("  " + dotNode(s) + "\n")
	}
	for _, e := range g.edges {
		attr := ""
		if e.store {
			attr = " [style=dashed, arrowhead=none]"
		}
		b.WriteString("  " + e.from + " -> " + e.to + attr + ";\n")
	}
	b.WriteString("}\n")
	return b.String()
}
