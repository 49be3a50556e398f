package topology

import (
	"github.com/kstreams-go/kstreams/internal/serdeapi"
	"slices"
)

// InternalTopicProperties are the properties of an internal (repartition) topic the DSL adds.
// Java: org.apache.kafka.streams.processor.internals.InternalTopicProperties.
type InternalTopicProperties struct {
	// NumberOfPartitions is the partition count fixed by the user (Repartitioned.withNumberOfPartitions),
	// 0 when it is derived from the upstream topics.
	NumberOfPartitions int32
}

// AddInternalTopic marks topic (a raw name, without the application id) as an internal
// repartition topic: sources and sinks naming it read and write "<application.id>-<topic>"
// at run time, while Describe prints the raw name. Java: InternalTopologyBuilder.addInternalTopic.
func (b *Builder) AddInternalTopic(topic string, props InternalTopicProperties) {
	if b.internalTopics == nil {
		b.internalTopics = map[string]InternalTopicProperties{}
	}
	b.internalTopics[topic] = props
}

// InternalTopic returns the properties of an internal topic and true, or false for a user topic.
func (b *Builder) InternalTopic(topic string) (InternalTopicProperties, bool) {
	p, ok := b.internalTopics[topic]
	return p, ok
}

// DecorateTopic returns the run-time name of topic: "<applicationID>-<topic>" for an internal
// topic, topic itself otherwise. Java: decorateTopic / maybeDecorateInternalSourceTopics.
func (b *Builder) DecorateTopic(applicationID, topic string) string {
	if _, ok := b.internalTopics[topic]; ok {
		return applicationID + "-" + topic
	}
	return topic
}

// CopartitionSources records that the topics of the named source nodes must be
// co-partitioned (joins). Java: InternalTopologyBuilder.copartitionSources.
func (b *Builder) CopartitionSources(sourceNodes ...string) {
	b.CopartitionSourcesFor("", sourceNodes...)
}

// CopartitionSourcesFor is CopartitionSources for the join node join (named in
// Topology.Analyze's warnings; "" when unknown).
func (b *Builder) CopartitionSourcesFor(join string, sourceNodes ...string) {
	b.copartition = append(b.copartition, slices.Clone(sourceNodes))
	b.copartitionBy = append(b.copartitionBy, join)
}

// CopartitionSourceGroup is one recorded set of source nodes whose topics must be
// co-partitioned, and the join node that recorded it ("" when unknown).
type CopartitionSourceGroup struct {
	Join    string
	Sources []string
}

// CopartitionSourceGroups returns the recorded groups of source nodes as recorded (not merged),
// in order.
func (b *Builder) CopartitionSourceGroups() []CopartitionSourceGroup {
	out := make([]CopartitionSourceGroup, len(b.copartition))
	for i, g := range b.copartition {
		out[i] = CopartitionSourceGroup{Join: b.copartitionBy[i], Sources: slices.Clone(g)}
	}
	return out
}

// CopartitionGroups returns the sets of run-time topic names that must have the same number of
// partitions: the recorded groups, with groups sharing a topic merged. Each group is sorted;
// groups are in the order they were first recorded. Java: InternalTopologyBuilder.copartitionGroups.
func (b *Builder) CopartitionGroups(applicationID string) [][]string {
	var groups []map[string]bool
	owner := map[string]int{}
	for _, nodes := range b.copartition {
		topics := map[string]bool{}
		for _, n := range nodes {
			if nd := b.byName[n]; nd != nil {
				for _, t := range nd.Topics {
					topics[b.DecorateTopic(applicationID, t)] = true
				}
			}
		}
		gi := -1
		for t := range topics {
			if i, ok := owner[t]; ok && (gi < 0 || i < gi) {
				gi = i
			}
		}
		if gi < 0 {
			gi = len(groups)
			groups = append(groups, map[string]bool{})
		}
		for t := range topics {
			if i, ok := owner[t]; ok && i != gi {
				for t2 := range groups[i] {
					groups[gi][t2] = true
					owner[t2] = gi
				}
				groups[i] = nil
			}
			groups[gi][t] = true
			owner[t] = gi
		}
	}
	var out [][]string
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		out = append(out, sortedKeys(g))
	}
	return out
}

// ConnectSourceStoreAndTopic makes topic (a source topic) the changelog of store, so no
// "<application.id>-<store>-changelog" topic is created and the store restores from topic
// (read-only stores; the DSL's source-table optimization). Errors: ErrSourceStoreAlreadyAdded
// when the store already has one, ErrUnknownStore. Java: connectSourceStoreAndTopic.
func (b *Builder) ConnectSourceStoreAndTopic(store, topic string) error {
	st := b.stores[store]
	if st == nil {
		return newErr(store, ErrUnknownStore, "state store %s is not added yet; add it before binding it to source topic %s", store, topic)
	}
	if st.SourceTopic != "" {
		return newErr(store, ErrSourceStoreAlreadyAdded, "source store %s is already added (bound to topic %s)", store, st.SourceTopic)
	}
	st.SourceTopic = topic
	return nil
}

// ChangelogTopic returns the run-time changelog topic of store: its source topic when it has
// one (decorated if internal), else "<applicationID>-<store>-changelog" when logging is enabled,
// else "" (no changelog; always "" for a store that is not added). Java:
// ProcessorStateManager.storeChangelogTopic and storeToChangelogTopic.
func (b *Builder) ChangelogTopic(applicationID, store string) string {
	st := b.stores[store]
	switch {
	case st == nil:
		return ""
	case st.SourceTopic != "":
		return b.DecorateTopic(applicationID, st.SourceTopic)
	case st.Global || !st.Builder.LoggingEnabled():
		return ""
	}
	return applicationID + "-" + store + "-changelog"
}

// TopicsInfo lists the topics of one sub-topology at run time (names decorated with the
// application id). Java: InternalTopologyBuilder.TopicsInfo.
type TopicsInfo struct {
	// Subtopology is the sub-topology id.
	Subtopology int
	// SourceTopics are the topics its sources read (sorted; pattern sources not included).
	SourceTopics []string
	// SinkTopics are the static topics its sinks write (sorted).
	SinkTopics []string
	// RepartitionSourceTopics are the internal topics among SourceTopics, with their properties.
	RepartitionSourceTopics map[string]InternalTopicProperties
	// ChangelogTopics maps each changelog topic of its stores to the store name (source-topic
	// changelogs included).
	ChangelogTopics map[string]string
}

// TopicGroups returns the topics of every non-global sub-topology that reads at least one
// topic by name, by increasing id. Java: InternalTopologyBuilder.subtopologyToTopicsInfo.
func (b *Builder) TopicGroups(applicationID string) []TopicsInfo {
	var out []TopicsInfo
	for _, g := range b.NodeGroups() {
		if g.Global {
			continue
		}
		src, sink := map[string]bool{}, map[string]bool{}
		info := TopicsInfo{Subtopology: g.ID, RepartitionSourceTopics: map[string]InternalTopicProperties{}, ChangelogTopics: map[string]string{}}
		for _, name := range g.Nodes {
			n := b.byName[name]
			for _, t := range n.Topics {
				if b.globalTopics[t] {
					continue
				}
				d := b.DecorateTopic(applicationID, t)
				src[d] = true
				if p, ok := b.internalTopics[t]; ok {
					info.RepartitionSourceTopics[d] = p
				}
			}
			if n.Kind == SinkNode && n.Topic != "" {
				sink[b.DecorateTopic(applicationID, n.Topic)] = true
			}
			for _, s := range n.Stores {
				if c := b.ChangelogTopic(applicationID, s); c != "" {
					info.ChangelogTopics[c] = s
				}
			}
		}
		if len(src) == 0 {
			continue
		}
		info.SourceTopics, info.SinkTopics = sortedKeys(src), sortedKeys(sink)
		out = append(out, info)
	}
	return out
}

// AddReadOnlyStore adds a read-only state store: a source named sourceName reading topic (with
// offset reset earliest), a processor named processorName (supplier: a
// processor.ProcessorSupplier[any, any, any, any]) that writes the store, and the store,
// connected to the processor, whose changelog is topic. The engine must build the store without
// change-logging (Java disables logging on the builder) and restores it from topic. All
// arguments are validated before anything is added. Java: Topology.addReadOnlyStateStore.
//
// Errors: those of AddSource, AddProcessor and AddStateStore for the same arguments.
func (b *Builder) AddReadOnlyStore(builder StoreBuilder, sourceName string, extractor, keyDeser, valueDeser any,
	topic, processorName string, supplier any) error {
	switch {
	case serdeapi.IsNil(builder):
		return newErr("", ErrNilArgument, "read-only store: store builder must not be nil")
	case serdeapi.IsNil(supplier):
		return newErr(builder.Name(), ErrNilArgument, "read-only store %s: processor supplier must not be nil", builder.Name())
	case topic == "":
		return newErr(builder.Name(), ErrNoTopics, "read-only store %s: topics cannot be empty; give the store's source topic", builder.Name())
	case b.byName[sourceName] != nil:
		return dupName(sourceName)
	case b.byName[processorName] != nil:
		return dupName(processorName)
	case sourceName == processorName:
		return newErr(processorName, ErrSelfParent, "parent node %s is unknown (self-reference); source and processor names of read-only store %s must differ",
			processorName, builder.Name())
	}
	if err := b.checkTopicFree(sourceName, topic); err != nil {
		return err
	}
	name := builder.Name()
	if old := b.stores[name]; old != nil {
		if old.Global || !sameValue(old.Builder, builder) {
			return newErr(name, ErrDuplicateStore, "a different state store has already been added with the name %s", name)
		}
		if old.SourceTopic != "" {
			return newErr(name, ErrSourceStoreAlreadyAdded, "source store %s is already added (bound to topic %s)", name, old.SourceTopic)
		}
	}
	b.rawTopics[topic] = true
	b.addNode(&Node{Name: sourceName, Kind: SourceNode, Topics: []string{topic}, OffsetReset: ResetEarliest,
		TimestampExtractor: extractor, KeyDeserializer: keyDeser, ValueDeserializer: valueDeser})
	b.addNode(&Node{Name: processorName, Kind: ProcessorNode, Parents: []string{sourceName}, Supplier: supplier})
	if b.stores[name] == nil {
		b.stores[name] = &Store{Builder: builder}
		b.storeOr = append(b.storeOr, name)
	}
	b.connect(processorName, name)
	b.stores[name].SourceTopic = topic
	return nil
}
