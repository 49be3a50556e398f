package processor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kstreams-go/kstreams/internal/topology"
)

// TopologyWarning is a suspect construct in a topology that builds and runs but likely does
// not do what was meant; [Topology.Analyze] lists them. No Java counterpart (Java finds none of
// these before running).
type TopologyWarning struct {
	// Kind is a stable identifier: WarningNoGrace, WarningSinkIsSource,
	// WarningStoreNotWritten or WarningNotCopartitioned.
	Kind string
	// Node is the processor, sink or store concerned.
	Node string
	// Message says what is suspect and what to do.
	Message string
}

// String returns "<Kind> at <Node>: <Message>".
func (w TopologyWarning) String() string { return w.Kind + " at " + w.Node + ": " + w.Message }

// The kinds of topology warnings.
const (
	// WarningNoGrace: a windowed aggregation (time, sliding or session windows) has a grace
	// period of 0, so a window closes the moment stream time passes its end and any record
	// that arrives out of order by even 1 ms is dropped (counted as dropped-records, sent to
	// the late-record topic if there is one). Found by the DSL.
	WarningNoGrace = "no-grace"
	// WarningSinkIsSource: a sink writes to a topic a source of the same topology reads, so
	// the application reads its own output back through a topic it does not manage (neither
	// an internal repartition topic nor a changelog): records loop, and the topic's partition
	// count and retention are the user's to keep right. Use Repartition for a re-keying step.
	WarningSinkIsSource = "sink-is-source"
	// WarningStoreNotWritten: every processor connected to a (non-global) state store only
	// reads it (the DSL's join lookups, or a supplier's [ReadOnlyStoreProvider]), so nothing
	// ever puts a record into it and every lookup finds nothing. Connect the processor that
	// fills it, or fill it from a topic (AddReadOnlyStateStore, a global store, a table).
	WarningStoreNotWritten = "store-not-written"
	// WarningNotCopartitioned: a join reads two or more different user topics directly (no
	// repartition topic between them and the join), so the topology cannot make them
	// co-partitioned: they must have the same partition count (else the application fails at
	// start: Java's TopologyException "Topics not co-partitioned") and be partitioned the same
	// way by the join key (else records that should meet land in different tasks and the join
	// silently misses them). Repartition topics of the join are sized by the assignor, so a
	// side read through one is fine.
	WarningNotCopartitioned = "not-copartitioned"
)

// Analyze returns the suspect constructs of the topology, in the order found: those the DSL
// recorded while building (WarningNoGrace), then the graph's: WarningSinkIsSource (by sink in
// the order added), WarningStoreNotWritten (by store in the order added) and
// WarningNotCopartitioned (by join in the order built). An empty result means nothing was
// found, not that the topology is right. It does not change the topology.
func (t *Topology) Analyze() []TopologyWarning {
	var out []TopologyWarning
	for _, w := range t.b.Warnings() {
		out = append(out, TopologyWarning(w))
	}
	sources := map[string]string{}
	for _, n := range t.b.Nodes() {
		if n.Kind == topology.SourceNode && !t.b.IsGlobalSource(n.Name) {
			for _, topic := range n.Topics {
				if _, ok := sources[topic]; !ok {
					sources[topic] = n.Name
				}
			}
		}
	}
	for _, n := range t.b.Nodes() {
		if n.Kind != topology.SinkNode || n.Topic == "" {
			continue
		}
		if _, internal := t.b.InternalTopic(n.Topic); internal {
			continue
		}
		if src, ok := sources[n.Topic]; ok {
			out = append(out, TopologyWarning{Kind: WarningSinkIsSource, Node: n.Name,
				Message: fmt.Sprintf("sink %s writes topic %q, which source %s of the same topology reads: the application "+
					"reads its own output back through a topic it does not manage; for a re-keying step use Repartition "+
					"(an internal repartition topic)", n.Name, n.Topic, src)})
		}
	}
	out = append(out, t.unwrittenStores()...)
	out = append(out, t.uncopartitionedJoins()...)
	return slices.Clip(out)
}

// unwrittenStores returns a WarningStoreNotWritten for each non-global store whose connected
// processors all only read it.
func (t *Topology) unwrittenStores() []TopologyWarning {
	var out []TopologyWarning
	for _, st := range t.b.Stores() {
		if st.Global || len(st.Processors) == 0 {
			continue // global stores are written by their own processor; unconnected ones fail Build
		}
		name := st.Builder.Name()
		if slices.ContainsFunc(st.Processors, func(p string) bool { return !t.b.ReadsOnly(p, name) }) {
			continue
		}
		out = append(out, TopologyWarning{Kind: WarningStoreNotWritten, Node: name,
			Message: fmt.Sprintf("state store %s is connected only to processors that read it (%s): no processor writes it, so "+
				"every lookup finds nothing; connect the processor that fills it (AddStateStore or ConnectProcessorAndStateStores), "+
				"or fill it from a topic (AddReadOnlyStateStore, a global store or a table)", name, strings.Join(st.Processors, ", "))})
	}
	return out
}

// uncopartitionedJoins returns a WarningNotCopartitioned for each recorded co-partition group
// (a join) whose sources read two or more different user topics (repartition topics apart: the
// assignor gives them the partition count of the others).
func (t *Topology) uncopartitionedJoins() []TopologyWarning {
	var out []TopologyWarning
	seen := map[string]bool{}
	for _, g := range t.b.CopartitionSourceGroups() {
		var topics, sources []string
		for _, s := range g.Sources {
			n := t.b.Node(s)
			if n == nil {
				continue
			}
			for _, topic := range n.Topics {
				if _, internal := t.b.InternalTopic(topic); internal || slices.Contains(topics, topic) {
					continue
				}
				topics = append(topics, topic)
				if !slices.Contains(sources, s) {
					sources = append(sources, s)
				}
			}
		}
		if len(topics) < 2 {
			continue
		}
		key := strings.Join(topics, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		node := g.Join
		if node == "" {
			node = sources[0]
		}
		quoted := make([]string, len(topics))
		for i, tp := range topics {
			quoted[i] = fmt.Sprintf("%q", tp)
		}
		out = append(out, TopologyWarning{Kind: WarningNotCopartitioned, Node: node,
			Message: fmt.Sprintf("join %s reads topics %s directly (sources %s), which nothing in the topology co-partitions: "+
				"they must have the same number of partitions (else the application fails at start) and be partitioned by the "+
				"join key with the same partitioner (else records that should join land in different tasks and are missed); "+
				"if they may not be, Repartition one side before the join", node, strings.Join(quoted, ", "), strings.Join(sources, ", "))})
	}
	return out
}
