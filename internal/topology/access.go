package topology

// Of returns the graph inside a *processor.Topology (Java: Topology.internalTopologyBuilder), and
// Wrap wraps a graph the DSL built into a *processor.Topology (returned as any: this package
// cannot import processor). Package processor sets both when it is initialised, so the DSL, the
// runtime and the test driver reach the graph without processor exporting it to applications.
var (
	Of   func(t any) *Builder
	Wrap func(b *Builder) any
)
