package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/fetch"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/internal/wc"
)

// batchWordPipe is the word pipe (see wordPipe) on kstreams-go's own batch-level client, the
// layer the stream threads run on (internal/kafka: fetch and produce): the ceiling of the word
// count's data path without its state, cache, commits or transactions. Stage one fetches the
// input lines, splits them as the word count does and sends every word (key and value the word)
// to a fresh 4-partition topic, partitioned by Java's murmur2; stage two, concurrently, fetches
// that topic and sends one record per word (key the word, an 8-byte value) to a fresh
// 4-partition output topic. Each stage is one goroutine with its own fetcher and producer,
// configured as a stream thread's (fetch.max.wait.ms 500, idempotent producer, acks=all,
// linger.ms 100, batch.size 16384). It returns the time from start until every record of both
// stages was acknowledged, and the number of words.
func batchWordPipe(o options, client sarama.Client, input string, ends map[int32]int64, stamp string) (time.Duration, int64, error) {
	mid := "wcbench-batchpipe-repartition-" + stamp
	out := "wcbench-batchpipe-output-" + stamp
	if err := createTopics(client, mid, out); err != nil {
		return 0, 0, err
	}
	defer deleteCreated(client, mid, out)
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	start := time.Now()

	type stage struct {
		cl     *kafka.Cluster
		f      *fetch.Fetcher
		p      *produce.Producer
		notify chan struct{}
	}
	newStage := func(name string, from string, upTo map[int32]int64) (*stage, error) {
		sc := saramaConfig()
		sc.ClientID = "wcbench-" + name
		cl, err := kafka.NewCluster(kafka.Config{Brokers: o.bootstrap, Sarama: sc})
		if err != nil {
			return nil, err
		}
		s := &stage{cl: cl, notify: make(chan struct{}, 1)}
		if s.f, err = fetch.New(fetch.Config{Cluster: cl, Notify: func() {
			select {
			case s.notify <- struct{}{}:
			default:
			}
		}}); err != nil {
			cl.Close()
			return nil, err
		}
		if s.p, err = produce.New(ctx, produce.Config{Cluster: cl, Linger: 100 * time.Millisecond}); err != nil {
			s.f.Close()
			cl.Close()
			return nil, err
		}
		assign := map[kafka.TopicPartition]int64{}
		for p := int32(0); p < partitions; p++ {
			assign[kafka.TopicPartition{Topic: from, Partition: p}] = 0
		}
		s.f.Assign(assign)
		return s, nil
	}
	closeStage := func(s *stage) {
		s.p.Close()
		s.f.Close()
		s.cl.Close()
	}
	// run fetches until every partition's position reaches its end (ends known, or learnt
	// from endsKnown), handing each record to handle.
	run := func(s *stage, from string, ends func() (map[int32]int64, bool), handle func(r *fetch.Record) error) error {
		for {
			if e, ok := ends(); ok {
				done := true
				for p, end := range e {
					if s.f.Position(kafka.TopicPartition{Topic: from, Partition: p}) < end {
						done = false
					}
				}
				if done {
					return nil
				}
			}
			for _, c := range s.f.Poll() {
				if c.Err != nil {
					return c.Err
				}
				for i := range c.Records {
					if err := handle(&c.Records[i]); err != nil {
						return err
					}
				}
				s.f.Recycle(c.Records)
			}
			select {
			case <-s.notify:
			case <-time.After(10 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}

	one, err := newStage("batchpipe-1", input, ends)
	if err != nil {
		return 0, 0, err
	}
	defer closeStage(one)
	two, err := newStage("batchpipe-2", mid, nil)
	if err != nil {
		return 0, 0, err
	}
	defer closeStage(two)

	var mu sync.Mutex
	var midEnds map[int32]int64 // set once stage one is done
	count := make([]byte, 8)
	errs := make(chan error, 1)
	go func() {
		err := run(two, mid, func() (map[int32]int64, bool) {
			mu.Lock()
			defer mu.Unlock()
			return midEnds, midEnds != nil
		}, func(r *fetch.Record) error {
			return two.p.Send(produce.Record{Topic: out, Partition: -1, Key: r.Key, Value: count, Timestamp: r.Timestamp})
		})
		if err == nil {
			err = two.p.Flush(ctx)
		}
		errs <- err
	}()
	var words int64
	err = run(one, input, func() (map[int32]int64, bool) { return ends, true }, func(r *fetch.Record) error {
		for _, w := range wc.SplitWords(string(r.Value)) {
			k := []byte(w)
			words++
			if err := one.p.Send(produce.Record{Topic: mid, Partition: -1, Key: k, Value: k, Timestamp: r.Timestamp}); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = one.p.Flush(ctx)
	}
	e := map[int32]int64{}
	for p := int32(0); p < partitions; p++ {
		e[p] = one.p.Acked(kafka.TopicPartition{Topic: mid, Partition: p}) + 1
	}
	if err != nil {
		e = map[int32]int64{} // stage two stops at once
	}
	mu.Lock()
	midEnds = e
	mu.Unlock()
	if err2 := <-errs; err == nil {
		err = err2
	}
	if err != nil {
		return 0, 0, err
	}
	for _, s := range []*stage{one, two} {
		if f := s.p.Failures(); len(f) > 0 {
			return 0, 0, fmt.Errorf("%d records failed: %v", len(f), f[0].Err)
		}
	}
	return time.Since(start), words, nil
}
