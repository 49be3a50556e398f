package ktable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Wire formats of the foreign-key join (KIP-213): the subscription records sent from the
// primary table to the foreign table's partitions, the responses sent back, the combined key of
// the subscription store and the 128-bit murmur3 hash of the primary value that lets the
// primary side drop stale responses. All byte-identical to Java's (big-endian).

// ErrBadSubscription is returned when a subscription or response record cannot be decoded or
// encoded (short data, unsupported version, unknown instruction).
var ErrBadSubscription = errors.New("invalid foreign-key join subscription record")

// ValueHash is the 128-bit murmur3 hash of a serialized primary-table value, as the two longs
// Java's Murmur3.hash128 returns.
type ValueHash [2]uint64

// murmur3Seed is the seed of Java's Murmur3.hash128 (Kafka's DEFAULT_SEED).
const murmur3Seed = 104729

// Murmur3Hash128 returns the x64 128-bit MurmurHash3 of data with Kafka's seed 104729, the
// hash the foreign-key join puts in subscriptions. Java: org.apache.kafka.streams.state.internals.Murmur3.hash128.
func Murmur3Hash128(data []byte) ValueHash {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	h1, h2 := uint64(murmur3Seed), uint64(murmur3Seed)
	n := len(data)
	nblocks := n / 16
	for i := 0; i < nblocks; i++ {
		k1 := binary.LittleEndian.Uint64(data[i*16:])
		k2 := binary.LittleEndian.Uint64(data[i*16+8:])
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
		h1 = bits.RotateLeft64(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		h2 = bits.RotateLeft64(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}
	tail := data[nblocks*16:]
	var k1, k2 uint64
	if len(tail) > 8 {
		for i := len(tail) - 1; i >= 8; i-- {
			k2 ^= uint64(tail[i]) << (8 * (i - 8))
		}
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
	}
	if len(tail) > 0 {
		for i := min(len(tail), 8) - 1; i >= 0; i-- {
			k1 ^= uint64(tail[i]) << (8 * i)
		}
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1, h2 = fmix64(h1), fmix64(h2)
	h1 += h2
	h2 += h1
	return ValueHash{h1, h2}
}

func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// SubscriptionInstruction tells the foreign side what to do with a subscription. Java:
// SubscriptionWrapper.Instruction (same byte values).
type SubscriptionInstruction byte

const (
	// DeleteKeyNoPropagate removes the subscription and sends no response (0x00).
	DeleteKeyNoPropagate SubscriptionInstruction = 0
	// DeleteKeyAndPropagate removes the subscription and responds with a null foreign value (0x01).
	DeleteKeyAndPropagate SubscriptionInstruction = 1
	// PropagateNullIfNoFKValAvailable stores the subscription and always responds, with a null
	// foreign value when the foreign key has none (0x02).
	PropagateNullIfNoFKValAvailable SubscriptionInstruction = 2
	// PropagateOnlyIfFKValAvailable stores the subscription and responds only when the foreign
	// key has a value (0x03).
	PropagateOnlyIfFKValAvailable SubscriptionInstruction = 3
)

// subscriptionVersion is the version Java 4.x writes (SubscriptionWrapper.CURRENT_VERSION = 1,
// which carries the primary partition).
const subscriptionVersion = 1

// SubscriptionWrapper is the value of a subscription record (and of the subscription store):
// the hash of the primary value (nil for a deleted row), the instruction, the primary key and
// the partition of the primary record. Java: SubscriptionWrapper.
type SubscriptionWrapper struct {
	// Hash is the murmur3 hash of the serialized primary value; nil when the row was deleted.
	Hash *ValueHash
	// Instruction says what the foreign side does.
	Instruction SubscriptionInstruction
	// PrimaryKey is the key of the primary-table row (never nil).
	PrimaryKey any
	// Version is the wire version (0 or 1).
	Version byte
	// PrimaryPartition is the partition of the primary record (version 1 only).
	PrimaryPartition int32
}

// SubscriptionResponseWrapper is the value of a response record: the hash of the primary value
// the subscription carried, the foreign value (nil: none) and the primary partition (not on the
// wire; used by the default response partitioner). Java: SubscriptionResponseWrapper.
type SubscriptionResponseWrapper struct {
	// Hash is the subscription's hash (nil when the subscription had none).
	Hash *ValueHash
	// ForeignValue is the foreign table's value, nil for none.
	ForeignValue any
	// Version is the wire version (0).
	Version byte
	// PrimaryPartition is the partition of the primary record (valid when HasPartition).
	PrimaryPartition int32
	// HasPartition is false when the partition is unknown (a response read back from the
	// topic, or a version-0 subscription).
	HasPartition bool
}

// pseudoTopic names the serde topic of one part of a foreign-key join record, decorated with
// the application id at run time as Java's decoratePseudoTopic does.
type pseudoTopic struct {
	name string // e.g. "<subscription topic>-pk"
	full string
}

func (p *pseudoTopic) bind(appID string) { p.full = appID + "-" + p.name }

// FKSerdes holds the serdes and pseudo topics of one foreign-key join; the serdes left nil use
// default.key.serde / default.value.serde, filled in when a processor or the engine binds them.
type FKSerdes struct {
	// PrimaryKey is the primary table's key serde.
	PrimaryKey serde.Serde[any]
	// ForeignKey is the foreign table's key serde.
	ForeignKey serde.Serde[any]
	// PrimaryValue is the primary table's value serde (hashed).
	PrimaryValue serde.Serde[any]
	// ForeignValue is the foreign table's value serde (responses).
	ForeignValue serde.Serde[any]
	pk, fk, vh   pseudoTopic
	mu           sync.Mutex // guards the one-time binding (tasks of several threads share the serdes)
	bound        bool
}

// NewFKSerdes returns the serdes of a join whose subscription topic is subscriptionTopic (the
// name without the application id): pseudo topics "<topic>-pk", "-fk" and "-vh".
func NewFKSerdes(subscriptionTopic string, primaryKey, foreignKey, primaryValue, foreignValue serde.Serde[any]) *FKSerdes {
	return &FKSerdes{PrimaryKey: primaryKey, ForeignKey: foreignKey, PrimaryValue: primaryValue, ForeignValue: foreignValue,
		pk: pseudoTopic{name: subscriptionTopic + "-pk"}, fk: pseudoTopic{name: subscriptionTopic + "-fk"},
		vh: pseudoTopic{name: subscriptionTopic + "-vh"}}
}

// useDefaults fills the missing serdes with the configured defaults (key serdes with the
// default key serde, value serdes with the default value serde).
func (s *FKSerdes) useDefaults(key, value serde.Serde[any]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.bound {
		s.fillDefaults(key, value)
	}
}

func (s *FKSerdes) fillDefaults(key, value serde.Serde[any]) {
	if s.PrimaryKey == nil {
		s.PrimaryKey = key
	}
	if s.ForeignKey == nil {
		s.ForeignKey = key
	}
	if s.PrimaryValue == nil {
		s.PrimaryValue = value
	}
	if s.ForeignValue == nil {
		s.ForeignValue = value
	}
}

// bind fills defaults and pseudo topics from a processor's context.
func (s *FKSerdes) bind(ctx processor.ProcessingContext) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.bound {
		s.fillDefaults(ctx.KeySerde(), ctx.ValueSerde())
		app := ctx.ApplicationID()
		s.pk.bind(app)
		s.fk.bind(app)
		s.vh.bind(app)
		s.bound = true
	}
	if s.PrimaryKey == nil || s.ForeignKey == nil || s.PrimaryValue == nil || s.ForeignValue == nil {
		return fmt.Errorf("%w: foreign-key join needs key and value serdes of both tables (or default.key.serde/default.value.serde)", serde.ErrWrongType)
	}
	return nil
}

func (s *FKSerdes) serializeFK(fk any) ([]byte, error) {
	if fk == nil {
		return nil, nil
	}
	return s.ForeignKey.Serialize(s.fk.full, nil, fk)
}

// hashValue returns the hash of a primary value (nil for nil).
func (s *FKSerdes) hashValue(v any) (*ValueHash, error) {
	if v == nil {
		return nil, nil
	}
	b, err := s.PrimaryValue.Serialize(s.vh.full, nil, v)
	if err != nil {
		return nil, err
	}
	h := Murmur3Hash128(b)
	return &h, nil
}

// combinedKey returns the subscription store key: int32 length of the serialized foreign key ‖
// foreign key bytes ‖ primary key bytes. Java: CombinedKeySchema.toBytes.
func (s *FKSerdes) combinedKey(fk, pk any) ([]byte, error) {
	out, err := s.prefix(fk)
	if err != nil {
		return nil, err
	}
	pb, err := s.PrimaryKey.Serialize(s.pk.full, nil, pk)
	if err != nil {
		return nil, err
	}
	return append(out, pb...), nil
}

// prefix returns int32 length ‖ foreign key bytes. Java: CombinedKeySchema.prefixBytes.
func (s *FKSerdes) prefix(fk any) ([]byte, error) {
	fb, err := s.serializeFK(fk)
	if err != nil {
		return nil, err
	}
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(fb)), uint32(len(fb)))
	return append(out, fb...), nil
}

// primaryKeyOf decodes the primary key of a combined key. Java: CombinedKeySchema.fromBytes.
func (s *FKSerdes) primaryKeyOf(combined []byte) (any, error) {
	if len(combined) < 4 {
		return nil, fmt.Errorf("%w: combined key of %d bytes", ErrBadSubscription, len(combined))
	}
	n := int(binary.BigEndian.Uint32(combined))
	if n < 0 || 4+n > len(combined) {
		return nil, fmt.Errorf("%w: combined key foreign-key length %d", ErrBadSubscription, n)
	}
	return s.PrimaryKey.Deserialize(s.pk.full, nil, combined[4+n:])
}

// SubscriptionWrapperSerde returns the serde of subscription values: byte (version, with 0x80
// set when the hash is null) ‖ instruction byte ‖ [16-byte hash] ‖ primary key bytes ‖ int32
// primary partition (version 1). Java: SubscriptionWrapperSerde.
func (s *FKSerdes) SubscriptionWrapperSerde() serde.Serde[any] { return subscriptionSerde{s} }

type subscriptionSerde struct{ s *FKSerdes }

// UseDefaultSerdes fills the primary key serde from default.key.serde (engine hook).
func (w subscriptionSerde) UseDefaultSerdes(key, value serde.Serde[any]) { w.s.useDefaults(key, value) }

func (w subscriptionSerde) String() string { return "SubscriptionWrapperSerde" }

func (w subscriptionSerde) Serialize(_ string, _ *serde.Headers, data any) ([]byte, error) {
	if data == nil {
		return nil, nil
	}
	sw, ok := data.(*SubscriptionWrapper)
	if !ok {
		return nil, fmt.Errorf("%w: got %T, want *ktable.SubscriptionWrapper", serde.ErrWrongType, data)
	}
	if sw.Version > 1 {
		return nil, fmt.Errorf("%w: unsupported version %d", ErrBadSubscription, sw.Version)
	}
	pb, err := w.s.PrimaryKey.Serialize(w.s.pk.full, nil, sw.PrimaryKey)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 2+16+len(pb)+4)
	if sw.Hash == nil {
		out = append(out, sw.Version|0x80, byte(sw.Instruction))
	} else {
		out = append(out, sw.Version, byte(sw.Instruction))
		out = binary.BigEndian.AppendUint64(out, sw.Hash[0])
		out = binary.BigEndian.AppendUint64(out, sw.Hash[1])
	}
	out = append(out, pb...)
	if sw.Version == 1 {
		out = binary.BigEndian.AppendUint32(out, uint32(sw.PrimaryPartition))
	}
	return out, nil
}

func (w subscriptionSerde) Deserialize(_ string, _ *serde.Headers, data []byte) (any, error) {
	if data == nil {
		return nil, nil
	}
	if len(data) < 2 {
		return nil, fmt.Errorf("%w: %d bytes", ErrBadSubscription, len(data))
	}
	sw := &SubscriptionWrapper{Version: data[0] & 0x7f, Instruction: SubscriptionInstruction(data[1])}
	if sw.Instruction > PropagateOnlyIfFKValAvailable {
		return nil, fmt.Errorf("%w: unknown instruction byte %d", ErrBadSubscription, data[1])
	}
	rest := data[2:]
	if data[0]&0x80 == 0 {
		if len(rest) < 16 {
			return nil, fmt.Errorf("%w: short hash", ErrBadSubscription)
		}
		sw.Hash = &ValueHash{binary.BigEndian.Uint64(rest), binary.BigEndian.Uint64(rest[8:])}
		rest = rest[16:]
	}
	if sw.Version > 0 {
		if len(rest) < 4 {
			return nil, fmt.Errorf("%w: short partition", ErrBadSubscription)
		}
		sw.PrimaryPartition = int32(binary.BigEndian.Uint32(rest[len(rest)-4:]))
		rest = rest[:len(rest)-4]
	}
	pk, err := w.s.PrimaryKey.Deserialize(w.s.pk.full, nil, rest)
	if err != nil {
		return nil, err
	}
	sw.PrimaryKey = pk
	return sw, nil
}

// ResponseWrapperSerde returns the serde of response values: byte (version, with 0x80 set when
// the hash is null) ‖ [16-byte hash] ‖ foreign value bytes (absent for null; an empty
// serialized value therefore reads back as null, as in Java). The foreign value is serialized
// with the record's topic. Java: SubscriptionResponseWrapperSerde.
func (s *FKSerdes) ResponseWrapperSerde() serde.Serde[any] { return responseSerde{s} }

type responseSerde struct{ s *FKSerdes }

// UseDefaultSerdes fills the foreign value serde from default.value.serde (engine hook).
func (w responseSerde) UseDefaultSerdes(key, value serde.Serde[any]) { w.s.useDefaults(key, value) }

func (w responseSerde) String() string { return "SubscriptionResponseWrapperSerde" }

func (w responseSerde) Serialize(topic string, h *serde.Headers, data any) ([]byte, error) {
	if data == nil {
		return nil, nil
	}
	rw, ok := data.(*SubscriptionResponseWrapper)
	if !ok {
		return nil, fmt.Errorf("%w: got %T, want *ktable.SubscriptionResponseWrapper", serde.ErrWrongType, data)
	}
	var vb []byte
	if rw.ForeignValue != nil {
		var err error
		if vb, err = w.s.ForeignValue.Serialize(topic, h, rw.ForeignValue); err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, 1+16+len(vb))
	if rw.Hash == nil {
		out = append(out, rw.Version|0x80)
	} else {
		out = append(out, rw.Version)
		out = binary.BigEndian.AppendUint64(out, rw.Hash[0])
		out = binary.BigEndian.AppendUint64(out, rw.Hash[1])
	}
	return append(out, vb...), nil
}

func (w responseSerde) Deserialize(topic string, h *serde.Headers, data []byte) (any, error) {
	if data == nil {
		return nil, nil
	}
	if len(data) < 1 {
		return nil, fmt.Errorf("%w: empty response", ErrBadSubscription)
	}
	rw := &SubscriptionResponseWrapper{Version: data[0] & 0x7f}
	rest := data[1:]
	if data[0]&0x80 == 0 {
		if len(rest) < 16 {
			return nil, fmt.Errorf("%w: short hash", ErrBadSubscription)
		}
		rw.Hash = &ValueHash{binary.BigEndian.Uint64(rest), binary.BigEndian.Uint64(rest[8:])}
		rest = rest[16:]
	}
	if len(rest) > 0 {
		v, err := w.s.ForeignValue.Deserialize(topic, h, rest)
		if err != nil {
			return nil, err
		}
		rw.ForeignValue = v
	}
	return rw, nil
}
