// Package task is the task-processing engine of kstreams-go: it runs one task of a built
// topology (Java's StreamTask with its ProcessorContextImpl, PartitionGroup, RecordQueue,
// PunctuationQueue, SourceNode, SinkNode and RecordCollector roles), without any Kafka client.
//
// The caller (the test driver now, the runtime later) describes the nodes and stores of the
// task in a [Spec], hands records in with [Task.AddRecord], drives processing with
// [Task.Process], [Task.MaybePunctuateStreamTime] and [Task.MaybePunctuateSystemTime], and
// receives produced records (sink output and changelog writes) through a [Collector].
package task

import (
	"regexp"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// UntypedProcessor is a processor of the untyped graph: keys and values are any, nil is null.
// Typed processors are adapted to it by the topology.
type UntypedProcessor interface {
	// Init is called once before any record, with the node's context.
	Init(ctx processor.ProcessorContext[any, any]) error
	// Process processes one record.
	Process(record processor.Record[any, any]) error
	// Close is called once when the task closes.
	Close() error
}

// NodeKind is the kind of a node: source, processor or sink.
type NodeKind int

const (
	// SourceNode reads records from topics and forwards them to its children.
	SourceNode NodeKind = iota
	// ProcessorNode runs an UntypedProcessor.
	ProcessorNode
	// SinkNode serializes records and hands them to the Collector.
	SinkNode
)

// NodeSpec describes one node of the task.
type NodeSpec struct {
	// Name is the node name, unique in the topology.
	Name string
	// Kind is the node kind.
	Kind NodeKind
	// Children are the names of the child nodes, in the order forwards reach them.
	Children []string

	// Topics are the (physical) topics a source node reads.
	Topics []string
	// Pattern, when non-nil, makes a source node read every topic it fully matches.
	Pattern *regexp.Regexp
	// KeyDeserializer and ValueDeserializer decode source records; nil means the default serde.
	KeyDeserializer, ValueDeserializer serde.Deserializer[any]
	// TimestampExtractor of a source node; nil means Config.DefaultTimestampExtractor.
	TimestampExtractor processor.TimestampExtractor

	// NewProcessor returns a new processor instance for a processor node.
	NewProcessor func() (UntypedProcessor, error)
	// Stores are the names of the stores connected to a processor node.
	Stores []string

	// Topic is the fixed output topic of a sink node (used when TopicExtractor is nil).
	Topic string
	// TopicExtractor chooses the output topic per record; nil means Topic.
	TopicExtractor processor.TopicNameExtractor[any, any]
	// KeySerializer and ValueSerializer encode sink records; nil means the default serde.
	KeySerializer, ValueSerializer serde.Serializer[any]
	// Partitioner chooses output partitions; nil leaves the choice to the collector (-1).
	Partitioner processor.StreamPartitioner[any, any]
}

// StoreSpec describes one state store of the task.
type StoreSpec struct {
	// Builder builds the store instance of this task.
	Builder processor.StoreBuilder
	// ChangelogTopic overrides the changelog topic (e.g. a source-topic changelog); empty means
	// "<application.id>-<store>-changelog".
	ChangelogTopic string
	// ChangelogIsSource marks a store whose changelog is a topic the topology reads (a
	// read-only store, a source-table store, a global store): the engine never writes to it,
	// as Java builds such stores with logging disabled.
	ChangelogIsSource bool
}

// Spec is the part of a built topology one task runs: nodes in the order Java builds and
// initialises them, and the stores of those nodes in the order they are initialised.
type Spec struct {
	// Nodes are the task's nodes.
	Nodes []NodeSpec
	// Stores are the task's stores.
	Stores []StoreSpec
}
