package changelog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// rawFetchLog writes a partition that holds what a changelog can: records in batches of every
// compression codec, with null keys, tombstones, empty values and headers, and committed and
// aborted transactions (with their markers). It returns the reader, the partition and its end.
func rawFetchLog(t *testing.T, b kafkatest.Broker, readCommitted bool) (*kafkaLog, TopicPartition, int64) {
	t.Helper()
	log := newKafkaLog(t, b, readCommitted)
	tp := TopicPartition{Topic: kafkatest.Name(t, "raw"), Partition: 0}
	// Not compacted: both readers must see the same log.
	if err := log.admin.CreateTopic(tp.Topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
	kafkatest.WaitTopicsReady(t, b.Addrs, nil, tp.Topic)
	base := time.UnixMilli(1_767_225_600_000)
	msg := func(i int) *sarama.ProducerMessage {
		m := &sarama.ProducerMessage{Topic: tp.Topic, Partition: 0, Timestamp: base.Add(time.Duration(i*7) * time.Millisecond)}
		if i%11 != 0 {
			m.Key = sarama.ByteEncoder(fmt.Appendf(nil, "key-%d", i))
		}
		switch i % 9 {
		case 0: // tombstone
		case 1:
			m.Value = sarama.ByteEncoder([]byte{})
		default:
			m.Value = sarama.ByteEncoder(bytes.Repeat([]byte{byte('a' + i%26)}, 1+i%200))
		}
		if i%5 == 0 {
			m.Headers = []sarama.RecordHeader{{Key: []byte("h1"), Value: []byte(fmt.Sprint(i))}, {Key: []byte("h2"), Value: nil}}
		}
		return m
	}
	i := 0
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP, sarama.CompressionSnappy,
		sarama.CompressionLZ4, sarama.CompressionZSTD} {
		cfg := kafkatest.ProducerConfig()
		cfg.Producer.Partitioner = sarama.NewManualPartitioner
		cfg.Producer.Compression = codec
		p, err := sarama.NewSyncProducer(b.Addrs, cfg)
		must(t, err)
		var msgs []*sarama.ProducerMessage
		for range 300 {
			msgs = append(msgs, msg(i))
			i++
		}
		must(t, p.SendMessages(msgs))
		must(t, p.Close())
	}
	prod := txnSyncProducer(t, b, kafkatest.Name(t, "txn"))
	for _, commit := range []bool{true, false, true} {
		must(t, prod.BeginTxn())
		for range 40 {
			_, _, err := prod.SendMessage(msg(i))
			must(t, err)
			i++
		}
		if commit {
			must(t, prod.CommitTxn())
		} else {
			must(t, prod.AbortTxn())
		}
	}
	// The transaction coordinator writes the last commit marker after CommitTxn returns: the
	// last stable offset reaches the high watermark only then, and before it the high
	// watermark does not count the marker either. So both isolation levels wait for it, and
	// the end is then the same for both.
	lso, hw := newKafkaLog(t, b, true), newKafkaLog(t, b, false)
	var end int64
	kafkatest.Eventually(t, 30*time.Second, "the last stable offset at the high watermark", func() (string, bool) {
		e, err := lso.EndOffset(context.Background(), tp)
		must(t, err)
		h, err := hw.EndOffset(context.Background(), tp)
		must(t, err)
		end = e
		return fmt.Sprintf("end %d, high watermark %d", e, h), e == h
	})
	return log, tp, end
}

// readAll reads tp from 0 to end with fetch.
func readAll(t *testing.T, tp TopicPartition, end int64, fetch func(from int64) ([]Record, int64, error)) []Record {
	t.Helper()
	var out []Record
	for pos := int64(0); pos < end; {
		recs, next, err := fetch(pos)
		if err != nil {
			t.Fatalf("fetch %s from %d: %v", tp, pos, err)
		}
		out = append(out, recs...)
		if next <= pos {
			t.Fatalf("fetch %s from %d did not move on", tp, pos)
		}
		pos = next
	}
	return out
}

// Restore's own Fetch reads what sarama's does, record for record: offsets, keys (null ones
// too), values (tombstones and empty values apart), timestamps and headers, from batches of
// every codec, skipping control batches and, read_committed, aborted transactions.
func checkRawFetchMatchesSarama(t *testing.T, b kafkatest.Broker) {
	for _, committed := range []bool{false, true} {
		t.Run(fmt.Sprintf("readCommitted=%v", committed), func(t *testing.T) {
			log, tp, end := rawFetchLog(t, b, committed)
			r := log.SaramaReader
			leader, err := log.client.Leader(tp.Topic, tp.Partition)
			must(t, err)
			raw := readAll(t, tp, end, func(from int64) ([]Record, int64, error) {
				return r.fetchRaw(context.Background(), leader.Addr(), tp, from, nil)
			})
			viaSarama := readAll(t, tp, end, func(from int64) ([]Record, int64, error) {
				return r.fetchSarama(leader.Addr(), tp, from, nil)
			})
			// At the end: nothing, and the position stays (the answer's partition holds no
			// records at all).
			if recs, next, err := r.fetchRaw(context.Background(), leader.Addr(), tp, end, nil); err != nil || len(recs) != 0 || next != end {
				t.Fatalf("fetch at the end %d: %d records, next %d, error %v", end, len(recs), next, err)
			}
			want := 5*300 + 3*40
			if committed {
				want -= 40
			}
			if len(raw) != want {
				t.Fatalf("read %d records, want %d", len(raw), want)
			}
			if len(viaSarama) != len(raw) {
				t.Fatalf("sarama read %d records, restore's fetch %d", len(viaSarama), len(raw))
			}
			for i := range raw {
				g, w := raw[i], viaSarama[i]
				if g.Offset != w.Offset || !bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil) ||
					!bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) || g.Timestamp != w.Timestamp ||
					!g.Headers.Equal(&w.Headers) {
					t.Fatalf("record %d: restore's fetch %+v, sarama %+v", i, g, w)
				}
			}
		})
	}
}

func TestRawFetchMatchesSaramaKfake(t *testing.T) {
	checkRawFetchMatchesSarama(t, kafkatest.Embedded(t))
}

func TestIntegrationRawFetchMatchesSarama(t *testing.T) {
	checkRawFetchMatchesSarama(t, kafkatest.Real(t))
}

// Offsets in a record batch's header (format v2) that TestDecodeBatchesCutCorruptLegacy reads
// and changes.
const (
	batchLengthOffset = 8
	batchMagicOffset  = 16
	batchLastDeltaOff = 23
	batchHeaderSize   = 61
)

// decodeBatches on a real response's record batches: a batch cut off at the end is left for
// the next fetch; a changed byte fails the CRC; a message set of magic 0 or 1 is
// errLegacyFormat; records before the offset asked for are dropped.
func TestDecodeBatchesCutCorruptLegacy(t *testing.T) {
	b := kafkatest.Embedded(t)
	log, tp, _ := rawFetchLog(t, b, false)
	r := log.SaramaReader
	leader, err := log.client.Leader(tp.Topic, tp.Partition)
	must(t, err)
	c, _, err := r.rawConn(context.Background(), leader.Addr(), true)
	must(t, err)
	defer c.Close()
	body, err := c.RoundTrip(context.Background(), apiFetch, rawFetchVersion, false, encodeFetch(tp, 0, 0, 1<<20, false))
	must(t, err)
	p, found, err := parseFetch(body, tp)
	if err != nil || !found || p.ErrorCode != 0 {
		t.Fatalf("parse: found %v, code %d, error %v", found, p.ErrorCode, err)
	}
	all, next, err := decodeBatches(p.Records, 0, false, nil, nil)
	must(t, err)
	if len(all) == 0 || next <= all[len(all)-1].Offset {
		t.Fatalf("%d records, next %d", len(all), next)
	}
	// The batch boundaries: offsets and sizes.
	type batch struct {
		start int
		next  int64
	}
	var batches []batch
	for off := 0; off < len(p.Records); {
		base := int64(binary.BigEndian.Uint64(p.Records[off:]))
		last := base + int64(int32(binary.BigEndian.Uint32(p.Records[off+batchLastDeltaOff:])))
		batches = append(batches, batch{off, last + 1})
		off += 12 + int(binary.BigEndian.Uint32(p.Records[off+batchLengthOffset:]))
	}
	if len(batches) < 3 {
		t.Fatalf("%d batches, want several", len(batches))
	}
	// Cut in the middle of the third batch: the first two are read, next is the third's start.
	cut := p.Records[:batches[2].start+30]
	got, n, err := decodeBatches(cut, 0, false, nil, nil)
	must(t, err)
	if n != batches[1].next || len(got) == 0 || got[len(got)-1].Offset >= n {
		t.Fatalf("cut third batch: next %d (want %d), %d records", n, batches[1].next, len(got))
	}
	if !slices.EqualFunc(got, all[:len(got)], func(a, b Record) bool { return a.Offset == b.Offset && bytes.Equal(a.Value, b.Value) }) {
		t.Fatal("the records before a cut batch differ from the whole response's")
	}
	// From an offset inside the second batch: nothing before it.
	from := all[0].Offset + int64(len(got)) - 1
	got, _, err = decodeBatches(p.Records, from, false, nil, nil)
	must(t, err)
	if len(got) == 0 || got[0].Offset != from {
		t.Fatalf("from %d: first record at %d", from, got[0].Offset)
	}
	// A changed byte inside the second batch's records.
	bad := slices.Clone(p.Records)
	bad[batches[1].start+batchHeaderSize+3] ^= 0x40
	if _, _, err := decodeBatches(bad, 0, false, nil, nil); !errors.Is(err, errMalformed) {
		t.Fatalf("corrupted batch: %v, want errMalformed", err)
	}
	// A legacy message set.
	legacy := slices.Clone(p.Records)
	legacy[batchMagicOffset] = 1
	if _, _, err := decodeBatches(legacy, 0, false, nil, nil); !errors.Is(err, errLegacyFormat) {
		t.Fatalf("magic 1: %v, want errLegacyFormat", err)
	}
}
