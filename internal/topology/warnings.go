package topology

// Warning is a suspect construct found in a topology that still builds and runs: a
// processor.Topology's Analyze reports them. Kind is a short stable identifier, Node the node
// (or store) concerned, Message what is suspect and what to do.
type Warning struct {
	Kind    string
	Node    string
	Message string
}

// AddWarning records a warning found while building (by the DSL, which knows more than the
// graph: window grace periods, for one).
func (b *Builder) AddWarning(w Warning) { b.warnings = append(b.warnings, w) }

// Warnings returns the warnings recorded while building, in order.
func (b *Builder) Warnings() []Warning { return append([]Warning(nil), b.warnings...) }
