package runtime

import (
	"maps"
	"slices"
	"strconv"

	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
	"github.com/kstreams-go/kstreams/internal/topology"
)

// streamsTopology is the topology description a streams member joins with (KIP-1071's
// StreamsGroupHeartbeat Topology): per sub-topology that reads topics by name, its user source
// topics, the repartition topics it reads (with the partition count the user fixed, else 0:
// the coordinator derives it) and writes, the changelogs of its logged stores (source-topic
// changelogs left out: they are user topics) and its co-partition groups as indexes into the
// two source lists. Topic configs are the ones the instance creates the internal topics with
// (layout.Internal, Java's RepartitionTopicConfig / *ChangelogTopicConfig), sorted by key;
// the replication factor is replication.factor as Java sends it (-1: the broker's default). The sub-
// topology ids are their numbers in decimal, as Java's. Java: the StreamsRebalanceData that
// KafkaStreams builds from InternalTopologyBuilder.subtopologyToTopicsInfo. SourceTopicRegex
// stays empty, as Java 4.4 sends it: Apache Kafka 4.4's coordinator refuses source topic
// patterns, and kstreams.New refuses a pattern source on the streams protocol as Java does.
func streamsTopology(b *topology.Builder, appID string, l *Layout, rf int16) *streamsgroup.Topology {
	internal := map[string]InternalTopic{}
	for _, it := range l.Internal {
		internal[it.Name] = it
	}
	groups := b.TopicGroups(appID)
	repartition := map[string]bool{}
	for _, g := range groups {
		for t := range g.RepartitionSourceTopics {
			repartition[t] = true
		}
	}
	copart := b.CopartitionGroups(appID)
	topo := &streamsgroup.Topology{Epoch: 0}
	for _, g := range groups {
		s := streamsgroup.Subtopology{ID: strconv.Itoa(g.Subtopology), SourceTopics: []string{},
			SourceTopicRegex: []string{}, StateChangelogTopics: []streamsgroup.TopicInfo{}, RepartitionSinkTopics: []string{},
			RepartitionSourceTopics: []streamsgroup.TopicInfo{}, CopartitionGroups: []streamsgroup.CopartitionGroup{}}
		for _, t := range g.SourceTopics {
			if p, ok := g.RepartitionSourceTopics[t]; ok {
				s.RepartitionSourceTopics = append(s.RepartitionSourceTopics, streamsgroup.TopicInfo{Name: t,
					Partitions: p.NumberOfPartitions, ReplicationFactor: rf, Configs: sortedConfigs(RepartitionTopicDefaults)})
				continue
			}
			s.SourceTopics = append(s.SourceTopics, t)
		}
		for _, t := range g.SinkTopics {
			if repartition[t] {
				s.RepartitionSinkTopics = append(s.RepartitionSinkTopics, t)
			}
		}
		for _, t := range slices.Sorted(maps.Keys(g.ChangelogTopics)) {
			it, ok := internal[t]
			if !ok || !it.Changelog {
				continue // a source topic serving as changelog: not internal
			}
			s.StateChangelogTopics = append(s.StateChangelogTopics, streamsgroup.TopicInfo{Name: t, ReplicationFactor: rf,
				Configs: sortedConfigs(it.Configs)})
		}
		for _, cg := range copart {
			var out streamsgroup.CopartitionGroup
			for _, t := range cg {
				if i := slices.Index(s.SourceTopics, t); i >= 0 {
					out.SourceTopics = append(out.SourceTopics, int16(i))
				} else if i := slices.IndexFunc(s.RepartitionSourceTopics, func(ti streamsgroup.TopicInfo) bool { return ti.Name == t }); i >= 0 {
					out.RepartitionSourceTopics = append(out.RepartitionSourceTopics, int16(i))
				}
			}
			if len(out.SourceTopics)+len(out.RepartitionSourceTopics) < 2 {
				continue // the group is another sub-topology's
			}
			if out.SourceTopics == nil {
				out.SourceTopics = []int16{}
			}
			if out.RepartitionSourceTopics == nil {
				out.RepartitionSourceTopics = []int16{}
			}
			out.SourceTopicRegex = []int16{}
			s.CopartitionGroups = append(s.CopartitionGroups, out)
		}
		topo.Subtopologies = append(topo.Subtopologies, s)
	}
	return topo
}

// sortedConfigs returns configs as key-value pairs sorted by key.
func sortedConfigs(m map[string]string) []streamsgroup.KeyValue {
	out := make([]streamsgroup.KeyValue, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, streamsgroup.KeyValue{Key: k, Value: m[k]})
	}
	return out
}
