package kstreams

import (
	"fmt"
	"github.com/kstreams-go/kstreams/internal/topology"
	"net"
	"slices"
	"sort"
	"strconv"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// TopicPartition is a partition of a topic. Java: org.apache.kafka.common.TopicPartition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// StreamsMetadata describes one instance of the application as the last assignment this
// instance received announced it (KIP-535): where it runs (its application.server), the stores
// and source topic partitions of its active tasks and those of its standby tasks. Names and
// partitions are sorted. Java: StreamsMetadata.
type StreamsMetadata struct {
	// HostInfo is the instance's application.server.
	HostInfo HostInfo
	// StateStoreNames are the stores of the sub-topologies of its active tasks.
	StateStoreNames []string
	// TopicPartitions are the source topic partitions of its active tasks.
	TopicPartitions []TopicPartition
	// StandbyStateStoreNames are the stores of the sub-topologies of its standby tasks.
	StandbyStateStoreNames []string
	// StandbyTopicPartitions are the source topic partitions of its standby tasks.
	StandbyTopicPartitions []TopicPartition
}

// MetadataForAllStreamsClients returns the metadata of every instance of the application that
// set application.server, from the last assignment this instance received, sorted by host and
// port; none before the first assignment or when no instance set application.server (Java
// returns only instances with an endpoint too). Errors: ErrIllegalState before Start. Java:
// metadataForAllStreamsClients().
func (k *KafkaStreams) MetadataForAllStreamsClients() ([]StreamsMetadata, error) {
	return k.streamsMetadata("")
}

// StreamsMetadataForStore returns the metadata of the instances whose active or standby tasks
// have the store storeName, as MetadataForAllStreamsClients. Errors: processor.ErrUnknownStore for a
// store the topology does not have; ErrIllegalState before Start. Java:
// streamsMetadataForStore(storeName).
func (k *KafkaStreams) StreamsMetadataForStore(storeName string) ([]StreamsMetadata, error) {
	if topology.Of(k.topology).Store(storeName) == nil {
		return nil, fmt.Errorf("kstreams: %w: %q", processor.ErrUnknownStore, storeName)
	}
	return k.streamsMetadata(storeName)
}

// subtopologyStores returns the stores of every sub-topology, sorted.
func (k *KafkaStreams) subtopologyStores() map[int][]string {
	b := topology.Of(k.topology)
	out := map[int][]string{}
	for _, g := range b.NodeGroups() {
		for _, n := range g.Nodes {
			if nd := b.Node(n); nd != nil {
				for _, s := range nd.Stores {
					if !slices.Contains(out[g.ID], s) {
						out[g.ID] = append(out[g.ID], s)
					}
				}
			}
		}
	}
	for id := range out {
		sort.Strings(out[id])
	}
	return out
}

func (k *KafkaStreams) streamsMetadata(storeName string) ([]StreamsMetadata, error) {
	if k.runtime() == nil || k.runtime().Layout() == nil {
		return nil, fmt.Errorf("%w: streams metadata before Start", ErrIllegalState)
	}
	stores := k.subtopologyStores()
	topics := map[int][]string{}
	for _, s := range k.runtime().Layout().Subtopologies {
		topics[s.ID] = s.Topics
	}
	describe := func(ids []processor.TaskID) (names []string, tps []TopicPartition) {
		for _, id := range ids {
			for _, s := range stores[id.Subtopology] {
				if !slices.Contains(names, s) {
					names = append(names, s)
				}
			}
			for _, t := range topics[id.Subtopology] {
				tps = append(tps, TopicPartition{Topic: t, Partition: int32(id.Partition)})
			}
		}
		sort.Strings(names)
		sort.Slice(tps, func(i, j int) bool {
			if tps[i].Topic != tps[j].Topic {
				return tps[i].Topic < tps[j].Topic
			}
			return tps[i].Partition < tps[j].Partition
		})
		return names, tps
	}
	active, standby := k.runtime().Hosts(), k.runtime().StandbyHosts()
	var hosts []string
	for h := range active {
		hosts = append(hosts, h)
	}
	for h := range standby {
		if _, ok := active[h]; !ok {
			hosts = append(hosts, h)
		}
	}
	var out []StreamsMetadata
	for _, h := range hosts {
		hi, ok := parseHost(h)
		if !ok {
			continue
		}
		md := StreamsMetadata{HostInfo: hi}
		md.StateStoreNames, md.TopicPartitions = describe(active[h])
		md.StandbyStateStoreNames, md.StandbyTopicPartitions = describe(standby[h])
		if storeName != "" && !slices.Contains(md.StateStoreNames, storeName) && !slices.Contains(md.StandbyStateStoreNames, storeName) {
			continue
		}
		out = append(out, md)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].HostInfo.Host != out[j].HostInfo.Host {
			return out[i].HostInfo.Host < out[j].HostInfo.Host
		}
		return out[i].HostInfo.Port < out[j].HostInfo.Port
	})
	return out, nil
}

// parseHost reads "host:port" (IPv6 hosts in brackets).
func parseHost(s string) (HostInfo, bool) {
	h, port, err := net.SplitHostPort(s)
	if err != nil {
		return HostInfo{}, false
	}
	pn, err := strconv.Atoi(port)
	if err != nil {
		return HostInfo{}, false
	}
	return HostInfo{Host: h, Port: pn}, true
}

// QueryMetadataForKeyOf is QueryMetadataForKey with a typed key, serialized with
// keySerializer as Java serializes it (for the first source topic of the store's
// sub-topology), e.g. QueryMetadataForKeyOf(app, "counts", "alice", serde.String()). Errors:
// those of QueryMetadataForKey, and the serializer's (wrapped). Java:
// queryMetadataForKey(storeName, key, keySerializer).
func QueryMetadataForKeyOf[K any](k *KafkaStreams, storeName string, key K, keySerializer serde.Serializer[K]) (KeyQueryMetadata, error) {
	topic := ""
	if sub, ok := k.storeSubtopology(storeName); ok && k.runtime() != nil && k.runtime().Layout() != nil {
		for _, s := range k.runtime().Layout().Subtopologies {
			if s.ID == sub && len(s.Topics) > 0 {
				topic = s.Topics[0]
			}
		}
	}
	b, err := keySerializer.Serialize(topic, &serde.Headers{}, key)
	if err != nil {
		return KeyQueryMetadata{}, fmt.Errorf("kstreams: query metadata for key of %q: serialize key: %w", storeName, err)
	}
	return k.QueryMetadataForKey(storeName, b)
}
