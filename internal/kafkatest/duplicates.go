package kafkatest

import (
	"bytes"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// TopicDuplicates reads every partition of topic from its start to the end offset it has now
// and reports the records that are in it more than once: same key, value, timestamp and
// headers. Give every record a header unique to it (a line number), and such a pair is a record
// written twice, as a producer's retry without idempotence writes it. It returns how many records it read and
// one line per duplicated record (its key and its partition@offset places), at most 20; cfg may
// be nil ([SaramaConfig]). For failure messages: a reading error is returned as text, not
// fatal, and the read gives up after 30 s.
func TopicDuplicates(addrs []string, cfg *sarama.Config, topic string) (records int, dups []string) {
	if cfg == nil {
		cfg = SaramaConfig()
	}
	c := *cfg
	c.Consumer.IsolationLevel = sarama.ReadUncommitted
	client, err := sarama.NewClient(addrs, &c)
	if err != nil {
		return 0, []string{fmt.Sprintf("(could not read topic %s: %v)", topic, err)}
	}
	defer client.Close()
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return 0, []string{fmt.Sprintf("(could not read topic %s: %v)", topic, err)}
	}
	defer consumer.Close()
	parts, err := client.Partitions(topic)
	if err != nil {
		return 0, []string{fmt.Sprintf("(could not read topic %s: %v)", topic, err)}
	}
	places := map[string][]string{}
	var order []string
	deadline := time.After(30 * time.Second)
	for _, p := range parts {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return records, append(dups, fmt.Sprintf("(could not read topic %s-%d: %v)", topic, p, err))
		}
		if end <= 0 {
			continue
		}
		pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			return records, append(dups, fmt.Sprintf("(could not read topic %s-%d: %v)", topic, p, err))
		}
	read:
		for {
			select {
			case m := <-pc.Messages():
				records++
				id := fmt.Sprintf("key %q value %q timestamp %d", m.Key, m.Value, m.Timestamp.UnixMilli())
				for _, h := range m.Headers {
					id += fmt.Sprintf(" header %s=%q", h.Key, h.Value)
				}
				if places[id] == nil {
					order = append(order, id)
				}
				places[id] = append(places[id], fmt.Sprintf("%d@%d", m.Partition, m.Offset))
				if m.Offset >= end-1 {
					break read
				}
			case cerr := <-pc.Errors():
				pc.Close()
				return records, append(dups, fmt.Sprintf("(reading topic %s-%d: %v)", topic, p, cerr))
			case <-deadline:
				pc.Close()
				return records, append(dups, fmt.Sprintf("(reading topic %s-%d: not at its end offset %d after 30 s)", topic, p, end))
			}
		}
		pc.Close()
	}
	for _, id := range order {
		if len(places[id]) > 1 {
			if len(dups) == 20 {
				dups = append(dups, "...")
				break
			}
			dups = append(dups, fmt.Sprintf("%s at %v", id, places[id]))
		}
	}
	return records, dups
}

// ReportDuplicates is [TopicDuplicates] as a sentence for a failure message: "input topic T:
// N records, none written twice" or the records written twice.
func ReportDuplicates(addrs []string, cfg *sarama.Config, topic string) string {
	n, dups := TopicDuplicates(addrs, cfg, topic)
	if len(dups) == 0 {
		return fmt.Sprintf("input topic %s: %d records, none written twice", topic, n)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "input topic %s: %d records, some WRITTEN TWICE by the test's producer (the input itself is duplicated):", topic, n)
	for _, d := range dups {
		b.WriteString("\n\t")
		b.WriteString(d)
	}
	return b.String()
}
