package group

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/kbin"
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
	e.Int16(s.Version)
	e.ArrayLen(len(topics))
	for _, t := range topics {
		e.String(t)
	}
	e.NullableBytes(s.UserData)
	if s.Version >= 1 {
		groups := groupByTopic(owned)
		e.ArrayLen(len(groups))
		for _, g := range groups {
			e.String(g.topic)
			e.ArrayLen(len(g.partitions))
			for _, p := range g.partitions {
				e.Int32(p)
			}
		}
	}
	if s.Version >= 2 {
		e.Int32(s.Generation)
	}
	if s.Version >= 3 {
		e.NullableString(s.Rack)
	}
	if e.Err != nil {
		return nil, fmt.Errorf("encode subscription: %w", e.Err)
	}
	return e.Buf, nil
}

// DecodeSubscription parses Java's version-prefixed ConsumerProtocolSubscription as Java's
// ConsumerProtocol.deserializeSubscription does: a version above 3 is read in the version 3
// layout (later versions only append fields) and bytes after the known fields are ignored;
// fields a version lacks get their defaults (no owned partitions, Generation -1, Rack "").
// Version is the version the message says. UserData aliases b. Errors wrap ErrMalformed: a
// negative version, a message shorter than its fields, a null array or string where the
// schema allows none.
func DecodeSubscription(b []byte) (Subscription, error) {
	d := decoder{kbin.Reader{Buf: b, Malformed: ErrMalformed}}
	s := Subscription{Generation: -1}
	s.Version = d.Int16()
	if d.Err == nil && s.Version < 0 {
		return Subscription{}, fmt.Errorf("%w: subscription version %d", ErrMalformed, s.Version)
	}
	v := min(s.Version, SubscriptionVersion)
	if n := d.ArrayLen("topics", 2); n > 0 {
		s.Topics = make([]string, 0, n)
		for range n {
			s.Topics = append(s.Topics, d.String("topic"))
		}
	}
	s.UserData = d.NullableBytes("bytes")
	if v >= 1 {
		n := d.ArrayLen("owned_partitions", 6)
		for range n {
			topic := d.String("owned topic")
			m := d.ArrayLen("owned partitions", 4)
			for range m {
				s.Owned = append(s.Owned, kafka.TopicPartition{Topic: topic, Partition: d.Int32()})
			}
		}
	}
	if v >= 2 {
		s.Generation = d.Int32()
	}
	if v >= 3 {
		s.Rack = d.NullableString("string")
	}
	if d.Err != nil {
		return Subscription{}, fmt.Errorf("decode subscription (version %d): %w", s.Version, d.Err)
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
	e.Int16(a.Version)
	var topics []string
	byTopic := map[string][]int32{}
	for _, tp := range a.Partitions {
		if _, ok := byTopic[tp.Topic]; !ok {
			topics = append(topics, tp.Topic)
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	e.ArrayLen(len(topics))
	for _, t := range topics {
		e.String(t)
		ps := byTopic[t]
		e.ArrayLen(len(ps))
		for _, p := range ps {
			e.Int32(p)
		}
	}
	e.NullableBytes(a.UserData)
	if e.Err != nil {
		return nil, fmt.Errorf("encode assignment: %w", e.Err)
	}
	return e.Buf, nil
}

// DecodeAssignment parses Java's version-prefixed ConsumerProtocolAssignment as Java's
// ConsumerProtocol.deserializeAssignment does (a version above 3 read in the version 3 layout,
// trailing bytes ignored). Partitions lists the assigned partitions in message order;
// UserData aliases b. Errors wrap ErrMalformed.
func DecodeAssignment(b []byte) (Assignment, error) {
	d := decoder{kbin.Reader{Buf: b, Malformed: ErrMalformed}}
	var a Assignment
	a.Version = d.Int16()
	if d.Err == nil && a.Version < 0 {
		return Assignment{}, fmt.Errorf("%w: assignment version %d", ErrMalformed, a.Version)
	}
	n := d.ArrayLen("assigned_partitions", 6)
	for range n {
		topic := d.String("assigned topic")
		m := d.ArrayLen("assigned partitions", 4)
		for range m {
			a.Partitions = append(a.Partitions, kafka.TopicPartition{Topic: topic, Partition: d.Int32()})
		}
	}
	a.UserData = d.NullableBytes("bytes")
	if d.Err != nil {
		return Assignment{}, fmt.Errorf("decode assignment (version %d): %w", a.Version, d.Err)
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

// encoder and decoder write and read the consumer protocol's classic encoding.
type encoder struct{ kbin.Writer }

type decoder struct{ kbin.Reader }
