package processor

import (
	"fmt"
	"slices"

	"github.com/kstreams-go/kstreams/internal/topology"
)

// TopologyWarning is a suspect construct in a topology that builds and runs but likely does
// not do what was meant; [Topology.Analyze] lists them. No Java counterpart (Java finds none of
// these before running).
type TopologyWarning struct {
	// Kind is a stable identifier: WarningNoGrace or WarningSinkIsSource.
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
)

// Analyze returns the suspect constructs of the topology, in the order found: those the DSL
// recorded while building (WarningNoGrace), then the graph's (WarningSinkIsSource, by sink
// in the order added). An empty result means nothing was found, not that the topology is
// right. It does not change the topology.
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
	return slices.Clip(out)
}
