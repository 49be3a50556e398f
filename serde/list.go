package serde

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ListStrategy is the layout flag Java's ListSerializer writes as the first
// byte (Java: Serdes.ListSerde.SerializationStrategy ordinals).
type ListStrategy byte

const (
	// ListConstantSize (0) is used for inner serdes with a FixedSize:
	// int32 count of nulls, that many int32 indexes of the null elements,
	// int32 element count, then every non-null element's bytes back to back.
	ListConstantSize ListStrategy = 0
	// ListVariableSize (1) is used for all other inner serdes: int32
	// element count, then per element an int32 byte length followed by the
	// bytes, or the length -1 and no bytes for a null element.
	ListVariableSize ListStrategy = 1
)

// String returns Java's enum constant name.
func (s ListStrategy) String() string {
	switch s {
	case ListConstantSize:
		return "CONSTANT_SIZE"
	case ListVariableSize:
		return "VARIABLE_SIZE"
	}
	return fmt.Sprintf("ListStrategy(%d)", byte(s))
}

// ListSerde returns the serde of []T whose elements use inner (Java:
// Serdes.ListSerde(ArrayList.class, inner), i.e. ListSerializer and
// ListDeserializer of kafka-clients 4.x). Its name is "ListSerde<inner>".
//
// Layout, big-endian: one strategy byte, then
//
//	ListConstantSize (inner has FixedSize n: Short, Integer, Float, Long,
//	Double, UUID, or Nullable of one of them):
//	    int32 nullCount ‖ nullCount × int32 index ‖ int32 size ‖ (size-nullCount) × n bytes
//	ListVariableSize (every other inner serde, including String, Boolean,
//	ByteArray):
//	    int32 size ‖ size × (int32 len ‖ len bytes, or int32 -1 for null)
//
// An element is null when inner serializes it to nil bytes: a nil pointer
// under Nullable, a nil []byte under ByteArray. A nil list serializes to nil
// bytes; an empty list to the header only.
//
// Deserialize follows Java 4.x: nil bytes give a nil slice; any other input
// gives a non-nil slice (empty for size 0). Whichever strategy the data
// names is decoded, but constant-size data needs an inner serde with a
// FixedSize (else an error wrapping ErrCorrupt and ErrUnsupported). Errors
// wrapping ErrCorrupt: empty input,
// a strategy byte other than 0 or 1, a negative null count or one above
// len(data)/4, a negative size or one above len(data), an element length
// below -1 or above len(data), input ending early. A null element decodes to
// the zero value of T when T is nillable (use Nullable for value types);
// for other T it is an error wrapping ErrCorrupt and ErrUnsupported. Null indexes outside the
// list and bytes after the last element are ignored, as Java ignores them.
// Errors of inner are wrapped with the element index.
func ListSerde[T any](inner Serde[T]) Serde[[]T] {
	return &listSerde[T]{inner: inner, size: fixedSize(inner), nillable: nillable[T](),
		name: "ListSerde<" + Name(inner) + ">"}
}

type listSerde[T any] struct {
	inner    Serde[T]
	size     int // inner fixed size, 0 if none
	nillable bool
	name     string
}

func (l *listSerde[T]) String() string { return l.name }

// Strategy returns the layout Serialize writes.
func (l *listSerde[T]) Strategy() ListStrategy {
	if l.size > 0 {
		return ListConstantSize
	}
	return ListVariableSize
}

func (l *listSerde[T]) Serialize(topic string, headers *Headers, data []T) ([]byte, error) {
	if data == nil {
		return nil, nil
	}
	if len(data) > math.MaxInt32 {
		return nil, serErr(l.name, topic, fmt.Errorf("%w: %d elements do not fit an int32 count", ErrUnsupported, len(data)))
	}
	elems := make([][]byte, len(data))
	total, nulls := 0, 0
	for i, e := range data {
		b, err := l.inner.Serialize(topic, headers, e)
		if err != nil {
			return nil, serErr(l.name, topic, fmt.Errorf("element %d: %w", i, err))
		}
		if b == nil {
			nulls++
			continue
		}
		if l.size > 0 && len(b) != l.size {
			return nil, serErr(l.name, topic, fmt.Errorf("%w: element %d serialized to %d bytes, want %d", ErrInvalidValue, i, len(b), l.size))
		}
		elems[i] = b
		total += len(b)
	}
	var out []byte
	if l.size > 0 {
		out = make([]byte, 0, 1+4+4*nulls+4+total)
		out = append(out, byte(ListConstantSize))
		out = binary.BigEndian.AppendUint32(out, uint32(nulls))
		for i, b := range elems {
			if b == nil {
				out = binary.BigEndian.AppendUint32(out, uint32(i))
			}
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
		for _, b := range elems {
			out = append(out, b...)
		}
		return out, nil
	}
	out = make([]byte, 0, 1+4+4*len(data)+total)
	out = append(out, byte(ListVariableSize))
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	for _, b := range elems {
		if b == nil {
			out = binary.BigEndian.AppendUint32(out, math.MaxUint32) // -1
			continue
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out, nil
}

func (l *listSerde[T]) Deserialize(topic string, headers *Headers, data []byte) ([]T, error) {
	if data == nil {
		return nil, nil
	}
	fail := func(format string, args ...any) ([]T, error) {
		return nil, deserErr(l.name, topic, data, fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...))
	}
	r := reader{b: data}
	flag, ok := r.byte()
	if !ok {
		return fail("no strategy byte")
	}
	if flag > byte(ListVariableSize) {
		return fail("invalid serialization strategy flag %d", flag)
	}
	strategy := ListStrategy(flag)
	var nullIdx map[int32]struct{}
	if strategy == ListConstantSize {
		if l.size == 0 {
			return nil, deserErr(l.name, topic, data, fmt.Errorf("%w: %w: data is in the constant-size layout but inner serde %s has no fixed size", ErrCorrupt, ErrUnsupported, Name(l.inner)))
		}
		n, ok := r.int32()
		if !ok {
			return fail("input ends in the null index count")
		}
		if n < 0 {
			return fail("negative null index count %d", n)
		}
		if int(n) > len(data)/4 {
			return fail("null index count %d exceeds input length/4", n)
		}
		nullIdx = make(map[int32]struct{}, n)
		for range n {
			idx, ok := r.int32()
			if !ok {
				return fail("input ends in the null indexes")
			}
			nullIdx[idx] = struct{}{}
		}
	}
	size, ok := r.int32()
	if !ok {
		return fail("input ends in the list size")
	}
	if size < 0 {
		return fail("negative list size %d", size)
	}
	if int(size) > len(data) {
		return fail("list size %d exceeds input length", size)
	}
	out := make([]T, 0, size)
	var zero T
	for i := range size {
		n := l.size
		if strategy == ListVariableSize {
			v, ok := r.int32()
			if !ok {
				return fail("input ends in the length of element %d", i)
			}
			if v < -1 {
				return fail("element %d has negative length %d", i, v)
			}
			if int(v) > len(data) {
				return fail("element %d length %d exceeds input length", i, v)
			}
			n = int(v)
		}
		_, isNull := nullIdx[i]
		if n == -1 || isNull {
			if !l.nillable {
				return nil, deserErr(l.name, topic, data, fmt.Errorf("%w: %w: element %d is null but %s cannot hold nil; use ListSerde(Nullable(...))", ErrCorrupt, ErrUnsupported, i, typeName[T]()))
			}
			out = append(out, zero)
			continue
		}
		b, ok := r.bytes(n)
		if !ok {
			return fail("input ends in element %d", i)
		}
		v, err := l.inner.Deserialize(topic, headers, b)
		if err != nil {
			return nil, deserErr(l.name, topic, data, fmt.Errorf("element %d: %w", i, err))
		}
		out = append(out, v)
	}
	return out, nil
}

// reader reads big-endian values from a byte slice.
type reader struct {
	b   []byte
	off int
}

func (r *reader) byte() (byte, bool) {
	if r.off >= len(r.b) {
		return 0, false
	}
	r.off++
	return r.b[r.off-1], true
}

func (r *reader) int32() (int32, bool) {
	if len(r.b)-r.off < 4 {
		return 0, false
	}
	v := int32(binary.BigEndian.Uint32(r.b[r.off:]))
	r.off += 4
	return v, true
}

// bytes returns the next n bytes as a new slice (inner deserializers such as
// ByteArray return their input, which must not alias data).
func (r *reader) bytes(n int) ([]byte, bool) {
	if len(r.b)-r.off < n {
		return nil, false
	}
	out := make([]byte, n)
	copy(out, r.b[r.off:])
	r.off += n
	return out, true
}
