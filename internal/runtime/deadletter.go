package runtime

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/task"
)

// Header names of dead-letter records (KIP-1034).
const (
	// HeaderErrorException names the error: the Go type of the most specific error in the
	// chain (see ErrorName). Java: the exception's class name.
	HeaderErrorException = "__streams.errors.exception"
	// HeaderErrorStacktrace is the error chain, one line per error, outermost first: "<type>:
	// <message>" (see ErrorChain). Go errors carry no stack; the chain says where the error was
	// wrapped. Java: the exception's stack trace.
	HeaderErrorStacktrace = "__streams.errors.stacktrace"
	HeaderErrorMessage    = "__streams.errors.message"
	HeaderErrorTopic      = "__streams.errors.topic"
	HeaderErrorPartition  = "__streams.errors.partition"
	HeaderErrorOffset     = "__streams.errors.offset"
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
		sarama.RecordHeader{Key: []byte(HeaderErrorException), Value: []byte(ErrorName(cause))},
		sarama.RecordHeader{Key: []byte(HeaderErrorMessage), Value: []byte(cause.Error())},
		sarama.RecordHeader{Key: []byte(HeaderErrorStacktrace), Value: []byte(ErrorChain(cause))},
		sarama.RecordHeader{Key: []byte(HeaderErrorTopic), Value: []byte(rec.Topic)},
		sarama.RecordHeader{Key: []byte(HeaderErrorPartition), Value: []byte(strconv.Itoa(int(rec.Partition)))},
		sarama.RecordHeader{Key: []byte(HeaderErrorOffset), Value: []byte(strconv.FormatInt(rec.Offset, 10))})
	if _, _, err := p.SendMessage(m); err != nil {
		r.log.Error("cannot write to the dead-letter topic", "topic", r.cfg.DeadLetterTopic, "error", err)
	}
}

// wrapperType reports whether err is one of the standard library's wrappers (fmt.Errorf's
// %w, errors.Join) or a plain errors.New value, whose type says nothing about the error.
func wrapperType(err error) bool {
	switch fmt.Sprintf("%T", err) {
	case "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError", "*errors.errorString":
		return true
	}
	return false
}

// chain lists err and the errors it wraps, outermost first (depth first through joined
// errors).
func chain(err error) []error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		for e != nil {
			out = append(out, e)
			switch u := e.(type) {
			case interface{ Unwrap() []error }:
				for _, x := range u.Unwrap() {
					walk(x)
				}
				return
			case interface{ Unwrap() error }:
				e = u.Unwrap()
			default:
				return
			}
		}
	}
	walk(err)
	return out
}

// ErrorName names err for the dead-letter header: the Go type of the outermost error in its
// chain that is not a standard wrapper or an errors.New value (e.g.
// "*task.DeserializationError", "*strconv.NumError"); when there is none, "error: " and the
// innermost error's message (a sentinel such as "serde: wrong type").
func ErrorName(err error) string {
	if err == nil {
		return ""
	}
	errs := chain(err)
	for _, e := range errs {
		if !wrapperType(e) {
			return fmt.Sprintf("%T", e)
		}
	}
	return "error: " + errs[len(errs)-1].Error()
}

// ErrorChain is err's chain for the dead-letter header: one line per error, outermost first,
// "<Go type>: <message>".
func ErrorChain(err error) string {
	var b strings.Builder
	for i, e := range chain(err) {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%T: %s", e, e.Error())
	}
	return b.String()
}
