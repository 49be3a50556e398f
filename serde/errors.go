package serde

import (
	"errors"
	"fmt"
)

// Sentinel errors wrapped by *Error; test for them with errors.Is.
var (
	// ErrCorrupt: the input bytes cannot be decoded. Every error a
	// Deserialize of this package returns for its input matches it (only
	// ErrWrongType, a serde of another Go type, does not); ErrInvalidValue or
	// ErrUnsupported, matched as well, say more where they apply. It covers
	// a length the serde cannot decode (7 bytes for Long; Java: SerializationException "Size of
	// data received by LongDeserializer is not 8", or
	// NegativeArraySizeException for windowed keys shorter than their
	// timestamps), non-nil bytes for Void (Java: IllegalArgumentException
	// "Data should be null for a VoidDeserializer."), a windowed key whose
	// window Java rejects (negative start, end before start, or for time
	// windows end equal to start; Java: IllegalArgumentException from
	// Window), or an inconsistent structured encoding (ListSerde: an unknown
	// strategy flag, negative or oversized counts, input that ends early;
	// Java: SerializationException or KafkaException), and the
	// deserialization failures below. The message says which. A record
	// whose bytes are corrupt is what a deserialization exception handler
	// may skip.
	ErrCorrupt = errors.New("corrupt data")
	// ErrInvalidValue: a value that cannot be encoded or decoded although
	// the bytes have the right length: a Boolean byte other than 0x00/0x01,
	// UUID text that java.util.UUID.fromString rejects, malformed JSON (these
	// three on Deserialize also match ErrCorrupt), the key of
	// a windowed key serialized to nil bytes (Java: NullPointerException), a
	// list element serialized to another size than the list's fixed size.
	ErrInvalidValue = errors.New("invalid value")
	// ErrUnsupported: the serde cannot handle this input in its
	// configuration, e.g. constant-size list data for an inner serde that
	// has no fixed size, or a null list element for an element type that
	// cannot hold nil (use Nullable); on Deserialize it also matches
	// ErrCorrupt.
	ErrUnsupported = errors.New("unsupported")
	// ErrWrongType: Untyped's Serialize received a value of another type
	// than the wrapped serde's.
	ErrWrongType = errors.New("wrong type")
)

// Op names the operation that failed in an *Error.
type Op string

// The operations reported in Error.Op.
const (
	OpSerialize   Op = "serialize"
	OpDeserialize Op = "deserialize"
)

// Error is the error every serde in this package returns. It names the serde
// (as its String method does, e.g. "Long" or "ListSerde<String>"), the
// operation, the topic, and for deserialization the number of input bytes.
// Err is a sentinel error of this package, possibly wrapped with detail, or
// an inner serde's *Error; Unwrap returns it.
type Error struct {
	Serde string // serde name, e.g. "Long"
	Op    Op     // OpSerialize or OpDeserialize
	Topic string // topic passed to Serialize/Deserialize
	Len   int    // input length in bytes for OpDeserialize; -1 for OpSerialize
	Err   error  // cause; wraps a sentinel error
}

// Error formats as, for example,
// `serde Long: deserialize 7 bytes from topic "orders": corrupt data: wrong length, want 8 bytes`.
func (e *Error) Error() string {
	if e.Op == OpDeserialize {
		return fmt.Sprintf("serde %s: deserialize %d bytes from topic %q: %v", e.Serde, e.Len, e.Topic, e.Err)
	}
	return fmt.Sprintf("serde %s: serialize for topic %q: %v", e.Serde, e.Topic, e.Err)
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

func deserErr(name, topic string, data []byte, err error) error {
	return &Error{Serde: name, Op: OpDeserialize, Topic: topic, Len: len(data), Err: err}
}

func serErr(name, topic string, err error) error {
	return &Error{Serde: name, Op: OpSerialize, Topic: topic, Len: -1, Err: err}
}

func wrongLen(name, topic string, data []byte, want int) error {
	return deserErr(name, topic, data, fmt.Errorf("%w: wrong length, want %d bytes", ErrCorrupt, want))
}
