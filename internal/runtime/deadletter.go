package runtime

import (
	"fmt"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/task"
)

// Header names of dead-letter records (KIP-1034).
const (
	HeaderErrorException = "__streams.errors.exception"
	HeaderErrorMessage   = "__streams.errors.message"
	HeaderErrorTopic     = "__streams.errors.topic"
	HeaderErrorPartition = "__streams.errors.partition"
	HeaderErrorOffset    = "__streams.errors.offset"
)

// DeadLetter writes rec (raw key, value and headers) to the dead-letter topic with headers
// naming the error and where the record came from (KIP-1034). It uses a separate idempotent
// producer and waits for the acknowledgement; under exactly-once it is outside the thread's
// transaction, so a record may be dead-lettered twice after an abort. Failures are logged.
func (r *Runtime) DeadLetter(rec task.RawRecord, cause error) {
	if r.cfg.DeadLetterTopic == "" {
		return
	}
	r.mu.Lock()
	if r.dlq == nil {
		pc := r.cfg.Sarama()
		pc.ClientID = r.cfg.ClientID + "-dlq-producer"
		pc.Producer.Return.Successes = true
		pc.Producer.RequiredAcks = sarama.WaitForAll
		pc.Producer.Partitioner = sarama.NewMurmur2Partitioner
		p, err := sarama.NewSyncProducer(r.cfg.Brokers, pc)
		if err != nil {
			r.mu.Unlock()
			r.log.Error("cannot create dead-letter producer", "error", err)
			return
		}
		r.dlq = p
	}
	p := r.dlq
	r.mu.Unlock()
	m := &sarama.ProducerMessage{Topic: r.cfg.DeadLetterTopic, Timestamp: time.UnixMilli(rec.Timestamp)}
	if rec.Key != nil {
		m.Key = sarama.ByteEncoder(rec.Key)
	}
	if rec.Value != nil {
		m.Value = sarama.ByteEncoder(rec.Value)
	}
	for h := range rec.Headers.All() {
		m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
	}
	m.Headers = append(m.Headers,
		sarama.RecordHeader{Key: []byte(HeaderErrorException), Value: []byte(fmt.Sprintf("%T", cause))},
		sarama.RecordHeader{Key: []byte(HeaderErrorMessage), Value: []byte(cause.Error())},
		sarama.RecordHeader{Key: []byte(HeaderErrorTopic), Value: []byte(rec.Topic)},
		sarama.RecordHeader{Key: []byte(HeaderErrorPartition), Value: []byte(strconv.Itoa(int(rec.Partition)))},
		sarama.RecordHeader{Key: []byte(HeaderErrorOffset), Value: []byte(strconv.FormatInt(rec.Offset, 10))})
	if _, _, err := p.SendMessage(m); err != nil {
		r.log.Error("cannot write to the dead-letter topic", "topic", r.cfg.DeadLetterTopic, "error", err)
	}
}
