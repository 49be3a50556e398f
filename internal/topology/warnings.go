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

// MarkStoreReaders records that processor only reads stores (Get, Range, ...), never writes
// them: the DSL's join lookups through a table's value getter, or a processor supplier's
// processor.ReadOnlyStoreProvider. The marks may come before or after the connections.
// Topology.Analyze finds the stores that only such connections reach.
func (b *Builder) MarkStoreReaders(processor string, stores ...string) {
	if b.readOnly == nil {
		b.readOnly = map[string]map[string]bool{}
	}
	if b.readOnly[processor] == nil {
		b.readOnly[processor] = map[string]bool{}
	}
	for _, s := range stores {
		b.readOnly[processor][s] = true
	}
}

// ReadsOnly reports whether processor's connection to store was marked read-only
// (MarkStoreReaders).
func (b *Builder) ReadsOnly(processor, store string) bool { return b.readOnly[processor][store] }
