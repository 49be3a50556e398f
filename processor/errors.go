package processor

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
)

// Errors returned while processing (by the engine through the contexts, by the extractors
// and the typed adapters). Match them with errors.Is.
var (
	// ErrInvalidTimestamp: a record has a negative timestamp where one is not allowed (a
	// forwarded record, or an input record under FailOnInvalidTimestamp). Java: the
	// StreamsException thrown by the Record constructor or the extractor.
	ErrInvalidTimestamp = errors.New("invalid (negative) timestamp")
	// ErrInvalidSchedule: Schedule or ScheduleAt got an interval below 1 ms, or ScheduleAt a
	// start time before the Unix epoch; the error wrapping it names the node and the value.
	// Java: the IllegalArgumentException of schedule() ("The minimum supported start time is
	// Instant.EPOCH." for the start).
	ErrInvalidSchedule = errors.New("invalid punctuation schedule")
	// ErrUnknownChild: ForwardTo named a node that is not a child of the forwarding node.
	// Java: StreamsException "Unknown downstream node".
	ErrUnknownChild = errors.New("unknown downstream node")
	// ErrWrongStoreType: a store asked for with types or a kind it does not have:
	// GetStateStore's type argument, a test driver's or an interactive query's typed view
	// ([*StoreTypeError], wrapping it, says which). It is not a "retry later" error.
	// Java: a ClassCastException, or InvalidStateStoreException "the queryable store type ...
	// does not accept the actual store type".
	ErrWrongStoreType = errors.New("state store has another type")
	// ErrInvalidTaskID: ParseTaskID got a malformed id.
	ErrInvalidTaskID = errors.New("invalid task id")
	// ErrRecordTypeMismatch: a record's key or value does not have the type the receiving
	// typed processor, serializer or extractor expects (a topology wired with mismatched
	// types). Java: a ClassCastException.
	ErrRecordTypeMismatch = errors.New("record key or value has an unexpected type")
)

// StoreTypeError is a store asked for with types (or a kind) it does not have: returned by
// [GetStateStore], by interactive queries and by the test driver's typed store getters. It
// wraps [ErrWrongStoreType]. Java: InvalidStateStoreException ("... is not a ...").
type StoreTypeError struct {
	// Store is the store name.
	Store string
	// Want describes what was asked for: a Go type, or for a DSL store e.g. "key-value store of
	// string keys and string values". Got describes the store the same way, e.g.
	// "timestamped key-value store of string keys and float64 values".
	Want, Got string
	// Use lists the views that fit the store (e.g. "KeyValueStore[string, float64] or
	// TimestampedKeyValueStore[string, float64]"); "" when not known.
	Use string
}

// Error describes the mismatch and, when known, what to ask for instead.
func (e *StoreTypeError) Error() string {
	msg := fmt.Sprintf("state store %q is a %s, not a %s", e.Store, e.Got, e.Want)
	if e.Use != "" {
		msg += "; ask for " + e.Use
	}
	return msg
}

// Unwrap returns [ErrWrongStoreType].
func (e *StoreTypeError) Unwrap() error { return ErrWrongStoreType }

// RecordTypeError reports a key or value of an unexpected type reaching a typed node. It
// wraps [ErrRecordTypeMismatch].
type RecordTypeError struct {
	// Node is the node name (empty when unknown).
	Node string
	// Field is "key" or "value".
	Field string
	// Want is the expected type, Got the actual dynamic type (Go syntax).
	Want, Got string
}

// Error describes the mismatch.
func (e *RecordTypeError) Error() string {
	where := ""
	if e.Node != "" {
		where = " at node " + e.Node
	}
	return fmt.Sprintf("record %s%s is a %s, expected %s; check the types of the connected nodes and serdes", e.Field, where, e.Got, e.Want)
}

// Unwrap returns [ErrRecordTypeMismatch].
func (e *RecordTypeError) Unwrap() error { return ErrRecordTypeMismatch }

func typeName[T any]() string { return reflect.TypeFor[T]().String() }

func typeNameOf(v any) string {
	if v == nil {
		return "nil"
	}
	return reflect.TypeOf(v).String()
}

func itoa(i int) string { return strconv.Itoa(i) }
