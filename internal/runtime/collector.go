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
	m.Metadata = om // the result reader finds the message's batch through it
	if rec.Partition >= 0 {
		m.Partition = rec.Partition
		om.explicit = true
	}
	if rec.Headers.Len() > 0 {
		hs := rec.Headers
		for h := range hs.All() {
			m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
		}
	}
	th.out = append(th.out, m)
	th.outRecs = append(th.outRecs, rec)
	if th.committing && len(th.out) >= maxOutBuffer && th.commitSendErr == nil {
		// A commit's cache flush can forward a whole cache's worth of records: send them in
		// batches as they come (bounded by maxInflight) rather than hold them all. An error is
		// not the task's to handle: commit returns it once the caches are flushed.
		th.commitSendErr = th.flushAsync()
	}
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

// outMsg is a producer message with the encoders of its key and value; the message's Metadata
// points back to it.
type outMsg struct {
	msg        sarama.ProducerMessage
	key, value bytesEncoder
	// explicit: Partition was chosen by the task (changelog writes, StreamPartitioner results).
	explicit bool
	// batch is the batch the message was sent in (set by flushAsync).
	batch *sendBatch
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
	// done receives the batch's outcome once every message was acknowledged or failed.
	done chan error
	// gone is closed when the result reader of the batch's producer ended (producer closed).
	gone <-chan struct{}
	// pending and errs are the result reader's (see result): messages without a result yet,
	// and the errors so far.
	pending int
	errs    sarama.ProducerErrors
}

// slab returns the slab the collector takes messages from.
func (th *thread) slab() *msgSlab {
	if th.outMsgs == nil {
		th.outMsgs = &msgSlab{}
	}
	return th.outMsgs
}

// maxInflight bounds the batches handed to the producer whose results were not handled yet;
// flushAsync awaits the oldest when there are that many.
const maxInflight = 4

// flushAsync hands the buffered records to the producer as one batch and returns without
// waiting for the acknowledgements, so that processing goes on while they are sent (as Java's
// producer sends in the background). Up to maxInflight batches are in flight (sent one after
// the other by the producer's feeder, so production order is kept); batches already acknowledged
// are handled first, and the oldest is awaited when the limit is reached. Under exactly-once the
// transaction is begun here if needed. Java: RecordCollectorImpl.send, whose errors surface at
// the next send, flush or commit.
func (th *thread) flushAsync() error {
	if err := th.reapSends(); err != nil {
		return err
	}
	if len(th.out) == 0 {
		return nil
	}
	for len(th.inflight) >= maxInflight {
		if err := th.awaitOldest(); err != nil {
			return err
		}
	}
	if th.rt.cfg.ExactlyOnce && !th.txnOpen {
		if err := th.producer.BeginTxn(); err != nil {
			return kafkaErr("begin transaction", err)
		}
		th.txnOpen = true
	}
	b := &sendBatch{msgs: th.out, recs: th.outRecs, slab: th.slab(), done: make(chan error, 1),
		gone: th.resultsGone, pending: len(th.out)}
	for _, m := range b.msgs {
		m.Metadata.(*outMsg).batch = b
	}
	th.out, th.outRecs = nil, nil
	if n := len(th.spareOuts); n > 0 {
		th.out, th.outRecs = th.spareOuts[n-1], th.spareRecs[n-1]
		th.spareOuts, th.spareRecs = th.spareOuts[:n-1], th.spareRecs[:n-1]
	}
	th.outMsgs = nil
	if n := len(th.spareSlabs); n > 0 {
		th.outMsgs = th.spareSlabs[n-1]
		th.spareSlabs = th.spareSlabs[:n-1]
	}
	th.inflight = append(th.inflight, b)
	th.feed <- b // never blocks: the feed holds at most the batches in flight
	return nil
}

// errProducerClosed is returned for a batch whose results were cut short by the producer's
// closing.
var errProducerClosed = errors.New("producer closed before every record of the batch was acknowledged")

// startSender starts the goroutines of a new producer p: the feeder, which sends the messages
// of each batch handed to feed, in order, to p's input (one feeder, so batches never
// interleave), and the result reader, which counts p's acknowledgements and errors off its
// Successes and Errors channels into the batch of each message (see sendBatch.result) and
// closes gone when p is closed. Two channel hand-offs per record where sarama's
// SyncProducer.SendMessages has five.
func startSender(p sarama.AsyncProducer) (feed chan *sendBatch, fed, gone chan struct{}) {
	feed, fed, gone = make(chan *sendBatch, maxInflight), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(fed)
		for b := range feed {
			for _, m := range b.msgs {
				p.Input() <- m
			}
		}
	}()
	go func() {
		defer close(gone)
		succ, fail := p.Successes(), p.Errors()
		for succ != nil || fail != nil {
			select {
			case m, ok := <-succ:
				if !ok {
					succ = nil
					continue
				}
				if om, ok := m.Metadata.(*outMsg); ok && om.batch != nil {
					om.batch.result(nil)
				}
			case e, ok := <-fail:
				if !ok {
					fail = nil
					continue
				}
				if om, ok := e.Msg.Metadata.(*outMsg); ok && om.batch != nil {
					om.batch.result(e)
				}
			}
		}
	}()
	return feed, fed, gone
}

// result counts the outcome of one message of b (e nil: acknowledged); after the last one, b's
// outcome (nil or the sarama.ProducerErrors of its failed messages) is sent on done. Only the
// result reader calls it.
func (b *sendBatch) result(e *sarama.ProducerError) {
	if e != nil {
		b.errs = append(b.errs, e)
	}
	if b.pending--; b.pending == 0 {
		if len(b.errs) > 0 {
			b.done <- b.errs
		} else {
			b.done <- nil
		}
	}
}

// wait waits for b's outcome; errProducerClosed if its producer was closed first.
func (b *sendBatch) wait() error {
	select {
	case err := <-b.done:
		return err
	case <-b.gone:
		select {
		case err := <-b.done:
			return err
		default:
			return errProducerClosed
		}
	}
}

// reapSends handles, oldest first, the batches in flight whose results are all in, without
// waiting for the others.
func (th *thread) reapSends() error {
	for len(th.inflight) > 0 {
		b := th.inflight[0]
		select {
		case err := <-b.done:
			if err := th.finishBatch(b, err); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

// awaitOldest waits for the oldest batch in flight and handles its results.
func (th *thread) awaitOldest() error {
	return th.finishBatch(th.inflight[0], th.inflight[0].wait())
}

// finishBatch removes b, the oldest batch in flight, whose outcome is err, handles its results
// (see sent) and keeps its slab and slices for reuse.
func (th *thread) finishBatch(b *sendBatch, err error) error {
	th.inflight[0] = nil
	th.inflight = th.inflight[1:]
	if len(th.inflight) == 0 {
		th.inflight = th.inflight[:0:0]
	}
	err = th.sent(b.msgs, b.recs, err)
	th.recycle(b)
	return err
}

// awaitSend waits for every batch in flight and handles their results, oldest first (see
// sent); it stops at the first error, leaving later batches in flight.
func (th *thread) awaitSend() error {
	for len(th.inflight) > 0 {
		if err := th.awaitOldest(); err != nil {
			return err
		}
	}
	return nil
}

// recycle keeps the slab and slices of batch b, whose messages were all acknowledged or
// failed (sarama holds none of them any more) and whose results were handled, for the next
// batches the collector fills; the records' bytes are let go.
func (th *thread) recycle(b *sendBatch) {
	b.slab.reset()
	if len(th.spareSlabs) < maxInflight {
		th.spareSlabs = append(th.spareSlabs, b.slab)
	}
	if cap(b.msgs) > maxSpareOut || len(th.spareOuts) >= maxInflight {
		return
	}
	clear(b.msgs)
	clear(b.recs)
	th.spareOuts = append(th.spareOuts, b.msgs[:0])
	th.spareRecs = append(th.spareRecs, b.recs[:0])
}

// dropSend waits for every batch in flight and drops their results (the session ended with a
// failure: the tasks are closed dirty and reprocess from the last commit).
func (th *thread) dropSend() {
	for len(th.inflight) > 0 {
		b := th.inflight[0]
		_ = b.wait()
		th.inflight[0] = nil
		th.inflight = th.inflight[1:]
		th.recycle(b)
	}
	th.inflight = nil
}
