package topology

import (
	"errors"
	"fmt"
)

// ErrInvalidTopology is wrapped by every error the builder returns: the topology was not
// changed by the failing call. It is the counterpart of Java's
// org.apache.kafka.streams.errors.TopologyException.
var ErrInvalidTopology = errors.New("invalid topology")

// Sentinel errors for each situation in which Java's InternalTopologyBuilder throws. Every
// [*Error] unwraps to one of them and to [ErrInvalidTopology].
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

// Error is a topology construction error: which node or store it concerns and why. It
// unwraps to [ErrInvalidTopology] and to its kind, one of the sentinels above (or a cause
// such as a regexp syntax error), which the library's own tests and code may match; the public
// API exports only ErrInvalidTopology and ErrUnknownStore of them. Java: TopologyException.
type Error struct {
	// Name is the node or state store the failing call adds or connects (the one its Reason
	// names first); empty when the call got no name (a nil store builder, a configuration value).
	Name string
	// Reason is the message, modelled on Java's TopologyException text: what is wrong, naming
	// the node, topic or store, and what to do.
	Reason string
	kind   error
}

// Error returns "invalid topology: <Reason>", as Java's TopologyException prefixes
// "Invalid topology: ".
func (e *Error) Error() string { return "invalid topology: " + e.Reason }

// Unwrap returns [ErrInvalidTopology] and the error's kind, when it has one.
func (e *Error) Unwrap() []error {
	if e.kind == nil {
		return []error{ErrInvalidTopology}
	}
	return []error{e.kind, ErrInvalidTopology}
}

// NewError returns an *Error about the node or store name: kind is what it unwraps to besides
// ErrInvalidTopology (nil for none), the reason is format with args.
func NewError(name string, kind error, format string, args ...any) *Error {
	return &Error{Name: name, Reason: fmt.Sprintf(format, args...), kind: kind}
}

func newErr(name string, kind error, format string, args ...any) error {
	return NewError(name, kind, format, args...)
}
