package serde

import (
	"bytes"
	"iter"
	"slices"
)

// Header is one record header: a key and a value that may be nil (Java:
// org.apache.kafka.common.header.Header; a nil Value is Java's null value).
type Header struct {
	Key   string
	Value []byte
}

// Headers is the ordered list of a record's headers; keys may repeat (Java:
// org.apache.kafka.common.header.Headers, implemented by RecordHeaders). The
// zero value is an empty list ready to use. Read methods accept a nil
// *Headers as empty. Copying a Headers value shares its storage; use Clone
// for an independent copy. Headers is not safe for concurrent mutation.
type Headers struct {
	list []Header
}

// NewHeaders returns a Headers holding hs in order (the slice is copied, the
// values are not).
func NewHeaders(hs ...Header) *Headers {
	return &Headers{list: slices.Clone(hs)}
}

// Add appends a header with the given key and value (Java:
// Headers.add(key, value)) and returns h for chaining.
func (h *Headers) Add(key string, value []byte) *Headers {
	h.list = append(h.list, Header{Key: key, Value: value})
	return h
}

// Remove deletes every header with the given key (Java: Headers.remove) and
// returns h for chaining.
func (h *Headers) Remove(key string) *Headers {
	if h == nil {
		return h
	}
	h.list = slices.DeleteFunc(h.list, func(x Header) bool { return x.Key == key })
	return h
}

// LastHeader returns the last header with the given key and true, or a zero
// Header and false if there is none (Java: Headers.lastHeader, which returns
// null).
func (h *Headers) LastHeader(key string) (Header, bool) {
	if h == nil {
		return Header{}, false
	}
	for i := len(h.list) - 1; i >= 0; i-- {
		if h.list[i].Key == key {
			return h.list[i], true
		}
	}
	return Header{}, false
}

// Get yields, in order, the headers with the given key (Java:
// Headers.headers(key)).
func (h *Headers) Get(key string) iter.Seq[Header] {
	return func(yield func(Header) bool) {
		if h == nil {
			return
		}
		for _, x := range h.list {
			if x.Key == key && !yield(x) {
				return
			}
		}
	}
}

// All yields every header in order (Java: iterating Headers).
func (h *Headers) All() iter.Seq[Header] {
	return func(yield func(Header) bool) {
		if h == nil {
			return
		}
		for _, x := range h.list {
			if !yield(x) {
				return
			}
		}
	}
}

// Len returns the number of headers.
func (h *Headers) Len() int {
	if h == nil {
		return 0
	}
	return len(h.list)
}

// ToSlice returns a copy of the headers in order (Java: Headers.toArray);
// the values are shared, not copied.
func (h *Headers) ToSlice() []Header {
	if h == nil {
		return nil
	}
	return slices.Clone(h.list)
}

// Clone returns an independent deep copy: later changes to either the list
// or the value bytes of one do not show in the other. A nil value stays nil.
func (h *Headers) Clone() Headers {
	if h == nil || len(h.list) == 0 {
		return Headers{}
	}
	out := make([]Header, len(h.list))
	for i, x := range h.list {
		out[i] = Header{Key: x.Key, Value: cloneBytes(x.Value)}
	}
	return Headers{list: out}
}

// Equal reports whether h and o hold the same keys and values in the same
// order (a nil value equals only a nil value).
func (h *Headers) Equal(o *Headers) bool {
	if h.Len() != o.Len() {
		return false
	}
	for i := range h.Len() {
		a, b := h.list[i], o.list[i]
		if a.Key != b.Key || (a.Value == nil) != (b.Value == nil) || !bytes.Equal(a.Value, b.Value) {
			return false
		}
	}
	return true
}

// cloneBytes copies b, keeping nil as nil and empty as non-nil empty.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
