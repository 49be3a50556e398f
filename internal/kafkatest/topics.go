package kafkatest

import (
	"testing"

	"github.com/IBM/sarama"
)

// CreateTopics creates topics on b, each with partitions partitions, replication factor 1 and
// the topic configs (nil: the broker's defaults), and returns once every new partition's leader
// answers ListOffsets ([WaitTopicsReady]): a metadata leader alone is not enough, Apache Kafka's
// leader may still refuse requests for a moment after CreateTopics. A topic that cannot be
// created (one that exists included) fails t.
func CreateTopics(t testing.TB, b Broker, partitions int32, configs map[string]string, topics ...string) {
	t.Helper()
	CreateTopicsWith(t, b.Addrs, nil, partitions, configs, topics...)
}

// CreateTopicsWith is [CreateTopics] on the brokers addrs with the client configuration cfg
// (nil: [SaramaConfig]), for brokers that need credentials.
func CreateTopicsWith(t testing.TB, addrs []string, cfg *sarama.Config, partitions int32, configs map[string]string, topics ...string) {
	t.Helper()
	if cfg == nil {
		cfg = SaramaConfig()
	}
	admin, err := sarama.NewClusterAdmin(addrs, cfg)
	if err != nil {
		t.Fatalf("kafkatest: admin client for %v: %v", addrs, err)
	}
	defer admin.Close()
	var entries map[string]*string
	if len(configs) > 0 {
		entries = make(map[string]*string, len(configs))
		for k, v := range configs {
			entries[k] = &v
		}
	}
	for _, topic := range topics {
		detail := &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1, ConfigEntries: entries}
		if err := admin.CreateTopic(topic, detail, false); err != nil {
			t.Fatalf("kafkatest: creating topic %s: %v", topic, err)
		}
	}
	WaitTopicsReady(t, addrs, cfg, topics...)
}

// KeepForever returns the topic config that turns time-based retention off (retention.ms=-1),
// for topics whose records carry old timestamps (tests write deterministic ones from 1970), which
// the broker's periodic retention check would otherwise delete before they are read.
func KeepForever() map[string]string { return map[string]string{"retention.ms": "-1"} }

// TopicConfigs returns the configuration of topic as the broker describes it (DescribeConfigs:
// every entry, defaults included), name to value. An error fails t.
func TopicConfigs(t testing.TB, admin sarama.ClusterAdmin, topic string) map[string]string {
	t.Helper()
	res, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: topic}}, sarama.DescribeConfigsOptions{})
	if err != nil {
		t.Fatalf("kafkatest: describing the configs of topic %s: %v", topic, err)
	}
	got := map[string]string{}
	for _, r := range res {
		if r.ErrorCode != sarama.ErrNoError {
			t.Fatalf("kafkatest: describing the configs of topic %s: %v %s", topic, r.ErrorCode, r.ErrorMsg)
		}
		for _, e := range r.Configs {
			got[e.Name] = e.Value
		}
	}
	return got
}
