package kstream

import (
	"fmt"
	"maps"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// JoinWindows is the time window of a stream-stream join: a record of this stream at time t
// joins records of the other stream with timestamps in [t-before, t+after] (ms). The grace
// period (ms) says how long out-of-order records are still joined after the window ends; left
// and outer join results without a match are emitted only once the window has closed (stream
// time > t + after + grace; KIP-633). Windows made by OfTimeDifferenceWithNoGrace and
// OfTimeDifferenceAndGrace have that behaviour. Invalid arguments are reported by Build
// (ErrInvalidWindows). Java counterpart: org.apache.kafka.streams.kstream.JoinWindows.
type JoinWindows struct {
	beforeMs, afterMs, graceMs int64
	err                        error
}

// OfTimeDifferenceWithNoGrace returns windows joining records at most timeDifference apart
// (both directions), with grace 0. Java: JoinWindows.ofTimeDifferenceWithNoGrace(Duration).
func OfTimeDifferenceWithNoGrace(timeDifference time.Duration) JoinWindows {
	return OfTimeDifferenceAndGrace(timeDifference, 0)
}

// OfTimeDifferenceAndGrace returns windows joining records at most timeDifference apart, that
// accept out-of-order records up to grace after the window end. Java:
// JoinWindows.ofTimeDifferenceAndGrace(Duration, Duration).
func OfTimeDifferenceAndGrace(timeDifference, grace time.Duration) JoinWindows {
	d, g := timeDifference.Milliseconds(), grace.Milliseconds()
	w := JoinWindows{beforeMs: d, afterMs: d, graceMs: g}
	switch {
	case d < 0:
		w.err = fmt.Errorf("%w: time difference must not be negative (got %d ms)", ErrInvalidWindows, d)
	case g < 0:
		w.err = fmt.Errorf("%w: grace period must not be negative (got %d ms)", ErrInvalidWindows, g)
	}
	return w
}

// Before returns a copy whose window starts timeDifference before the record (ms); after is
// kept. before+after must not be negative. Java: JoinWindows.before(Duration).
func (w JoinWindows) Before(timeDifference time.Duration) JoinWindows {
	w.beforeMs = timeDifference.Milliseconds()
	w.check()
	return w
}

// After returns a copy whose window ends timeDifference after the record (ms); before is kept.
// Java: JoinWindows.after(Duration).
func (w JoinWindows) After(timeDifference time.Duration) JoinWindows {
	w.afterMs = timeDifference.Milliseconds()
	w.check()
	return w
}

func (w *JoinWindows) check() {
	if w.err == nil && w.beforeMs+w.afterMs < 0 {
		w.err = fmt.Errorf("%w: window interval (before+after = %d ms) must not be negative", ErrInvalidWindows, w.beforeMs+w.afterMs)
	}
}

// BeforeMs returns how far before a record the window starts, in ms. Java: beforeMs.
func (w JoinWindows) BeforeMs() int64 { return w.beforeMs }

// AfterMs returns how far after a record the window ends, in ms. Java: afterMs.
func (w JoinWindows) AfterMs() int64 { return w.afterMs }

// Size returns before + after in ms. Java: size().
func (w JoinWindows) Size() int64 { return w.beforeMs + w.afterMs }

// GracePeriodMs returns the grace period in ms. Java: gracePeriodMs().
func (w JoinWindows) GracePeriodMs() int64 { return w.graceMs }

// String renders the windows as Java's JoinWindows.toString.
func (w JoinWindows) String() string {
	return fmt.Sprintf("JoinWindows{beforeMs=%d, afterMs=%d, graceMs=%d}", w.beforeMs, w.afterMs, w.graceMs)
}

// Joined gives the serdes, the processor name and the grace period of a stream-table join: the
// key serde, the stream's value serde and the table's value serde, used when the stream must be
// repartitioned first and by the grace-period buffer (nil: the stream's serdes, else the
// defaults). The name names the join processor (and a repartition topic "<name>-repartition").
// The grace period (see WithGracePeriod) needs a versioned table. Java counterpart:
// org.apache.kafka.streams.kstream.Joined.
type Joined[K, V, VO any] struct {
	keySerde        serde.Serde[K]
	valueSerde      serde.Serde[V]
	otherValueSerde serde.Serde[VO]
	name            string
	graceMs         int64
	hasGrace        bool
}

// WithGracePeriod returns a copy with a grace period for the stream side (KIP-923): each stream
// record waits in a time-ordered buffer (the state store "<join name>-Buffer", changelogged as
// "<application.id>-<join name>-Buffer-changelog") until stream time, the largest timestamp
// buffered, passes the record's timestamp by more than grace; records then leave the buffer in
// timestamp order and join with the table's version as of their timestamp. A record already
// older than stream time minus grace when it arrives joins at once (with the version as of its
// timestamp, null beyond the table's history retention). Records still buffered are not joined
// until later records advance stream time. The table must be versioned (MaterializedAsVersioned)
// with a history retention of at least grace, else Build fails with a *processor.TopologyError. A left join's
// null-key records are never buffered (Java 4.4 fails on them). Grace 0 joins each record at
// once except that out-of-order ones still see the version as of their timestamp. Java:
// Joined.withGracePeriod(Duration).
func (j Joined[K, V, VO]) WithGracePeriod(grace time.Duration) Joined[K, V, VO] {
	j.graceMs, j.hasGrace = grace.Milliseconds(), true
	return j
}

// JoinedWith returns a Joined with the three serdes (any may be nil). Java: Joined.with.
func JoinedWith[K, V, VO any](keySerde serde.Serde[K], valueSerde serde.Serde[V], otherValueSerde serde.Serde[VO]) Joined[K, V, VO] {
	return Joined[K, V, VO]{keySerde: keySerde, valueSerde: valueSerde, otherValueSerde: otherValueSerde}
}

// JoinedAs returns a Joined naming the join processor. Java: Joined.as(name).
func JoinedAs[K, V, VO any](name string) Joined[K, V, VO] { return Joined[K, V, VO]{name: name} }

// WithKeySerde returns a copy with the key serde. Java: withKeySerde.
func (j Joined[K, V, VO]) WithKeySerde(s serde.Serde[K]) Joined[K, V, VO] { j.keySerde = s; return j }

// WithValueSerde returns a copy with the stream's value serde. Java: withValueSerde.
func (j Joined[K, V, VO]) WithValueSerde(s serde.Serde[V]) Joined[K, V, VO] {
	j.valueSerde = s
	return j
}

// WithOtherValueSerde returns a copy with the table's value serde. Java: withOtherValueSerde.
func (j Joined[K, V, VO]) WithOtherValueSerde(s serde.Serde[VO]) Joined[K, V, VO] {
	j.otherValueSerde = s
	return j
}

// WithName returns a copy with the processor name. Java: withName.
func (j Joined[K, V, VO]) WithName(name string) Joined[K, V, VO] { j.name = name; return j }

func lastJoined[K, V, VO any](js []Joined[K, V, VO]) Joined[K, V, VO] {
	if len(js) == 0 {
		return Joined[K, V, VO]{}
	}
	return js[len(js)-1]
}

// StreamJoined configures a stream-stream join: the name (processors "<name>-this-windowed",
// "<name>-this-join", ..., repartition topics "<name>-left/-right-repartition"), the store name
// (stores "<storeName>-this-join-store", "<storeName>-other-join-store",
// "<storeName>-left/outer-shared-join-store"; default: the generated join processor names),
// the key and the two value serdes of the stores and repartition topics (nil: the defaults),
// store suppliers for the two window stores (they must retain duplicates and have window size
// = JoinWindows.Size() and retention = size + grace), and the changelog (on by default;
// the window stores' changelogs always get cleanup.policy=delete). Java counterpart:
// org.apache.kafka.streams.kstream.StreamJoined.
type StreamJoined[K, V, VO any] struct {
	keySerde           serde.Serde[K]
	valueSerde         serde.Serde[V]
	otherValueSerde    serde.Serde[VO]
	thisStoreSupplier  store.WindowBytesStoreSupplier
	otherStoreSupplier store.WindowBytesStoreSupplier
	name, storeName    string
	noLogging          bool
	logConfig          map[string]string
}

// StreamJoinedWith returns a StreamJoined with the serdes (any may be nil). Java: StreamJoined.with.
func StreamJoinedWith[K, V, VO any](keySerde serde.Serde[K], valueSerde serde.Serde[V], otherValueSerde serde.Serde[VO]) StreamJoined[K, V, VO] {
	return StreamJoined[K, V, VO]{keySerde: keySerde, valueSerde: valueSerde, otherValueSerde: otherValueSerde}
}

// StreamJoinedAs returns a StreamJoined with the base store name. Java: StreamJoined.as(storeName).
func StreamJoinedAs[K, V, VO any](storeName string) StreamJoined[K, V, VO] {
	return StreamJoined[K, V, VO]{storeName: storeName}
}

// StreamJoinedWithStoreSuppliers returns a StreamJoined using the two window store suppliers.
// Java: StreamJoined.with(WindowBytesStoreSupplier, WindowBytesStoreSupplier).
func StreamJoinedWithStoreSuppliers[K, V, VO any](thisSupplier, otherSupplier store.WindowBytesStoreSupplier) StreamJoined[K, V, VO] {
	return StreamJoined[K, V, VO]{thisStoreSupplier: thisSupplier, otherStoreSupplier: otherSupplier}
}

// WithName returns a copy with the processor-name base. Java: withName.
func (s StreamJoined[K, V, VO]) WithName(name string) StreamJoined[K, V, VO] { s.name = name; return s }

// WithStoreName returns a copy with the store-name base. Java: withStoreName.
func (s StreamJoined[K, V, VO]) WithStoreName(name string) StreamJoined[K, V, VO] {
	s.storeName = name
	return s
}

// WithKeySerde returns a copy with the key serde. Java: withKeySerde.
func (s StreamJoined[K, V, VO]) WithKeySerde(sd serde.Serde[K]) StreamJoined[K, V, VO] {
	s.keySerde = sd
	return s
}

// WithValueSerde returns a copy with this stream's value serde. Java: withValueSerde.
func (s StreamJoined[K, V, VO]) WithValueSerde(sd serde.Serde[V]) StreamJoined[K, V, VO] {
	s.valueSerde = sd
	return s
}

// WithOtherValueSerde returns a copy with the other stream's value serde. Java: withOtherValueSerde.
func (s StreamJoined[K, V, VO]) WithOtherValueSerde(sd serde.Serde[VO]) StreamJoined[K, V, VO] {
	s.otherValueSerde = sd
	return s
}

// WithThisStoreSupplier returns a copy with this side's window store supplier. Java: withThisStoreSupplier.
func (s StreamJoined[K, V, VO]) WithThisStoreSupplier(sup store.WindowBytesStoreSupplier) StreamJoined[K, V, VO] {
	s.thisStoreSupplier = sup
	return s
}

// WithOtherStoreSupplier returns a copy with the other side's window store supplier. Java: withOtherStoreSupplier.
func (s StreamJoined[K, V, VO]) WithOtherStoreSupplier(sup store.WindowBytesStoreSupplier) StreamJoined[K, V, VO] {
	s.otherStoreSupplier = sup
	return s
}

// WithLoggingEnabled returns a copy whose stores have changelogs with the extra topic configs.
// Java: withLoggingEnabled(Map).
func (s StreamJoined[K, V, VO]) WithLoggingEnabled(config map[string]string) StreamJoined[K, V, VO] {
	s.noLogging, s.logConfig = false, maps.Clone(config)
	return s
}

// WithLoggingDisabled returns a copy whose stores have no changelog. Java: withLoggingDisabled.
func (s StreamJoined[K, V, VO]) WithLoggingDisabled() StreamJoined[K, V, VO] {
	s.noLogging, s.logConfig = true, nil
	return s
}

func lastStreamJoined[K, V, VO any](sj []StreamJoined[K, V, VO]) StreamJoined[K, V, VO] {
	if len(sj) == 0 {
		return StreamJoined[K, V, VO]{}
	}
	return sj[len(sj)-1]
}

// TableJoined configures a foreign-key table-table join: the processor-name base and the
// partitioners of the subscription and response topics. Java counterpart:
// org.apache.kafka.streams.kstream.TableJoined.
type TableJoined[K, KO any] struct {
	partitioner      processor.StreamPartitioner[K, struct{}]
	otherPartitioner processor.StreamPartitioner[KO, struct{}]
	name             string
}

// TableJoinedWith returns a TableJoined with the partitioners of this table and the other
// table (nil: default partitioning). Java: TableJoined.with.
func TableJoinedWith[K, KO any](partitioner processor.StreamPartitioner[K, struct{}], otherPartitioner processor.StreamPartitioner[KO, struct{}]) TableJoined[K, KO] {
	return TableJoined[K, KO]{partitioner: partitioner, otherPartitioner: otherPartitioner}
}

// TableJoinedAs returns a TableJoined with the name base. Java: TableJoined.as(name).
func TableJoinedAs[K, KO any](name string) TableJoined[K, KO] { return TableJoined[K, KO]{name: name} }

// WithName returns a copy with the name base. Java: withName.
func (t TableJoined[K, KO]) WithName(name string) TableJoined[K, KO] { t.name = name; return t }

// WithPartitioner returns a copy with this table's partitioner. Java: withPartitioner.
func (t TableJoined[K, KO]) WithPartitioner(p processor.StreamPartitioner[K, struct{}]) TableJoined[K, KO] {
	t.partitioner = p
	return t
}

// WithOtherPartitioner returns a copy with the other table's partitioner. Java: withOtherPartitioner.
func (t TableJoined[K, KO]) WithOtherPartitioner(p processor.StreamPartitioner[KO, struct{}]) TableJoined[K, KO] {
	t.otherPartitioner = p
	return t
}
