package runtime

import (
	"errors"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/task"
)

// collector hands a task's records to the thread's producer buffer.
type collector struct{ th *thread }

// Send implements task.Collector.
func (c collector) Send(rec task.OutRecord) error {
	th := c.th
	if th.discard {
		return nil
	}
	om := th.slab().next()
	m := &om.msg
	m.Topic, m.Timestamp, m.Partition = rec.Topic, time.UnixMilli(rec.Timestamp), -1
	if rec.Key != nil {
		om.key.b = rec.Key
		m.Key = &om.key
	}
	if rec.Value != nil {
		om.value.b = rec.Value
		m.Value = &om.value
	}
	if rec.Partition >= 0 {
		m.Partition = rec.Partition
		m.Metadata = explicitPartition{}
	}
	if rec.Headers.Len() > 0 {
		hs := rec.Headers
		for h := range hs.All() {
			m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
		}
	}
	th.out = append(th.out, m)
	th.outRecs = append(th.outRecs, rec)
	return nil
}

// PartitionsFor implements task.Collector.
func (c collector) PartitionsFor(topic string) (int32, error) {
	ps, err := c.th.client.Partitions(topic)
	if err != nil {
		return 0, err
	}
	return int32(len(ps)), nil
}

// bytesEncoder is a sarama.Encoder of bytes; used by pointer, so that setting a message's key
// or value allocates nothing (a sarama.ByteEncoder in the interface would).
type bytesEncoder struct{ b []byte }

// Encode implements sarama.Encoder.
func (e *bytesEncoder) Encode() ([]byte, error) { return e.b, nil }

// Length implements sarama.Encoder.
func (e *bytesEncoder) Length() int { return len(e.b) }

// outMsg is a producer message with the encoders of its key and value.
type outMsg struct {
	msg        sarama.ProducerMessage
	key, value bytesEncoder
}

// msgSlabChunk is the number of messages of one chunk of a msgSlab; msgSlabKeep bounds the
// chunks kept for reuse (about 4 MiB of messages).
const (
	msgSlabChunk = 256
	msgSlabKeep  = 64
)

// msgSlab hands out producer messages from chunks that are reused once the messages were sent:
// no allocation per produced record. Messages handed out stay valid until reset.
type msgSlab struct {
	chunks [][]outMsg
	ci, i  int // next message: chunks[ci][i]
}

// next returns a zeroed message.
func (s *msgSlab) next() *outMsg {
	if s.ci == len(s.chunks) {
		s.chunks = append(s.chunks, make([]outMsg, msgSlabChunk))
	}
	c := s.chunks[s.ci]
	m := &c[s.i]
	*m = outMsg{}
	if s.i++; s.i == len(c) {
		s.ci, s.i = s.ci+1, 0
	}
	return m
}

// reset makes every message handed out so far reusable: call it only when none of them is
// referenced any more (sent, and the send's results read).
func (s *msgSlab) reset() {
	s.ci, s.i = 0, 0
	if len(s.chunks) > msgSlabKeep {
		clear(s.chunks[msgSlabKeep:])
		s.chunks = s.chunks[:msgSlabKeep]
	}
}

// sendBatch is a batch of records handed to the producer by flushAsync, its acknowledgements
// not yet handled.
type sendBatch struct {
	msgs []*sarama.ProducerMessage
	recs []task.OutRecord
	slab *msgSlab
	done chan error
}

// slab returns the slab the collector takes messages from.
func (th *thread) slab() *msgSlab {
	if th.outMsgs == nil {
		th.outMsgs = &msgSlab{}
	}
	return th.outMsgs
}

// flushAsync hands the buffered records to the producer and returns without waiting for the
// acknowledgements, so that processing goes on while they are sent (as Java's producer sends
// in the background). At most one batch is in flight: the previous one is awaited first (its
// results handled), which also keeps the production order across batches. Under exactly-once
// the transaction is begun here if needed. Java: RecordCollectorImpl.send, whose errors
// surface at the next send, flush or commit.
func (th *thread) flushAsync() error {
	if err := th.awaitSend(); err != nil {
		return err
	}
	if len(th.out) == 0 {
		return nil
	}
	if th.rt.cfg.ExactlyOnce && !th.txnOpen {
		if err := th.producer.BeginTxn(); err != nil {
			return kafkaErr("begin transaction", err)
		}
		th.txnOpen = true
	}
	b := &sendBatch{msgs: th.out, recs: th.outRecs, slab: th.slab(), done: make(chan error, 1)}
	th.out, th.outRecs = th.spareOut, th.spareRecs
	th.spareOut, th.spareRecs = nil, nil
	th.outMsgs, th.spareMsgs = th.spareMsgs, nil
	p := th.producer
	go func() { b.done <- sendAll(p, b.msgs) }()
	th.inflight = b
	return nil
}

// errProducerClosed is returned for a batch whose results were cut short by the producer's
// closing.
var errProducerClosed = errors.New("producer closed before every record of the batch was acknowledged")

// sendAll sends msgs with the thread's producer and waits until each is acknowledged or failed,
// as sarama's SyncProducer.SendMessages does (nil, or sarama.ProducerErrors of the failed
// ones), but with two channel hand-offs per record where SendMessages has five: the messages go
// straight to the producer's input and the results are counted off its Successes and Errors.
// Only one batch is in flight per producer at a time (flushAsync awaits the previous one), so
// every result read belongs to msgs. If the producer is closed meanwhile, it returns
// errProducerClosed.
func sendAll(p sarama.AsyncProducer, msgs []*sarama.ProducerMessage) error {
	go func() {
		for _, m := range msgs {
			p.Input() <- m
		}
	}()
	var errs sarama.ProducerErrors
	succ, fail := p.Successes(), p.Errors()
	for n := 0; n < len(msgs); n++ {
		select {
		case _, ok := <-succ:
			if !ok {
				return errProducerClosed
			}
		case e, ok := <-fail:
			if !ok {
				return errProducerClosed
			}
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// awaitSend waits for the batch in flight, if any, and handles its results (see sent).
func (th *thread) awaitSend() error {
	b := th.inflight
	if b == nil {
		return nil
	}
	th.inflight = nil
	err := <-b.done
	err = th.sent(b.msgs, b.recs, err)
	// Every message was acknowledged or failed: sarama holds none of them any more.
	b.slab.reset()
	th.spareMsgs = b.slab
	th.keepSpare(b)
	return err
}

// keepSpare keeps the slices of batch b, whose results were handled, for the next batch the
// collector fills (no growing of new slices per batch); the records' bytes are let go.
func (th *thread) keepSpare(b *sendBatch) {
	if cap(b.msgs) > maxSpareOut {
		return
	}
	clear(b.msgs)
	clear(b.recs)
	th.spareOut, th.spareRecs = b.msgs[:0], b.recs[:0]
}

// dropSend waits for the batch in flight, if any, and drops its results (the session ended
// with a failure: the tasks are closed dirty and reprocess from the last commit).
func (th *thread) dropSend() {
	if b := th.inflight; b != nil {
		th.inflight = nil
		<-b.done
		b.slab.reset()
		th.spareMsgs = b.slab
		th.keepSpare(b)
	}
}
