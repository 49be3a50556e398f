package runtime

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/fetch"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// A fetched chunk goes into its task's queue as Java's consumer hands records over: at most
// maxPollRecords per poll, and none while the queue holds more than
// buffered.records.per.partition; the rest of the chunk waits in the input, the partition stays
// paused meanwhile, and the waiting records count in the position (what a commit of an empty
// queue takes) and in the lag. Every record is processed once, in offset order.
func TestEmbeddedInputBoundsTheQueueOfAChunk(t *testing.T) {
	t.Parallel()
	const records, maxBuffered = 5000, 100
	b := kafkatest.Embedded(t)
	topic := "app-counts-store-repartition"
	kafkatest.CreateTopics(t, b, 1, nil, topic)
	prod, err := sarama.NewSyncProducer(b.Addrs, kafkatest.ProducerConfig())
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]*sarama.ProducerMessage, records)
	for i := range msgs {
		w := sarama.StringEncoder(fmt.Sprintf("w%d", i%50))
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Key: w, Value: w, Timestamp: time.UnixMilli(int64(i))}
	}
	if err := prod.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
	prod.Close()

	spec := countSpec(t)
	id := processor.TaskID{Subtopology: 1, Partition: 0}
	tk, err := task.New(id, spec, task.Config{ApplicationID: "app", Collector: taskOut{log: &outLog{counts: map[string][]int64{}}},
		Cache: cache.New(10 << 20), AppConfigs: map[string]string{"processing.guarantee": "at_least_once"}, StateDir: t.TempDir(),
		Clock: func() int64 { return 0 }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.Init(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tk.Close() })
	cl, err := kafka.NewCluster(kafka.Config{Brokers: b.Addrs, Sarama: kafkatest.SaramaConfig(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	f, err := fetch.New(fetch.Config{Cluster: cl, MaxWait: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	in := &input{parts: map[kafka.TopicPartition]*inputPartition{}, maxBuffered: maxBuffered,
		fetcher: f, log: slog.New(slog.DiscardHandler), poll: &metrics.Op{}}
	tp := kafka.TopicPartition{Topic: topic, Partition: 0}
	in.add(id, tp, tk)
	in.index()
	f.Assign(map[kafka.TopicPartition]int64{tp: 0})
	tasks := map[processor.TaskID]*task.Task{id: tk}
	p := in.parts[tp]

	processed, maxWaiting := int64(0), 0
	for deadline := time.Now().Add(30 * time.Second); processed < records; {
		if time.Now().After(deadline) {
			t.Fatalf("processed %d of %d records within 30 s", processed, records)
		}
		before := tk.QueueSize(topic, 0)
		moved, err := in.pollInput(tasks)
		if err != nil {
			t.Fatal(err)
		}
		size := tk.QueueSize(topic, 0)
		if before > maxBuffered && moved > 0 {
			t.Fatalf("moved %d records into a queue of %d (more than buffered.records.per.partition %d)", moved, before, maxBuffered)
		}
		if moved > maxPollRecords || size > maxBuffered+maxPollRecords {
			t.Fatalf("moved %d records, queue %d: more than maxPollRecords %d / buffered.records.per.partition + maxPollRecords", moved, size, maxPollRecords)
		}
		waiting := len(p.rest)
		maxWaiting = max(maxWaiting, waiting)
		if waiting > 0 {
			if !p.paused {
				t.Fatalf("%d records wait, the partition is not paused", waiting)
			}
			if got, want := in.position(tp), processed+int64(size); got != want {
				t.Fatalf("position %d with %d processed and %d queued, want %d", got, processed, size, want)
			}
			if lag := in.lag(p); lag >= 0 && lag < int64(waiting) {
				t.Fatalf("lag %d with %d records waiting", lag, waiting)
			}
		}
		// Process the queue down to half of buffered.records.per.partition, or all of it.
		for tk.QueueSize(topic, 0) > maxBuffered/2 || (tk.QueueSize(topic, 0) > 0 && len(p.rest) == 0) {
			ok, err := tk.Process(0)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			processed++
		}
		if tk.QueueSize(topic, 0) == 0 && processed > 0 {
			// The commit of an empty queue takes the position: the first waiting record.
			if got := in.commitPosition(tk, tp, processed-1); got != processed {
				t.Fatalf("commit position %d after %d processed records, want %d", got, processed, processed)
			}
		}
		in.resume(tasks)
	}
	if processed != records || tk.Processed() != records {
		t.Fatalf("processed %d (task: %d), want %d", processed, tk.Processed(), records)
	}
	if maxWaiting == 0 {
		t.Fatal("no records ever waited in the input: the fetched chunks were smaller than a poll")
	}
}
