package group

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// ProtocolType is the protocol type of a consumer group, sent in JoinGroup and SyncGroup
// (Java: ConsumerProtocol.PROTOCOL_TYPE).
const ProtocolType = "consumer"

// The versions of the consumer protocol's messages this package writes: the latest, which Java
// 4.x clients send too. Both messages are version-prefixed: a big-endian int16 version, then
// the message in that version's layout (Java: MessageUtil.toVersionPrefixedByteBuffer).
const (
	// SubscriptionVersion is the ConsumerProtocolSubscription version of a member's JoinGroup
	// metadata: v1 added owned_partitions, v2 generation_id, v3 rack_id.
	SubscriptionVersion int16 = 3
	// AssignmentVersion is the ConsumerProtocolAssignment version of the assignments the
	// leader sends. Every version has the same layout (v2 and v3 exist to match the
	// subscription's).
	AssignmentVersion int16 = 3
)

// ErrMalformed is wrapped by the decoding errors of DecodeSubscription and DecodeAssignment
// (Java: SchemaException).
var ErrMalformed = errors.New("malformed consumer protocol message")

// EncodeSubscription returns s as Java's version-prefixed ConsumerProtocolSubscription of
// version s.Version (0-3): topics (sorted), user_data (nil is written as null, an empty
// non-nil slice as zero bytes), owned_partitions (v1+, sorted by topic and partition and
// grouped by topic), generation_id (v2+) and rack_id (v3+, "" is written as null), as Java's
// ConsumerProtocol.serializeSubscription writes them. MemberID, InstanceID and Err are not part
// of the message. Errors: a version outside 0-3, a string longer than 32767 bytes.
func EncodeSubscription(s Subscription) ([]byte, error) {
	if s.Version < 0 || s.Version > SubscriptionVersion {
		return nil, fmt.Errorf("encode subscription: version %d is not 0-%d", s.Version, SubscriptionVersion)
	}
	topics := slices.Clone(s.Topics)
	slices.Sort(topics)
	owned := slices.Clone(s.Owned)
	slices.SortFunc(owned, compareTP)

	var e encoder
	e.int16(s.Version)
	e.arrayLen(len(topics))
	for _, t := range topics {
		e.string(t)
	}
	e.bytes(s.UserData)
	if s.Version >= 1 {
		groups := groupByTopic(owned)
		e.arrayLen(len(groups))
		for _, g := range groups {
			e.string(g.topic)
			e.arrayLen(len(g.partitions))
			for _, p := range g.partitions {
				e.int32(p)
			}
		}
	}
	if s.Version >= 2 {
		e.int32(s.Generation)
	}
	if s.Version >= 3 {
		e.nullableString(s.Rack)
	}
	if e.err != nil {
		return nil, fmt.Errorf("encode subscription: %w", e.err)
	}
	return e.buf, nil
}

// DecodeSubscription parses Java's version-prefixed ConsumerProtocolSubscription as Java's
// ConsumerProtocol.deserializeSubscription does: a version above 3 is read in the version 3
// layout (later versions only append fields) and bytes after the known fields are ignored;
// fields a version lacks get their defaults (no owned partitions, Generation -1, Rack "").
// Version is the version the message says. UserData aliases b. Errors wrap ErrMalformed: a
// negative version, a message shorter than its fields, a null array or string where the
// schema allows none.
func DecodeSubscription(b []byte) (Subscription, error) {
	d := decoder{buf: b}
	s := Subscription{Generation: -1}
	s.Version = d.int16()
	if d.err == nil && s.Version < 0 {
		return Subscription{}, fmt.Errorf("%w: subscription version %d", ErrMalformed, s.Version)
	}
	v := min(s.Version, SubscriptionVersion)
	if n := d.arrayLen("topics", 2); n > 0 {
		s.Topics = make([]string, 0, n)
		for range n {
			s.Topics = append(s.Topics, d.string("topic"))
		}
	}
	s.UserData = d.bytes()
	if v >= 1 {
		n := d.arrayLen("owned_partitions", 6)
		for range n {
			topic := d.string("owned topic")
			m := d.arrayLen("owned partitions", 4)
			for range m {
				s.Owned = append(s.Owned, kafka.TopicPartition{Topic: topic, Partition: d.int32()})
			}
		}
	}
	if v >= 2 {
		s.Generation = d.int32()
	}
	if v >= 3 {
		s.Rack = d.nullableString()
	}
	if d.err != nil {
		return Subscription{}, fmt.Errorf("decode subscription (version %d): %w", s.Version, d.err)
	}
	return s, nil
}

// EncodeAssignment returns a as Java's version-prefixed ConsumerProtocolAssignment of version
// a.Version (0-3): assigned_partitions grouped by topic in the order each topic first appears
// in a.Partitions (a topic's partitions in their order in a.Partitions), then user_data (nil
// is written as null), as Java's ConsumerProtocol.serializeAssignment writes them. Errors: a
// version outside 0-3, a string longer than 32767 bytes.
func EncodeAssignment(a Assignment) ([]byte, error) {
	if a.Version < 0 || a.Version > AssignmentVersion {
		return nil, fmt.Errorf("encode assignment: version %d is not 0-%d", a.Version, AssignmentVersion)
	}
	var e encoder
	e.int16(a.Version)
	var topics []string
	byTopic := map[string][]int32{}
	for _, tp := range a.Partitions {
		if _, ok := byTopic[tp.Topic]; !ok {
			topics = append(topics, tp.Topic)
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	e.arrayLen(len(topics))
	for _, t := range topics {
		e.string(t)
		ps := byTopic[t]
		e.arrayLen(len(ps))
		for _, p := range ps {
			e.int32(p)
		}
	}
	e.bytes(a.UserData)
	if e.err != nil {
		return nil, fmt.Errorf("encode assignment: %w", e.err)
	}
	return e.buf, nil
}

// DecodeAssignment parses Java's version-prefixed ConsumerProtocolAssignment as Java's
// ConsumerProtocol.deserializeAssignment does (a version above 3 read in the version 3 layout,
// trailing bytes ignored). Partitions lists the assigned partitions in message order;
// UserData aliases b. Errors wrap ErrMalformed.
func DecodeAssignment(b []byte) (Assignment, error) {
	d := decoder{buf: b}
	var a Assignment
	a.Version = d.int16()
	if d.err == nil && a.Version < 0 {
		return Assignment{}, fmt.Errorf("%w: assignment version %d", ErrMalformed, a.Version)
	}
	n := d.arrayLen("assigned_partitions", 6)
	for range n {
		topic := d.string("assigned topic")
		m := d.arrayLen("assigned partitions", 4)
		for range m {
			a.Partitions = append(a.Partitions, kafka.TopicPartition{Topic: topic, Partition: d.int32()})
		}
	}
	a.UserData = d.bytes()
	if d.err != nil {
		return Assignment{}, fmt.Errorf("decode assignment (version %d): %w", a.Version, d.err)
	}
	return a, nil
}

func compareTP(a, b kafka.TopicPartition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

type topicPartitions struct {
	topic      string
	partitions []int32
}

// groupByTopic groups sorted partitions by topic.
func groupByTopic(tps []kafka.TopicPartition) []topicPartitions {
	var out []topicPartitions
	for _, tp := range tps {
		if len(out) == 0 || out[len(out)-1].topic != tp.Topic {
			out = append(out, topicPartitions{topic: tp.Topic})
		}
		last := &out[len(out)-1]
		last.partitions = append(last.partitions, tp.Partition)
	}
	return out
}

// encoder writes Kafka's non-flexible primitive types (big-endian).
type encoder struct {
	buf []byte
	err error
}

func (e *encoder) int16(v int16) { e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(v)) }
func (e *encoder) int32(v int32) { e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v)) }

func (e *encoder) arrayLen(n int) {
	if n > math.MaxInt32 {
		e.setErr(fmt.Errorf("array of %d elements", n))
		return
	}
	e.int32(int32(n))
}

func (e *encoder) string(s string) {
	if len(s) > math.MaxInt16 {
		e.setErr(fmt.Errorf("string of %d bytes is longer than %d", len(s), math.MaxInt16))
		return
	}
	e.int16(int16(len(s)))
	e.buf = append(e.buf, s...)
}

// nullableString writes "" as null.
func (e *encoder) nullableString(s string) {
	if s == "" {
		e.int16(-1)
		return
	}
	e.string(s)
}

// bytes writes nil as null.
func (e *encoder) bytes(b []byte) {
	if b == nil {
		e.int32(-1)
		return
	}
	if len(b) > math.MaxInt32 {
		e.setErr(fmt.Errorf("bytes of %d bytes", len(b)))
		return
	}
	e.int32(int32(len(b)))
	e.buf = append(e.buf, b...)
}

func (e *encoder) setErr(err error) {
	if e.err == nil {
		e.err = err
	}
}

// decoder reads Kafka's non-flexible primitive types; the first error sticks and makes every
// later read return zero values.
type decoder struct {
	buf []byte
	off int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
}

func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.buf)-d.off < n {
		d.fail("%s needs %d bytes at offset %d, %d left", what, n, d.off, len(d.buf)-d.off)
		return nil
	}
	b := d.buf[d.off : d.off+n : d.off+n]
	d.off += n
	return b
}

func (d *decoder) int16() int16 {
	b := d.take(2, "int16")
	if b == nil {
		return 0
	}
	return int16(binary.BigEndian.Uint16(b))
}

func (d *decoder) int32() int32 {
	b := d.take(4, "int32")
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// arrayLen reads a non-nullable array length; minSize is the least encoded size of one
// element, to refuse a length the remaining bytes cannot hold before allocating for it.
func (d *decoder) arrayLen(field string, minSize int) int {
	n := int(d.int32())
	if d.err != nil {
		return 0
	}
	if n < 0 {
		d.fail("non-nullable array %s is null", field)
		return 0
	}
	if n > (len(d.buf)-d.off)/minSize {
		d.fail("array %s of %d elements does not fit in %d bytes", field, n, len(d.buf)-d.off)
		return 0
	}
	return n
}

func (d *decoder) string(field string) string {
	n := int(d.int16())
	if d.err != nil {
		return ""
	}
	if n < 0 {
		d.fail("non-nullable string %s is null", field)
		return ""
	}
	return string(d.take(n, field))
}

// nullableString reads null as "".
func (d *decoder) nullableString() string {
	n := int(d.int16())
	if d.err != nil || n < 0 {
		return ""
	}
	return string(d.take(n, "string"))
}

// bytes reads nullable bytes: null as nil, aliasing the input otherwise.
func (d *decoder) bytes() []byte {
	n := int(d.int32())
	if d.err != nil || n < 0 {
		return nil
	}
	b := d.take(n, "bytes")
	if b == nil && d.err == nil {
		b = []byte{}
	}
	return b
}
