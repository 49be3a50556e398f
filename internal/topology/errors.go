package topology

import (
	"errors"
	"fmt"
)

// ErrInvalidTopology is wrapped by every error the builder returns: the topology was not
// changed by the failing call. It is the counterpart of Java's
// org.apache.kafka.streams.errors.TopologyException.
var ErrInvalidTopology = errors.New("invalid topology")

// Sentinel errors for each situation in which Java's InternalTopologyBuilder throws. The
// errors this package returns are made by [NewError] with one of them as their kind.
var (
	// ErrNilArgument: a required argument (supplier, store builder, extractor, serde for a
	// typed node) is nil. Java: NullPointerException from Objects.requireNonNull.
	ErrNilArgument = errors.New("required argument is nil")
	// ErrNoTopics: a source was given no topic (and no pattern).
	ErrNoTopics = errors.New("a source needs at least one topic")
	// ErrDuplicateName: a node with the name already exists.
	ErrDuplicateName = errors.New("node name already added")
	// ErrTopicAlreadyRegistered: the topic (or a topic matched by the pattern) is already read
	// by another source or global store; every topic may be read by one source only.
	ErrTopicAlreadyRegistered = errors.New("topic already registered by another source")
	// ErrNoParent: a processor or sink was given no parent.
	ErrNoParent = errors.New("node needs at least one parent")
	// ErrSelfParent: a node names itself as its parent.
	ErrSelfParent = errors.New("node cannot be its own parent")
	// ErrUnknownParent: a parent name is not added yet; parents must be added first.
	ErrUnknownParent = errors.New("parent node not added yet")
	// ErrSinkAsParent: a sink was named as a parent; sinks have no children.
	ErrSinkAsParent = errors.New("a sink cannot be a parent")
	// ErrDuplicateStore: another (different) store builder with the name is already added.
	ErrDuplicateStore = errors.New("a different state store with the name is already added")
	// ErrUnknownStore: no state store has the name: connecting a store that is not added (as a
	// non-global store), a processor asking for a store no node of its task has, an interactive
	// query or a test driver asking for a store the topology lacks. The error wrapping it names
	// the store and says which.
	ErrUnknownStore = errors.New("unknown state store")
	// ErrUnusedStore: a (non-global) state store is connected to no processor, so no task
	// would ever open it. Java accepts such a topology silently; we refuse it where it is run.
	ErrUnusedStore = errors.New("state store is connected to no processor")
	// ErrUnknownProcessor: a processor name that is not added.
	ErrUnknownProcessor = errors.New("processor not added yet")
	// ErrGlobalStoreConnected: a global store was connected to a processor explicitly; every
	// processor can read global stores without that.
	ErrGlobalStoreConnected = errors.New("global state store must not be connected explicitly")
	// ErrStoreOnSourceOrSink: a store was connected to a source or sink node.
	ErrStoreOnSourceOrSink = errors.New("state stores can only be connected to processors")
	// ErrSourceStoreAlreadyAdded: a store is already bound to a source topic as its changelog.
	ErrSourceStoreAlreadyAdded = errors.New("source store already added")
	// ErrNoStoreNames: ConnectProcessorAndStateStores got no store name.
	ErrNoStoreNames = errors.New("at least one state store name is needed")
	// ErrSameSourceAndProcessorName: AddGlobalStore got the same name for source and processor.
	ErrSameSourceAndProcessorName = errors.New("global store source and processor names must differ")
)

// NewError returns the error of a failed topology construction about the node or store name
// (empty when the call got none): a *processor.TopologyError, made by MakeError, whose Reason
// is format with args and which errors.Is matches to ErrInvalidTopology and to kind (nil for
// none: one of the sentinels above, a package's own sentinel, or a cause such as a regexp
// syntax error), which the library's own tests and code may match; the public API documents
// only ErrInvalidTopology, ErrUnknownStore and the causes it names. Java: TopologyException.
func NewError(name string, kind error, format string, args ...any) error {
	reason := fmt.Sprintf(format, args...)
	if MakeError == nil {
		return &bareError{name: name, reason: reason, kind: kind}
	}
	return MakeError(name, reason, kind)
}

// MakeError returns a *processor.TopologyError with the name and reason that unwraps to kind
// and matches ErrInvalidTopology. Package processor sets it when it is initialised, as it sets
// Of and Wrap, so that this package and the DSL build the public error type without processor
// exporting a constructor to applications.
var MakeError func(name, reason string, kind error) error

// bareError stands in for *processor.TopologyError in a program that does not link package
// processor (this package's own tests); it matches the same errors and prints the same text.
type bareError struct {
	name, reason string
	kind         error
}

func (e *bareError) Error() string { return "invalid topology: " + e.reason }

func (e *bareError) Unwrap() []error {
	if e.kind == nil {
		return []error{ErrInvalidTopology}
	}
	return []error{e.kind, ErrInvalidTopology}
}

func newErr(name string, kind error, format string, args ...any) error {
	return NewError(name, kind, format, args...)
}
