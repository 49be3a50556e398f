package assignment

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/kbin"
)

// Protocol versions of the "stream" protocol's user data (Java:
// StreamsAssignmentProtocolVersions). Both messages start with their version, a big-endian
// int32, so a member can always read which version another member used.
const (
	// LatestSupportedVersion is the highest version this package reads and writes: 11, the one
	// Java Kafka Streams 4.4 sends (v11 added client tags to the subscription).
	LatestSupportedVersion int32 = 11
	// EarliestProbeableVersion is the first version carrying the latest supported version next
	// to the used one (3): from it on, a leader that cannot read a member's subscription answers
	// with the highest version every member supports, and the member downgrades and rejoins
	// (version probing, KIP-268).
	EarliestProbeableVersion int32 = 3
	// UnknownVersion is the latest supported (or commonly supported) version of the messages of
	// versions 1 and 2, which do not carry it (-1).
	UnknownVersion int32 = -1
	// MinOffsetSumVersion is the first subscription version with task offset sums (7); before
	// it a member listed its previous active and standby tasks.
	MinOffsetSumVersion int32 = 7
	// MinNamedTopologyVersion is the first version whose task ids carry a named topology (10).
	MinNamedTopologyVersion int32 = 10
)

// Special task offset sums in a subscription (Java: Task.LATEST_OFFSET and
// SubscriptionInfo.UNKNOWN_OFFSET_SUM).
const (
	// OffsetSumRunning is the offset sum of a task the member runs as an active task now (it
	// is caught up by definition): -2.
	OffsetSumRunning int64 = -2
	// OffsetSumUnknown is the offset sum of a standby task a member of version 1-6 listed,
	// whose offsets it did not say: -3.
	OffsetSumUnknown int64 = -3
)

// NoRebalance is the NextRebalanceMs of an assignment that schedules no follow-up rebalance
// (Java: Long.MAX_VALUE). 0 asks for one at once.
const NoRebalance int64 = math.MaxInt64

// Assignor error codes carried by the subscription (v9+) and the assignment (v4+). Java:
// AssignorError.
const (
	// ErrorNone is NONE (0).
	ErrorNone int32 = 0
	// ErrorIncompleteSourceTopicMetadata is INCOMPLETE_SOURCE_TOPIC_METADATA (1): the leader
	// found source topics missing; the members shut down (Java: MissingSourceTopicException).
	ErrorIncompleteSourceTopicMetadata int32 = 1
	// ErrorVersionProbing is VERSION_PROBING (2), no longer sent by Java.
	ErrorVersionProbing int32 = 2
	// ErrorAssignmentError is ASSIGNMENT_ERROR (3): the leader could not compute an
	// assignment; a Java member's thread fails (TaskAssignmentException).
	ErrorAssignmentError int32 = 3
	// ErrorShutdownRequested is SHUTDOWN_REQUESTED (4): an instance asked for the shutdown of
	// the whole application (KIP-671); every member shuts down.
	ErrorShutdownRequested int32 = 4
)

// ErrMalformed is wrapped by the errors of DecodeSubscription and DecodeAssignment for bytes
// that are not a valid message (Java: the RuntimeException of the generated reader, or
// TaskAssignmentException "Failed to decode AssignmentInfo").
var ErrMalformed = errors.New("malformed stream assignment protocol data")

// ErrVersion is wrapped by the errors about a message version: one outside what the other
// fields allow, an assignment of a version this package cannot read, or an attempt to encode
// a version above LatestSupportedVersion.
var ErrVersion = errors.New("unsupported stream assignment protocol version")

// UUID is a process id (Java: ProcessId wrapping a java.util.UUID): 16 bytes, the most
// significant half first, as Java's Uuid is written on the wire.
type UUID [16]byte

// ParseUUID parses the canonical text form (8-4-4-4-12 hex digits, as java.util.UUID.toString
// writes it; upper-case digits are accepted).
func ParseUUID(s string) (UUID, error) {
	var u UUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, fmt.Errorf("process id %q is not a UUID (8-4-4-4-12 hex digits)", s)
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	if _, err := hex.Decode(u[:], []byte(h)); err != nil {
		return u, fmt.Errorf("process id %q is not a UUID: %v", s, err)
	}
	return u, nil
}

// String returns the canonical lower-case text form.
func (u UUID) String() string {
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Compare orders process ids as Java's UUID.compareTo does: by the most significant half,
// then the least significant one, each as a signed 64-bit number (so ids starting with 8-f
// sort before those starting with 0-7).
func (u UUID) Compare(v UUID) int {
	if c := cmp.Compare(int64(binary.BigEndian.Uint64(u[:8])), int64(binary.BigEndian.Uint64(v[:8]))); c != 0 {
		return c
	}
	return cmp.Compare(int64(binary.BigEndian.Uint64(u[8:])), int64(binary.BigEndian.Uint64(v[8:])))
}

// TaskID identifies a task on the wire (Java: TaskId): its sub-topology (Java's topic group
// id), its partition and, for Java's deprecated named topologies (v10+), the topology's name
// ("" for none).
type TaskID struct {
	Subtopology int32
	Partition   int32
	Topology    string
}

// Compare orders task ids as Java's TaskId.compareTo: by topology name, then sub-topology,
// then partition.
func (t TaskID) Compare(o TaskID) int {
	if c := cmp.Compare(t.Topology, o.Topology); c != 0 {
		return c
	}
	if c := cmp.Compare(t.Subtopology, o.Subtopology); c != 0 {
		return c
	}
	return cmp.Compare(t.Partition, o.Partition)
}

// String returns "<subtopology>_<partition>" (with "<topology>__" in front for a named
// topology), as Java's TaskId.toString.
func (t TaskID) String() string {
	s := strconv.Itoa(int(t.Subtopology)) + "_" + strconv.Itoa(int(t.Partition))
	if t.Topology != "" {
		return t.Topology + "__" + s
	}
	return s
}

// HostInfo is an instance's application.server (Java: HostInfo): where interactive queries
// reach it.
type HostInfo struct {
	Host string
	Port int32
}

// String returns "host:port".
func (h HostInfo) String() string { return h.Host + ":" + strconv.Itoa(int(h.Port)) }

func compareHost(a, b HostInfo) int {
	if c := cmp.Compare(a.Host, b.Host); c != 0 {
		return c
	}
	return cmp.Compare(a.Port, b.Port)
}

func compareTP(a, b kafka.TopicPartition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// Subscription is the user data of a stream thread's JoinGroup metadata (Java:
// SubscriptionInfo / SubscriptionInfoData): who the member's instance is and what state it
// has. Fields a version does not carry are zero after decoding and ignored when encoding.
type Subscription struct {
	// Version is the version used to write the message (1-11; a decoded message of a higher
	// version, from a newer member, has only Version and LatestSupportedVersion: see Future).
	Version int32
	// LatestSupportedVersion is the highest version the member can read (v3+; UnknownVersion
	// in versions 1 and 2).
	LatestSupportedVersion int32
	// ProcessID identifies the member's instance; all stream threads of an instance send the
	// same one, and the leader assigns tasks to instances (clients), then to their threads.
	ProcessID UUID
	// UserEndpoint is the instance's application.server ("host:port", v2+; "" for none).
	UserEndpoint string
	// TaskOffsetSums are, per task the instance has state for, the sum of its changelog
	// offsets (of the last record each store holds), or OffsetSumRunning for an active task
	// running now. Stateless tasks are not listed (the leader learns them from the owned
	// partitions). Versions 1-6 carry only which tasks were active (decoded as
	// OffsetSumRunning) and which were standbys (decoded as OffsetSumUnknown); writing such a
	// version, every sum other than OffsetSumRunning is a standby.
	TaskOffsetSums map[TaskID]int64
	// UniqueField (v8+) changes with every subscription of a member so that the coordinator
	// always sees new metadata and rebalances (Java increments a byte per rebalance).
	UniqueField int8
	// ErrorCode (v9+) is the instance's assignor error code, e.g. ErrorShutdownRequested.
	ErrorCode int32
	// ClientTags (v11+) are the instance's client.tag.* properties, for rack-aware standby
	// placement (KIP-708).
	ClientTags map[string]string
}

// Future reports whether the subscription has a version above LatestSupportedVersion, which
// this package reads only the two versions of.
func (s *Subscription) Future() bool { return s.Version > LatestSupportedVersion }

// ActiveTasks returns the tasks of TaskOffsetSums the member runs as active tasks (sum
// OffsetSumRunning), sorted.
func (s *Subscription) ActiveTasks() []TaskID {
	var out []TaskID
	for id, sum := range s.TaskOffsetSums {
		if sum == OffsetSumRunning {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, TaskID.Compare)
	return out
}

// StandbyTasks returns the other tasks of TaskOffsetSums, sorted.
func (s *Subscription) StandbyTasks() []TaskID {
	var out []TaskID
	for id, sum := range s.TaskOffsetSums {
		if sum != OffsetSumRunning {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, TaskID.Compare)
	return out
}

// checkVersions applies Java's SubscriptionInfo.validateVersions.
func checkVersions(version, latest int32) error {
	if latest == UnknownVersion {
		if version < 1 || version > 2 {
			return fmt.Errorf("%w: only versions 1 and 2 have an unknown (-1) latest supported version, got version %d", ErrVersion, version)
		}
		return nil
	}
	if version < 1 || version > latest {
		return fmt.Errorf("%w: version must be between 1 and %d; was: %d", ErrVersion, latest, version)
	}
	return nil
}

// Encode writes the subscription as Java's SubscriptionInfo.encode does, in s.Version.
// Versions 1 and 2 need LatestSupportedVersion UnknownVersion or at least the version (Java
// accepts both); tasks, tags and partitions are written in sorted order. Errors (wrapping
// ErrVersion): a version outside 1-LatestSupportedVersion or above LatestSupportedVersion;
// a named-topology task id in a version below 10; an endpoint, tag or topology name too long.
func (s *Subscription) Encode() ([]byte, error) {
	if err := checkVersions(s.Version, s.LatestSupportedVersion); err != nil {
		return nil, fmt.Errorf("encode subscription: %w", err)
	}
	if s.Version > LatestSupportedVersion {
		return nil, fmt.Errorf("encode subscription: %w: version %d is above the latest supported version %d", ErrVersion, s.Version, LatestSupportedVersion)
	}
	ids := slices.SortedFunc(maps.Keys(s.TaskOffsetSums), TaskID.Compare)
	if s.Version < MinNamedTopologyVersion {
		for _, id := range ids {
			if id.Topology != "" {
				return nil, fmt.Errorf("encode subscription: %w: named topology task %s needs version %d", ErrVersion, id, MinNamedTopologyVersion)
			}
		}
	}
	v := s.Version
	var e encoder
	e.Int32(v)
	if v >= 3 {
		e.Int32(s.LatestSupportedVersion)
	}
	e.Buf = append(e.Buf, s.ProcessID[:]...)
	if v <= 6 {
		var prev, standby []TaskID
		for _, id := range ids {
			if s.TaskOffsetSums[id] == OffsetSumRunning {
				prev = append(prev, id)
			} else {
				standby = append(standby, id)
			}
		}
		for _, list := range [][]TaskID{prev, standby} {
			e.Int32(int32(len(list)))
			for _, id := range list {
				e.Int32(id.Subtopology)
				e.Int32(id.Partition)
			}
		}
	}
	if v >= 2 {
		e.Bytes([]byte(s.UserEndpoint))
	}
	if v >= 7 && v <= 9 {
		// Grouped by sub-topology: each entry lists its partitions with their sums.
		var groups [][]TaskID
		for _, id := range ids {
			if n := len(groups); n > 0 && groups[n-1][0].Subtopology == id.Subtopology {
				groups[n-1] = append(groups[n-1], id)
			} else {
				groups = append(groups, []TaskID{id})
			}
		}
		e.Int32(int32(len(groups)))
		for _, g := range groups {
			e.Int32(g[0].Subtopology)
			e.Int32(int32(len(g)))
			for _, id := range g {
				e.Int32(id.Partition)
				e.Int64(s.TaskOffsetSums[id])
			}
		}
	}
	if v >= 10 {
		e.Int32(int32(len(ids)))
		for _, id := range ids {
			e.Int32(id.Subtopology)
			e.Int32(id.Partition)
			e.Int64(s.TaskOffsetSums[id])
			if id.Topology == "" {
				e.Int16(-1)
			} else {
				e.String(id.Topology)
			}
		}
	}
	if v >= 8 {
		e.Buf = append(e.Buf, byte(s.UniqueField))
	}
	if v >= 9 {
		e.Int32(s.ErrorCode)
	}
	if v >= 11 {
		keys := slices.Sorted(maps.Keys(s.ClientTags))
		e.Int32(int32(len(keys)))
		for _, k := range keys {
			e.Bytes([]byte(k))
			e.Bytes([]byte(s.ClientTags[k]))
		}
	}
	if e.Err != nil {
		return nil, fmt.Errorf("encode subscription: %w", e.Err)
	}
	return e.Buf, nil
}

// DecodeSubscription reads a subscription as Java's SubscriptionInfo.decode does: a version
// above LatestSupportedVersion yields only Version and LatestSupportedVersion (Future reports
// it); otherwise every field of the version. Errors: ErrMalformed (truncated data, a null
// array or bytes field, a duplicate client tag), ErrVersion (Java's version checks).
func DecodeSubscription(b []byte) (Subscription, error) {
	d := decoder{kbin.Reader{Buf: b, Malformed: ErrMalformed}}
	var s Subscription
	s.Version = d.Int32()
	if d.Err == nil && s.Version > LatestSupportedVersion {
		s.LatestSupportedVersion = d.Int32()
		if d.Err != nil {
			return Subscription{}, fmt.Errorf("decode subscription: %w", d.Err)
		}
		if err := checkVersions(s.Version, s.LatestSupportedVersion); err != nil {
			return Subscription{}, fmt.Errorf("decode subscription: %w", err)
		}
		return s, nil
	}
	v := s.Version
	if d.Err == nil && v < 1 {
		return Subscription{}, fmt.Errorf("decode subscription: %w: version %d", ErrVersion, v)
	}
	s.LatestSupportedVersion = UnknownVersion
	if v >= 3 {
		s.LatestSupportedVersion = d.Int32()
	}
	copy(s.ProcessID[:], d.Take(16, "processId"))
	sums := map[TaskID]int64{}
	if v <= 6 {
		for _, sum := range []int64{OffsetSumRunning, OffsetSumUnknown} {
			field := "prevTasks"
			if sum == OffsetSumUnknown {
				field = "standbyTasks"
			}
			n := d.ArrayLen(field, 8)
			for i := 0; i < n; i++ {
				id := TaskID{Subtopology: d.Int32(), Partition: d.Int32()}
				sums[id] = sum // a standby listed as previous active too ends a standby, as in Java
			}
		}
	}
	if v >= 2 {
		s.UserEndpoint = string(d.Bytes("userEndPoint"))
	}
	if v >= 7 && v <= 9 {
		n := d.ArrayLen("taskOffsetSums", 8)
		for i := 0; i < n; i++ {
			sub := d.Int32()
			m := d.ArrayLen("partitionToOffsetSum", 12)
			for j := 0; j < m; j++ {
				id := TaskID{Subtopology: sub, Partition: d.Int32()}
				sums[id] = d.Int64()
			}
		}
	}
	if v >= 10 {
		n := d.ArrayLen("taskOffsetSums", 18)
		for i := 0; i < n; i++ {
			id := TaskID{Subtopology: d.Int32(), Partition: d.Int32()}
			sum := d.Int64()
			id.Topology = d.NullableString("namedTopology")
			sums[id] = sum
		}
	}
	if v >= 8 {
		if u := d.Take(1, "uniqueField"); u != nil {
			s.UniqueField = int8(u[0])
		}
	}
	if v >= 9 {
		s.ErrorCode = d.Int32()
	}
	if v >= 11 {
		n := d.ArrayLen("clientTags", 8)
		for i := 0; i < n && d.Err == nil; i++ {
			k, val := string(d.Bytes("key")), string(d.Bytes("value"))
			if s.ClientTags == nil {
				s.ClientTags = map[string]string{}
			}
			if _, dup := s.ClientTags[k]; dup && d.Err == nil {
				d.Fail("client tag %q appears twice", k)
			}
			s.ClientTags[k] = val
		}
	}
	if d.Err != nil {
		return Subscription{}, fmt.Errorf("decode subscription (version %d): %w", v, d.Err)
	}
	if err := checkVersions(s.Version, s.LatestSupportedVersion); err != nil {
		return Subscription{}, fmt.Errorf("decode subscription: %w", err)
	}
	if len(sums) > 0 {
		s.TaskOffsetSums = sums
	}
	return s, nil
}

// Assignment is the user data of a member's assignment (Java: AssignmentInfo): its tasks and,
// for interactive queries, which instance holds which partitions. Fields a version does not
// carry are zero after decoding (NextRebalanceMs: NoRebalance) and ignored when encoding.
type Assignment struct {
	// Version is the version used (1-11): the lowest version any member of the group used.
	Version int32
	// CommonlySupportedVersion is the highest version every member can read (v3+;
	// UnknownVersion in versions 1 and 2). A member that used a higher version than Version
	// downgrades to it and rejoins; one below CommonlySupportedVersion upgrades (version
	// probing).
	CommonlySupportedVersion int32
	// ActiveTasks has one task per partition of the member's assignment, in the order of
	// those partitions sorted by topic and partition: the i-th partition belongs to the i-th
	// task (so a task with two input partitions appears twice).
	ActiveTasks []TaskID
	// StandbyTasks are the member's standby tasks (warm-ups included) with their input
	// partitions.
	StandbyTasks map[TaskID][]kafka.TopicPartition
	// PartitionsByHost (v2+) are the input partitions of the active tasks of every instance
	// that has an application.server, for interactive-query routing.
	PartitionsByHost map[HostInfo][]kafka.TopicPartition
	// StandbyPartitionsByHost (v6+) are the same for standby tasks (KIP-535).
	StandbyPartitionsByHost map[HostInfo][]kafka.TopicPartition
	// ErrorCode (v4+) is the leader's assignor error code; non-zero codes come with no tasks.
	ErrorCode int32
	// NextRebalanceMs (v7+) asks the member for a follow-up rebalance: 0 at once (tasks it
	// was given must first be revoked elsewhere), a wall-clock time in ms since the epoch for
	// a probing rebalance while warm-ups catch up, NoRebalance for none.
	NextRebalanceMs int64
}

// Encode writes the assignment as Java's AssignmentInfo.encode does, in a.Version; sets of
// tasks, hosts and partitions are written sorted (Java writes them in hash order; readers do
// not care). Errors (wrapping ErrVersion): a version outside 1-LatestSupportedVersion, a
// named-topology task below version 10; a topic or host longer than 65 535 bytes in Java's
// modified UTF-8.
func (a *Assignment) Encode() ([]byte, error) {
	v := a.Version
	if v < 1 || v > LatestSupportedVersion {
		return nil, fmt.Errorf("encode assignment: %w: version must be between 1 and %d; was: %d", ErrVersion, LatestSupportedVersion, v)
	}
	var e encoder
	e.Int32(v)
	if v >= 3 {
		e.Int32(a.CommonlySupportedVersion)
	}
	e.Int32(int32(len(a.ActiveTasks)))
	for _, id := range a.ActiveTasks {
		e.taskID(id, v)
	}
	sb := slices.SortedFunc(maps.Keys(a.StandbyTasks), TaskID.Compare)
	e.Int32(int32(len(sb)))
	for _, id := range sb {
		e.taskID(id, v)
		e.partitions(a.StandbyTasks[id], nil)
	}
	switch {
	case v >= 2 && v <= 4:
		e.hostPartitions(a.PartitionsByHost, nil)
	case v == 5:
		dict := e.topicDict(a.PartitionsByHost)
		e.hostPartitions(a.PartitionsByHost, dict)
	case v >= 6:
		dict := e.topicDict(a.PartitionsByHost, a.StandbyPartitionsByHost)
		e.hostPartitions(a.PartitionsByHost, dict)
		e.hostPartitions(a.StandbyPartitionsByHost, dict)
	}
	if v >= 4 {
		e.Int32(a.ErrorCode)
	}
	if v >= 7 {
		e.Int64(a.NextRebalanceMs)
	}
	if e.Err != nil {
		return nil, fmt.Errorf("encode assignment: %w", e.Err)
	}
	return e.Buf, nil
}

// DecodeAssignment reads an assignment as Java's AssignmentInfo.decode does. Sets are returned
// sorted and without duplicates. Errors: ErrVersion for a version this package cannot read
// (Java: "Unable to decode assignment data: used version: ..."), ErrMalformed for truncated
// or inconsistent data.
func DecodeAssignment(b []byte) (Assignment, error) {
	d := decoder{kbin.Reader{Buf: b, Malformed: ErrMalformed}}
	a := Assignment{CommonlySupportedVersion: UnknownVersion, NextRebalanceMs: NoRebalance}
	a.Version = d.Int32()
	v := a.Version
	if d.Err != nil {
		return Assignment{}, fmt.Errorf("decode assignment: %w", d.Err)
	}
	if v < 1 || v > LatestSupportedVersion {
		return Assignment{}, fmt.Errorf("decode assignment: %w: unable to decode assignment data: used version: %d; latest supported version: %d",
			ErrVersion, v, LatestSupportedVersion)
	}
	if v >= 3 {
		a.CommonlySupportedVersion = d.Int32()
	}
	n := d.ArrayLen("activeTasks", 8)
	for i := 0; i < n && d.Err == nil; i++ {
		a.ActiveTasks = append(a.ActiveTasks, d.taskID(v))
	}
	n = d.ArrayLen("standbyTasks", 12)
	for i := 0; i < n && d.Err == nil; i++ {
		id := d.taskID(v)
		tps := d.partitions(nil)
		if a.StandbyTasks == nil {
			a.StandbyTasks = map[TaskID][]kafka.TopicPartition{}
		}
		a.StandbyTasks[id] = tps
	}
	switch {
	case v >= 2 && v <= 4:
		a.PartitionsByHost = d.hostPartitions(nil)
	case v == 5:
		dict := d.topicDict()
		a.PartitionsByHost = d.hostPartitions(dict)
	case v >= 6:
		dict := d.topicDict()
		a.PartitionsByHost = d.hostPartitions(dict)
		a.StandbyPartitionsByHost = d.hostPartitions(dict)
	}
	if v >= 4 {
		a.ErrorCode = d.Int32()
	}
	if v >= 7 {
		a.NextRebalanceMs = d.Int64()
	}
	if d.Err != nil {
		return Assignment{}, fmt.Errorf("decode assignment (version %d): %w", v, d.Err)
	}
	return a, nil
}

// encoder and decoder write and read Kafka's classic encoding (kbin) and the Java-specific
// parts of Kafka Streams' formats: writeUTF strings, task ids, partition sets.
type encoder struct{ kbin.Writer }

// utf writes Java's DataOutput.writeUTF: an unsigned 16-bit length, then modified UTF-8.
func (e *encoder) utf(s string) {
	m := modifiedUTF8(s)
	if len(m) > math.MaxUint16 {
		e.SetErr(fmt.Errorf("%q is %d bytes in modified UTF-8, more than 65535", s[:min(len(s), 40)], len(m)))
		return
	}
	e.Buf = binary.BigEndian.AppendUint16(e.Buf, uint16(len(m)))
	e.Buf = append(e.Buf, m...)
}

// taskID writes Java's ConsumerProtocolUtils.writeTaskIdTo.
func (e *encoder) taskID(id TaskID, version int32) {
	e.Int32(id.Subtopology)
	e.Int32(id.Partition)
	if version < MinNamedTopologyVersion {
		if id.Topology != "" {
			e.SetErr(fmt.Errorf("%w: named topology task %s needs version %d", ErrVersion, id, MinNamedTopologyVersion))
		}
		return
	}
	units := utf16.Encode([]rune(id.Topology))
	e.Int32(int32(len(units)))
	for _, u := range units {
		e.Buf = binary.BigEndian.AppendUint16(e.Buf, u)
	}
}

// partitions writes a set of partitions: count, then topic (writeUTF, or its dictionary index)
// and partition of each, sorted, without duplicates.
func (e *encoder) partitions(tps []kafka.TopicPartition, dict map[string]int32) {
	tps = sortedTPs(tps)
	e.Int32(int32(len(tps)))
	for _, tp := range tps {
		if dict != nil {
			e.Int32(dict[tp.Topic])
		} else {
			e.utf(tp.Topic)
		}
		e.Int32(tp.Partition)
	}
}

func (e *encoder) hostPartitions(m map[HostInfo][]kafka.TopicPartition, dict map[string]int32) {
	hosts := slices.SortedFunc(maps.Keys(m), compareHost)
	e.Int32(int32(len(hosts)))
	for _, h := range hosts {
		e.utf(h.Host)
		e.Int32(h.Port)
		e.partitions(m[h], dict)
	}
}

// topicDict writes the topic dictionary of the host maps (index, writeUTF name; indices in
// sorted topic order) and returns it.
func (e *encoder) topicDict(ms ...map[HostInfo][]kafka.TopicPartition) map[string]int32 {
	set := map[string]bool{}
	for _, m := range ms {
		for _, tps := range m {
			for _, tp := range tps {
				set[tp.Topic] = true
			}
		}
	}
	topics := slices.Sorted(maps.Keys(set))
	dict := make(map[string]int32, len(topics))
	e.Int32(int32(len(topics)))
	for i, t := range topics {
		dict[t] = int32(i)
		e.Int32(int32(i))
		e.utf(t)
	}
	return dict
}

func sortedTPs(tps []kafka.TopicPartition) []kafka.TopicPartition {
	out := slices.Clone(tps)
	slices.SortFunc(out, compareTP)
	return slices.Compact(out)
}

type decoder struct{ kbin.Reader }

// utf reads Java's DataInput.readUTF.
func (d *decoder) utf(field string) string {
	b := d.Take(2, field)
	if b == nil {
		return ""
	}
	raw := d.Take(int(binary.BigEndian.Uint16(b)), field)
	if d.Err != nil {
		return ""
	}
	s, err := fromModifiedUTF8(raw)
	if err != nil {
		d.Fail("%s: %v", field, err)
	}
	return s
}

// taskID reads Java's ConsumerProtocolUtils.readTaskIdFrom.
func (d *decoder) taskID(version int32) TaskID {
	id := TaskID{Subtopology: d.Int32(), Partition: d.Int32()}
	if version >= MinNamedTopologyVersion {
		n := int(d.Int32())
		if d.Err == nil && (n < 0 || n > (len(d.Buf)-d.Off)/2) {
			d.Fail("named topology of %d chars does not fit in the %d bytes left", n, len(d.Buf)-d.Off)
			return id
		}
		raw := d.Take(2*n, "named topology")
		units := make([]uint16, n)
		for i := range units {
			units[i] = binary.BigEndian.Uint16(raw[2*i:])
		}
		id.Topology = string(utf16.Decode(units))
	}
	return id
}

// partitions reads a set of partitions (topics by writeUTF, or by index into dict).
func (d *decoder) partitions(dict map[int32]string) []kafka.TopicPartition {
	n := d.ArrayLen("partitions", 6)
	out := make([]kafka.TopicPartition, 0, n)
	for i := 0; i < n && d.Err == nil; i++ {
		var tp kafka.TopicPartition
		if dict != nil {
			idx := d.Int32()
			t, ok := dict[idx]
			if !ok && d.Err == nil {
				d.Fail("topic index %d is not in the topic dictionary", idx)
			}
			tp.Topic = t
		} else {
			tp.Topic = d.utf("topic")
		}
		tp.Partition = d.Int32()
		out = append(out, tp)
	}
	return sortedTPs(out)
}

func (d *decoder) hostPartitions(dict map[int32]string) map[HostInfo][]kafka.TopicPartition {
	n := d.ArrayLen("partitionsByHost", 10)
	out := make(map[HostInfo][]kafka.TopicPartition, n)
	for i := 0; i < n && d.Err == nil; i++ {
		h := HostInfo{Host: d.utf("host"), Port: d.Int32()}
		out[h] = d.partitions(dict)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (d *decoder) topicDict() map[int32]string {
	n := d.ArrayLen("topic dictionary", 6)
	dict := make(map[int32]string, n)
	for i := 0; i < n && d.Err == nil; i++ {
		idx := d.Int32()
		dict[idx] = d.utf("topic")
	}
	return dict
}

// modifiedUTF8 encodes s as Java's modified UTF-8 (DataOutput.writeUTF): U+0000 as two bytes,
// characters outside the BMP as two three-byte surrogates. Invalid UTF-8 in s is written as
// U+FFFD.
func modifiedUTF8(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r >= 1 && r <= 0x7f {
			out = append(out, byte(r))
			continue
		}
		if r > 0xffff {
			hi, lo := utf16.EncodeRune(r)
			out = appendUnit(appendUnit(out, uint16(hi)), uint16(lo))
			continue
		}
		out = appendUnit(out, uint16(r))
	}
	return out
}

func appendUnit(out []byte, u uint16) []byte {
	switch {
	case u >= 1 && u <= 0x7f:
		return append(out, byte(u))
	case u <= 0x7ff:
		return append(out, 0xc0|byte(u>>6), 0x80|byte(u&0x3f))
	default:
		return append(out, 0xe0|byte(u>>12), 0x80|byte((u>>6)&0x3f), 0x80|byte(u&0x3f))
	}
}

// fromModifiedUTF8 decodes Java's modified UTF-8 (DataInput.readUTF), refusing malformed input
// as Java does (UTFDataFormatException).
func fromModifiedUTF8(b []byte) (string, error) {
	units := make([]uint16, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			units = append(units, uint16(c))
			i++
		case c&0xe0 == 0xc0:
			if i+1 >= len(b) || b[i+1]&0xc0 != 0x80 {
				return "", fmt.Errorf("malformed modified UTF-8 at byte %d", i)
			}
			units = append(units, uint16(c&0x1f)<<6|uint16(b[i+1]&0x3f))
			i += 2
		case c&0xf0 == 0xe0:
			if i+2 >= len(b) || b[i+1]&0xc0 != 0x80 || b[i+2]&0xc0 != 0x80 {
				return "", fmt.Errorf("malformed modified UTF-8 at byte %d", i)
			}
			units = append(units, uint16(c&0x0f)<<12|uint16(b[i+1]&0x3f)<<6|uint16(b[i+2]&0x3f))
			i += 3
		default:
			return "", fmt.Errorf("malformed modified UTF-8 at byte %d", i)
		}
	}
	s := string(utf16.Decode(units))
	if !utf8.ValidString(s) {
		return "", errors.New("invalid characters")
	}
	return s, nil
}
