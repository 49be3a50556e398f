package processor

// UntypedProcessorSupplier gives the external tests the adapter Topology.AddProcessor stores in
// the graph.
func UntypedProcessorSupplier[KIn, VIn, KOut, VOut any](node string, s ProcessorSupplier[KIn, VIn, KOut, VOut]) ProcessorSupplier[any, any, any, any] {
	return untypedProcessorSupplier(node, s)
}

// UntypedFixedKeyProcessorSupplier gives the external tests the adapter
// Topology.AddFixedKeyProcessor stores in the graph.
func UntypedFixedKeyProcessorSupplier[KIn, VIn, VOut any](node string, s FixedKeyProcessorSupplier[KIn, VIn, VOut]) ProcessorSupplier[any, any, any, any] {
	return untypedFixedKeyProcessorSupplier(node, s)
}
