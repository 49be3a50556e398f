package processor

// Processor processes records of one node of a topology: it receives each input record in
// Process and may forward any number of records (of other key and value types) to its
// children through the context it got in Init. It is the counterpart of Java's
// org.apache.kafka.streams.processor.api.Processor<KIn, VIn, KOut, VOut>.
//
// Lifecycle (as in Java): the engine obtains a new Processor from the node's
// [ProcessorSupplier] for every task, calls Init once before any record, then Process for
// every record routed to the node (and the punctuators the processor scheduled), and Close
// once when the task is closed. A processor instance is only used by one goroutine at a time.
//
// Errors: a non-nil error returned from Init, Process or Close is a processing failure; the
// engine wraps it with the node name and task and hands it to the processing exception
// handler (Java: an exception thrown from the same method).
type Processor[KIn, VIn, KOut, VOut any] interface {
	// Init is called once before processing starts; ctx stays valid until Close returns and
	// is where the processor gets its state stores and schedules punctuations.
	// Java: Processor.init(ProcessorContext) (a default no-op there).
	Init(ctx ProcessorContext[KOut, VOut]) error
	// Process processes one record. Java: Processor.process(Record).
	Process(record Record[KIn, VIn]) error
	// Close releases resources; it must not close state stores (the engine does).
	// Java: Processor.close() (a default no-op there).
	Close() error
}

// FixedKeyProcessor is a processor that cannot change the key of the records it forwards
// (so no repartitioning is needed downstream). It is the counterpart of Java's
// org.apache.kafka.streams.processor.api.FixedKeyProcessor<KIn, VIn, VOut>; lifecycle and
// errors as for [Processor].
type FixedKeyProcessor[KIn, VIn, VOut any] interface {
	// Init is called once before processing starts. Java: FixedKeyProcessor.init.
	Init(ctx FixedKeyProcessorContext[KIn, VOut]) error
	// Process processes one record. Java: FixedKeyProcessor.process(FixedKeyRecord).
	Process(record FixedKeyRecord[KIn, VIn]) error
	// Close releases resources. Java: FixedKeyProcessor.close().
	Close() error
}

// ProcessorSupplier creates a new [Processor] for each task that runs the node. Get must
// return a new instance on every call (Java checks this too: returning the same instance
// twice is a [*TopologyError]). It is the counterpart of Java's
// org.apache.kafka.streams.processor.api.ProcessorSupplier<KIn, VIn, KOut, VOut>.
//
// A supplier that also implements [ConnectedStoreProvider] brings its own state stores:
// Topology.AddProcessor adds them and connects them to the node (Java: ConnectedStoreProvider).
type ProcessorSupplier[KIn, VIn, KOut, VOut any] interface {
	// Get returns a new processor instance. Java: ProcessorSupplier.get().
	Get() Processor[KIn, VIn, KOut, VOut]
}

// ProcessorSupplierFunc adapts a function to a [ProcessorSupplier]; the function must return
// a new processor on every call. [NewSupplier] makes one without writing the type parameters
// twice. Java: a lambda `() -> new MyProcessor()`.
type ProcessorSupplierFunc[KIn, VIn, KOut, VOut any] func() Processor[KIn, VIn, KOut, VOut]

// Get calls f.
func (f ProcessorSupplierFunc[KIn, VIn, KOut, VOut]) Get() Processor[KIn, VIn, KOut, VOut] {
	return f()
}

// NewSupplier returns f as a [ProcessorSupplier]; the type parameters come from f's type, so
// they are written once:
//
//	topo.AddProcessor("upper", processor.NewSupplier(func() processor.Processor[string, string, string, string] {
//		return &upper{}
//	}), "source")
//
// f must return a new processor on every call. Java: a lambda `() -> new MyProcessor()`.
func NewSupplier[KIn, VIn, KOut, VOut any](f func() Processor[KIn, VIn, KOut, VOut]) ProcessorSupplierFunc[KIn, VIn, KOut, VOut] {
	return f
}

// NewFixedKeySupplier returns f as a [FixedKeyProcessorSupplier], its type parameters taken
// from f's type, as [NewSupplier].
func NewFixedKeySupplier[KIn, VIn, VOut any](f func() FixedKeyProcessor[KIn, VIn, VOut]) FixedKeyProcessorSupplierFunc[KIn, VIn, VOut] {
	return f
}

// FixedKeyProcessorSupplier creates a new [FixedKeyProcessor] for each task, as
// [ProcessorSupplier] does. Java: org.apache.kafka.streams.processor.api.FixedKeyProcessorSupplier.
type FixedKeyProcessorSupplier[KIn, VIn, VOut any] interface {
	// Get returns a new processor instance. Java: FixedKeyProcessorSupplier.get().
	Get() FixedKeyProcessor[KIn, VIn, VOut]
}

// FixedKeyProcessorSupplierFunc adapts a function to a [FixedKeyProcessorSupplier].
type FixedKeyProcessorSupplierFunc[KIn, VIn, VOut any] func() FixedKeyProcessor[KIn, VIn, VOut]

// Get calls f.
func (f FixedKeyProcessorSupplierFunc[KIn, VIn, VOut]) Get() FixedKeyProcessor[KIn, VIn, VOut] {
	return f()
}

// ConnectedStoreProvider is implemented by suppliers that bring the state stores their
// processors use. Topology.AddProcessor adds every returned builder (unless a builder of the
// same name and identity is already added) and connects it to the new node. Java counterpart:
// org.apache.kafka.streams.processor.ConnectedStoreProvider.stores() (default: none).
type ConnectedStoreProvider interface {
	// Stores returns the store builders to add and connect; nil or empty for none.
	Stores() []StoreBuilder
}

// ReadOnlyStoreProvider is implemented by suppliers whose processors only read some of the
// stores connected to them (lookups: Get, Range, All), never write them. Topology.AddProcessor
// and AddFixedKeyProcessor record them, and [Topology.Analyze] reports a store that only such
// readers reach ([WarningStoreNotWritten]): every lookup would find nothing. Without it, a
// processor connected to a store counts as writing it. The DSL marks its own lookups (the
// stream-table and table-table joins' reads of the other side's table). No Java counterpart.
type ReadOnlyStoreProvider interface {
	// ReadOnlyStores returns the names of the connected stores the processors only read.
	ReadOnlyStores() []string
}
