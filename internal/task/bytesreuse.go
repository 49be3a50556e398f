package task

import (
	"hash/maphash"

	"github.com/kstreams-go/kstreams/serde"
)

// internSlots is the number of slots of a task's string intern table (a power of two);
// internMaxLen the longest key or value, in bytes, it keeps. 2048 slots of 32 bytes: 64 KiB per
// task that reads String-serialized records, allocated on first use.
const (
	internSlots  = 2048
	internMaxLen = 32
)

// internTable remembers recently decoded short strings, boxed, by their bytes: a direct-mapped
// table (one string per slot, the last one decoded there wins). Decoding the same bytes again
// through the String serde gives an equal string, and a Go string cannot be changed, so handing
// out the remembered box instead of a new string and box is not observable; it saves both
// allocations for the words of a word count's repartition topic.
type internTable struct {
	seed  maphash.Seed
	slots []internSlot
	// last is the string found or remembered last: a record whose value repeats its key (a
	// repartition topic keyed by its value) finds it without hashing.
	last internSlot
}

type internSlot struct {
	s string
	v any // s boxed; nil for an empty slot
}

// decodeString deserializes b with d, the String serde (serdeapi.IsString), through the task's
// intern table: bytes seen recently in the same slot give the string boxed then.
func (n *node) decodeString(d serde.Deserializer[any], topic string, h *serde.Headers, b []byte) (any, error) {
	if len(b) > internMaxLen {
		return d.Deserialize(topic, h, b)
	}
	t := n.task
	if t.intern == nil {
		t.intern = &internTable{seed: maphash.MakeSeed(), slots: make([]internSlot, internSlots)}
	}
	if l := &t.intern.last; l.v != nil && l.s == string(b) {
		return l.v, nil
	}
	slot := &t.intern.slots[maphash.Bytes(t.intern.seed, b)&(internSlots-1)]
	if slot.v != nil && slot.s == string(b) {
		t.intern.last = *slot
		return slot.v, nil
	}
	v, err := d.Deserialize(topic, h, b)
	if err != nil {
		return nil, err
	}
	// Only a string equal to the bytes (valid UTF-8 decodes to itself) is remembered, so that a
	// match on the bytes always means the same decoded string.
	if s, ok := v.(string); ok && s == string(b) {
		slot.s, slot.v = s, v
		t.intern.last = *slot
	}
	return v, nil
}

// sinkBufSize is the size of a sink's serialization buffer; a new one is started when fewer
// than sinkBufMinRoom bytes are left.
const (
	sinkBufSize    = 16 << 10
	sinkBufMinRoom = 256
)

// serialize serializes v (not null) for a sink: with app, the serializer's in-place
// AppendSerialize (serdeapi.AppendsInPlace), into the node's shared buffer, else with ser. A
// returned slice of the buffer has its capacity clipped to its length, so no append by a holder
// can reach the next record's bytes; the records keep the buffers they point into alive until
// they are sent and dropped. The bytes and errors are those ser.Serialize gives.
func (n *node) serialize(app serde.AppendSerializer[any], ser serde.Serializer[any], topic string, h *serde.Headers, v any) ([]byte, error) {
	if app == nil {
		return ser.Serialize(topic, h, v)
	}
	if cap(n.sinkBuf)-len(n.sinkBuf) < sinkBufMinRoom {
		n.sinkBuf = make([]byte, 0, sinkBufSize)
	}
	start := len(n.sinkBuf)
	out, err := app.AppendSerialize(n.sinkBuf, topic, h, v)
	if err != nil {
		return nil, err
	}
	b := out[start:len(out):len(out)]
	if cap(out) == cap(n.sinkBuf) {
		n.sinkBuf = out
	} // else the value did not fit: append moved it (with a copy of the buffer's prefix) to an array of its own, and the buffer stays as it was
	return b, nil
}
