package kstreams

// logTopologyWarnings logs each of Topology.Analyze's warnings at WARN when the instance
// starts, so that a user sees them without calling Analyze.
func (k *KafkaStreams) logTopologyWarnings() {
	for _, w := range k.topology.Analyze() {
		k.log.Warn("kstreams: topology warning: "+w.Message, "kind", w.Kind, "node", w.Node)
	}
}
