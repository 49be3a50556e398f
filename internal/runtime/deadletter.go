package runtime

import (
	"fmt"
	"strconv"
	"strings"

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

// DeadLetterRecord returns the function building the dead-letter record of an input record a
// handler skipped (deserialization, processing or production; in a punctuation rec is empty
// with partition and offset -1, and the topic header is null): topic, rec's raw key, value, timestamp and headers, plus headers naming the
// error and where the record came from (KIP-1034). The default partitioner places it (murmur2
// of the key). The task sends it through the thread's producer like any output, so under
// exactly-once it is part of the task's transaction: written once, with the offsets that skip
// the record, or not at all (Java: the handler's dead-letter records go through the task's
// RecordCollector).
func DeadLetterRecord(topic string) func(rec task.RawRecord, cause error) task.OutRecord {
	return func(rec task.RawRecord, cause error) task.OutRecord {
		out := task.OutRecord{Topic: topic, Partition: -1, Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp}
		for h := range rec.Headers.All() {
			out.Headers.Add(h.Key, h.Value)
		}
		out.Headers.Add(HeaderErrorException, []byte(ErrorName(cause)))
		out.Headers.Add(HeaderErrorMessage, []byte(cause.Error()))
		out.Headers.Add(HeaderErrorStacktrace, []byte(ErrorChain(cause)))
		var topic []byte // null in a punctuation, as Java writes a null topic
		if rec.Topic != "" {
			topic = []byte(rec.Topic)
		}
		out.Headers.Add(HeaderErrorTopic, topic)
		out.Headers.Add(HeaderErrorPartition, []byte(strconv.Itoa(int(rec.Partition))))
		out.Headers.Add(HeaderErrorOffset, []byte(strconv.FormatInt(rec.Offset, 10)))
		return out
	}
}

// wrapperType reports whether err is one of the standard library's wrappers (fmt.Errorf's
// %w, errors.Join), a plain errors.New value, or the task's marker of a sink's serialization
// failure: types that say nothing about the error.
func wrapperType(err error) bool {
	switch fmt.Sprintf("%T", err) {
	case "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError", "*errors.errorString", "*task.serializationError":
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

// deadLetterSendFailure sends the dead-letter record of the input record behind rec, an output
// record the producer failed to send and the production handler continued past (at least
// once only: under exactly-once a failed send fails the transaction). Nothing without a
// dead-letter topic or when rec has no source (a punctuation's output, a dead-letter record).
// Java: the dead-letter records of ProductionExceptionHandler's response, with the source
// record's raw key and value (KIP-1034).
func (o *output) deadLetterSendFailure(rec task.OutRecord, cause error) error {
	if o.rt.cfg.DeadLetterTopic == "" || rec.Source == nil {
		return nil
	}
	o.deadLettered.Add(1)
	o.obs.DeadLetters.Add(1)
	dl := DeadLetterRecord(o.rt.cfg.DeadLetterTopic)(*rec.Source, cause)
	if err := (collector{o}).Send(dl); err != nil {
		return fmt.Errorf("sending the dead-letter record of topic=%s partition=%d offset=%d: %w",
			rec.Source.Topic, rec.Source.Partition, rec.Source.Offset, err)
	}
	return nil
}
