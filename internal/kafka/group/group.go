// Package group is classic consumer-group membership on sarama's protocol layer: a [Member]
// joins a group (FindCoordinator, JoinGroup, SyncGroup), heartbeats on its own connection,
// leaves, and commits and fetches the group's offsets (OffsetCommit, OffsetFetch with
// require_stable), as Java's ConsumerCoordinator does.
//
// The wire format is Java's: protocol type "consumer", one protocol named by the [Assignor]
// whose metadata is a ConsumerProtocolSubscription (version 3) and whose assignments are
// ConsumerProtocolAssignments, so the group can be shared with Java clients; nothing assumes
// the other members are this package's. Each member's subscription is decoded on its own: one
// that cannot be decoded reaches the Assignor with [Subscription.Err] set.
//
// A Member is driven by one goroutine (a stream thread): it calls [Member.Join] when
// [Member.RejoinNeeded] says so, [Member.Poll] every loop iteration, and [Member.Commit]. A
// goroutine of the Member heartbeats from the first join until Leave or Close.
package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// Defaults of the Config fields, Java's.
const (
	DefaultSessionTimeout    = 45 * time.Second
	DefaultHeartbeatInterval = 3 * time.Second
	DefaultRebalanceTimeout  = 300 * time.Second
	DefaultRetryBackoff      = 100 * time.Millisecond
	DefaultMetadataMaxAge    = 5 * time.Minute
)

const (
	// maxRetryBackoff is retry.backoff.max.ms: retries back off exponentially from
	// RetryBackoff up to this.
	maxRetryBackoff = time.Second
	// joinTimeoutLapse is what Java's consumer adds to the rebalance timeout to wait for a
	// JoinGroup response (AbstractCoordinator.JOIN_GROUP_TIMEOUT_LAPSE).
	joinTimeoutLapse = 5 * time.Second
	// abandonLeaveTimeout bounds the LeaveGroup an abandoned Join sends.
	abandonLeaveTimeout = time.Second
	// closeTimeout bounds the LeaveGroup of Close.
	closeTimeout = 5 * time.Second
	// maxReasonLen is the longest reason JoinGroup and LeaveGroup carry (Java:
	// JoinGroupRequest.maybeTruncateReason).
	maxReasonLen = 255
)

// Config configures a [Member]. Durations are sent to the broker in whole milliseconds.
type Config struct {
	// Cluster is the connection to the cluster. Required. The Member opens connections of
	// its own through it, so Members may share a Cluster: purpose "group-N" (JoinGroup,
	// SyncGroup, LeaveGroup, OffsetCommit, OffsetFetch; read timeout RebalanceTimeout + 5 s),
	// "heartbeat-N" (Heartbeat, the poll timeout's LeaveGroup) and "leave-N" (the LeaveGroup
	// of a cancelled Join), N unique per Member. Close closes them; it does not close the
	// Cluster.
	Cluster *kafka.Cluster
	// GroupID is group.id (Kafka Streams: application.id). Required.
	GroupID string
	// ClientID is the client.id of the Member's connections; "" keeps the Cluster's. Java
	// Kafka Streams names a thread's consumer <client.id>-StreamThread-<n>-consumer.
	ClientID string
	// InstanceID is group.instance.id: a static member (KIP-345) keeps its assignment across
	// a restart within the session timeout, and does not leave the group on Close. At most
	// 249 characters of [a-zA-Z0-9._-], not "." or "..". Default "": a dynamic member.
	InstanceID string
	// SessionTimeout is session.timeout.ms: the coordinator expires the member when it hears
	// no heartbeat for this long. The broker accepts group.min.session.timeout.ms (6 s by
	// default) to group.max.session.timeout.ms (30 min). Default 45 s.
	SessionTimeout time.Duration
	// HeartbeatInterval is heartbeat.interval.ms: the time between heartbeats. Less than
	// SessionTimeout (Java checks the same). Default 3 s.
	HeartbeatInterval time.Duration
	// RebalanceTimeout is max.poll.interval.ms: the rebalance timeout sent in JoinGroup (how
	// long the coordinator waits for every member to rejoin), and the longest time between
	// two Poll calls (a Join counts as one) before the member leaves the group. JoinGroup
	// responses are awaited up to RebalanceTimeout + 5 s. Default 300 s.
	RebalanceTimeout time.Duration
	// RetryBackoff is retry.backoff.ms: the first pause before a retry; retries back off
	// exponentially up to 1 s (retry.backoff.max.ms). Default 100 ms.
	RetryBackoff time.Duration
	// MetadataMaxAge is metadata.max.age.ms: how often the leader checks the partition counts
	// of the topics it assigned, and asks for a rebalance when one changed. Default 5 min.
	MetadataMaxAge time.Duration
	// Topics are the subscribed topics (Java's subscribe(topics)), sent sorted and without
	// duplicates. Required.
	Topics []string
	// Rack is client.rack, sent in the subscription (v3) for rack-aware assignors. Default "".
	Rack string
	// Assignor computes the assignment when this member leads and supplies its
	// subscription's user data. Required.
	Assignor Assignor
	// Logger receives the Member's log lines (with the group id); nil means slog.Default().
	Logger *slog.Logger
	// RemainInGroup, when it reports true, keeps a dynamic member in the group when it is
	// closed or its Join is abandoned: no LeaveGroup is sent, and the coordinator counts the
	// member until its session times out (Java: Consumer.close with
	// CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP). The group then starts no
	// rebalance for it, so members whose SyncGroup answer is still to come get the
	// assignment the leader made. It is asked on the goroutine that calls Close or Join. nil:
	// a dynamic member leaves.
	RemainInGroup func() bool
}

// Assignor is the partition assignment strategy (Java: ConsumerPartitionAssignor). It is
// called from the goroutine that runs Join.
type Assignor interface {
	// Name is the protocol name announced in JoinGroup (Kafka Streams: "stream"). Every
	// member of the group must announce the same one.
	Name() string
	// Subscription is called before every JoinGroup: the user data and the partitions this
	// member owns now (ConsumerProtocolSubscription's user_data and owned_partitions; nil
	// user data is sent as null). An error fails the Join (wrapping ErrFatal).
	Subscription(topics []string) (userData []byte, owned []kafka.TopicPartition, err error)
	// Assign runs on the leader with every member's subscription, in the order of the
	// JoinGroup response, and the partition count of every subscribed topic (of any member)
	// that exists. It returns an assignment per member id; a member without one gets an empty
	// assignment, and ids not in the group are ignored. Version 0 is sent as
	// AssignmentVersion (3, as Java's consumer sends); versions 1-3 as given. An error fails
	// the Join (wrapping ErrFatal).
	Assign(members []Subscription, partitions map[string]int32) (map[string]Assignment, error)
}

// Subscription is a member's JoinGroup metadata: Java's ConsumerProtocolSubscription and the
// member's identity.
type Subscription struct {
	// MemberID and InstanceID identify the member ("" InstanceID: dynamic).
	MemberID, InstanceID string
	// Version is the message version the member sent (Java 4.x: 3).
	Version int16
	// Topics are the member's subscribed topics (Java sends them sorted).
	Topics []string
	// UserData is the assignor's data (nil when the member sent null).
	UserData []byte
	// Owned are the partitions the member owns (v1+), sorted by topic and partition as Java
	// sends them.
	Owned []kafka.TopicPartition
	// Generation is the generation the member's Owned belong to (v2+); -1 unknown.
	Generation int32
	// Rack is the member's client.rack (v3+); "" none.
	Rack string
	// Err is set when the member's metadata could not be decoded (it wraps ErrMalformed);
	// then only MemberID and InstanceID are set. Such a member is never dropped silently: the
	// assignor decides (and logs) what it gets.
	Err error
}

// Assignment is a member's assignment: Java's ConsumerProtocolAssignment.
type Assignment struct {
	// Version is the message version (see Assignor.Assign for what 0 means when sending).
	Version int16
	// Partitions are the assigned partitions.
	Partitions []kafka.TopicPartition
	// UserData is the assignor's data (nil is sent as null).
	UserData []byte
}

// Joined is the outcome of a successful Join.
type Joined struct {
	// Generation is the group generation joined.
	Generation int32
	// MemberID is this member's id in it.
	MemberID string
	// LeaderID is the leader's member id.
	LeaderID string
	// Leader says whether this member leads (and ran Assign).
	Leader bool
	// Assignment is this member's assignment, decoded. A member the leader sent nothing gets
	// an empty one.
	Assignment Assignment
	// Lost reports that the member lost the generation it joined before (expelled, its
	// member id or generation refused, its session or poll timeout expired) since the last
	// Join: the partitions it owned may have been processed by another member meanwhile, so
	// whatever it kept of them is stale (Java: ConsumerRebalanceListener.onPartitionsLost).
	Lost bool
}

// GroupMetadata is what a transactional producer sends with TxnOffsetCommit so that the
// coordinator fences commits of an old generation (KIP-447; Java: ConsumerGroupMetadata).
type GroupMetadata struct {
	GroupID    string
	Generation int32 // -1 when not in a generation
	MemberID   string
	InstanceID string // "" for a dynamic member
}

// Offset is a committed offset (Java: OffsetAndMetadata).
type Offset struct {
	// Offset is the next offset to consume; -1 (kafka.OffsetUnknown) in Committed's answer
	// means none is committed.
	Offset int64
	// LeaderEpoch is the leader epoch of the last consumed record; -1 unknown.
	LeaderEpoch int32
	// Metadata is the commit's metadata string (Kafka Streams: the task's encoded stream time).
	Metadata string
}

// state is where a member is in the group protocol.
type state int

const (
	// unjoined: no generation; no heartbeats.
	unjoined state = iota
	// joining: a JoinGroup is in flight; no heartbeats (the coordinator does not expire a
	// member whose join it holds).
	joining
	// syncing: joined a generation, SyncGroup to come or in flight; heartbeats run.
	syncing
	// stable: the generation stands; heartbeats run.
	stable
)

var memberSeq atomic.Int64

// Member is one member of a classic consumer group. Its methods are safe for concurrent use;
// Join, Commit, Committed and Leave use one connection and run one at a time.
type Member struct {
	cfg      Config
	log      *slog.Logger
	cl       *kafka.Cluster
	topics   []string
	instance *string
	groupP   kafka.Purpose
	hbP      kafka.Purpose
	leaveP   kafka.Purpose

	start    time.Time    // the base of lastPoll
	lastPoll atomic.Int64 // ns since start of the last Poll

	ctx    context.Context // ends at Close
	cancel context.CancelFunc

	opMu sync.Mutex // one operation on the group connection at a time

	mu         sync.Mutex
	closed     bool
	st         state
	memberID   string
	generation int32
	// joinedGen and joinedMember are the generation and member id of the last successful join;
	// they outlive the generation (see Metadata).
	joinedGen    int32
	joinedMember string
	// lost is set when the member's generation or member id was reset (the coordinator no
	// longer counts it in the generation it last joined) and cleared by the next join, which
	// reports it in Joined.Lost.
	lost       bool
	leaderID   string
	coord      kafka.Node
	coordKnown bool
	nodes      map[kafka.Node]bool // every coordinator used, to close its connections
	rejoin     error               // why a rejoin is needed; nil while the generation stands
	fatal      error               // sticky: the member cannot continue
	lastHB     time.Time           // the last successful heartbeat (or JoinGroup response)
	nextHB     time.Time
	hbFailures int
	heartbeats int64        // successful heartbeats (for tests)
	unstable   atomic.Int64 // Committed's retries after UNSTABLE_OFFSET_COMMIT (for tests)
	hbFault    atomic.Bool  // tests: heartbeats fail as if the coordinator were unreachable
	hbCancel   context.CancelFunc
	hbDone     chan struct{}
	wake       chan struct{} // nudges the heartbeat goroutine (capacity 1)
	assigned   map[string]int32
	metaDue    time.Time
	metaBusy   bool
}

// New validates cfg, fills in its defaults and returns a Member that has not joined yet (no
// connection is opened before Join). Errors: a missing Cluster, GroupID, Topics or Assignor;
// an Assignor without a name; a negative duration; HeartbeatInterval not below
// SessionTimeout; a duration beyond int32 milliseconds; an invalid InstanceID or topic name.
func New(cfg Config) (*Member, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("group %q: %w", cfg.GroupID, err)
	}
	topics := slices.Clone(cfg.Topics)
	slices.Sort(topics)
	topics = slices.Compact(topics)
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("group", cfg.GroupID)
	if cfg.InstanceID != "" {
		log = log.With("instance", cfg.InstanceID)
	}
	n := strconv.FormatInt(memberSeq.Add(1), 10)
	readTimeout := cfg.Cluster.Config().Net.ReadTimeout
	m := &Member{
		cfg:        cfg,
		log:        log,
		cl:         cfg.Cluster,
		topics:     topics,
		groupP:     kafka.Purpose{Name: "group-" + n, ClientID: cfg.ClientID, ReadTimeout: max(readTimeout, cfg.RebalanceTimeout+joinTimeoutLapse)},
		hbP:        kafka.Purpose{Name: "heartbeat-" + n, ClientID: cfg.ClientID, ReadTimeout: min(readTimeout, cfg.SessionTimeout)},
		leaveP:     kafka.Purpose{Name: "leave-" + n, ClientID: cfg.ClientID},
		start:      time.Now(),
		generation: -1,
		joinedGen:  -1,
		nodes:      map[kafka.Node]bool{},
		rejoin:     ErrNotJoined,
		wake:       make(chan struct{}, 1),
	}
	if cfg.InstanceID != "" {
		id := cfg.InstanceID
		m.instance = &id
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.Poll()
	return m, nil
}

var instanceIDPattern = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

func (c *Config) validate() error {
	switch {
	case c.Cluster == nil:
		return errors.New("config: Cluster is required")
	case c.GroupID == "":
		return errors.New("config: GroupID (group.id) is required")
	case len(c.Topics) == 0:
		return errors.New("config: Topics is required")
	case c.Assignor == nil:
		return errors.New("config: Assignor is required")
	case c.Assignor.Name() == "":
		return errors.New("config: the Assignor's Name is empty")
	}
	for _, t := range c.Topics {
		if t == "" {
			return errors.New("config: an empty topic name in Topics")
		}
	}
	if c.InstanceID != "" {
		if len(c.InstanceID) > 249 || c.InstanceID == "." || c.InstanceID == ".." || !instanceIDPattern.MatchString(c.InstanceID) {
			return fmt.Errorf("config: InstanceID (group.instance.id) %q is invalid: at most 249 characters of [a-zA-Z0-9._-], not \".\" or \"..\"", c.InstanceID)
		}
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"SessionTimeout (session.timeout.ms)", &c.SessionTimeout, DefaultSessionTimeout},
		{"HeartbeatInterval (heartbeat.interval.ms)", &c.HeartbeatInterval, DefaultHeartbeatInterval},
		{"RebalanceTimeout (max.poll.interval.ms)", &c.RebalanceTimeout, DefaultRebalanceTimeout},
		{"RetryBackoff (retry.backoff.ms)", &c.RetryBackoff, DefaultRetryBackoff},
		{"MetadataMaxAge (metadata.max.age.ms)", &c.MetadataMaxAge, DefaultMetadataMaxAge},
	} {
		switch {
		case *d.v < 0:
			return fmt.Errorf("config: %s is negative (%v)", d.name, *d.v)
		case *d.v == 0:
			*d.v = d.def
		case *d.v < time.Millisecond:
			return fmt.Errorf("config: %s %v is below 1 ms", d.name, *d.v)
		case d.v.Milliseconds() > math.MaxInt32:
			return fmt.Errorf("config: %s %v is beyond %d ms", d.name, *d.v, math.MaxInt32)
		}
	}
	if c.HeartbeatInterval >= c.SessionTimeout {
		return fmt.Errorf("config: HeartbeatInterval %v must be lower than SessionTimeout %v", c.HeartbeatInterval, c.SessionTimeout)
	}
	return nil
}

// RejoinNeeded returns nil while this member's generation stands, else why a rejoin is
// needed: ErrNotJoined (not joined yet, or left), ErrRebalanceInProgress (a heartbeat was
// answered REBALANCE_IN_PROGRESS), ErrMemberLost (UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION from
// a heartbeat or a commit), ErrSessionExpired, ErrPollTimeout, ErrPartitionsChanged,
// ErrRejoinRequested (RequestRejoin), or a fatal error (errors.Is(err, ErrFatal), e.g.
// ErrFencedInstanceID) after which the member cannot rejoin. Cheap: one uncontended lock.
func (m *Member) RejoinNeeded() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fatal != nil {
		return m.fatal
	}
	if m.closed {
		return kafka.ErrClosed
	}
	return m.rejoin
}

// RequestRejoin makes RejoinNeeded report ErrRejoinRequested with reason (unless a rejoin is
// already needed), e.g. for a cooperative follow-up rebalance; the reason is sent with the
// next JoinGroup (KIP-800).
func (m *Member) RequestRejoin(reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setRejoinLocked(fmt.Errorf("%w: %s", ErrRejoinRequested, reason), false)
}

// GenerationLost reports whether the member lost the generation it last joined (its member id
// or generation was refused or reset, its session or poll timeout expired) since its last
// successful Join: the partitions it owned may have been given to another member, so what it
// processes of them is stale. A thread that goes on processing while a Join runs on another
// goroutine (a cooperative rebalance) stops when this turns true. Cheap: one lock.
func (m *Member) GenerationLost() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lost
}

// Poll records that the member's thread is alive. Without a Poll (or Join) for
// RebalanceTimeout the heartbeat goroutine makes the member leave the group (a dynamic member
// sends LeaveGroup, Java's "consumer poll timeout has expired") and RejoinNeeded reports
// ErrPollTimeout. Cheap: one atomic store.
func (m *Member) Poll() {
	m.lastPoll.Store(int64(time.Since(m.start)))
}

// Metadata returns the member's group metadata for a transactional producer's
// TxnOffsetCommit (KIP-447): the generation and member id of the last successful join (-1 and
// "" before the first), also after that generation was lost, so that the coordinator fences a
// zombie's commit (generation -1 with an empty member id would pass its check unfenced). Java:
// ConsumerCoordinator.groupMetadata.
func (m *Member) Metadata() GroupMetadata {
	m.mu.Lock()
	defer m.mu.Unlock()
	return GroupMetadata{GroupID: m.cfg.GroupID, Generation: m.joinedGen, MemberID: m.joinedMember, InstanceID: m.cfg.InstanceID}
}

// Leave sends LeaveGroup (v5, with a reason) for this member, also for a static member (an
// explicit leave, as Kafka Streams' CloseOptions.leaveGroup), stops the heartbeats and
// leaves the member unjoined (RejoinNeeded: ErrNotJoined); a later Join joins again with a
// new member id. Coordinator errors are retried until ctx ends; UNKNOWN_MEMBER_ID (already
// gone) is success. Errors: ctx's, kafka.ErrClosed, other LeaveGroup errors (wrapped).
func (m *Member) Leave(ctx context.Context) error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	ctx, done := m.opContext(ctx)
	defer done()
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return kafka.ErrClosed
	}
	return m.leave(ctx, "the consumer is leaving the group")
}

// Close leaves the group if this member is a dynamic member with a member id (waiting at most
// 5 s for the LeaveGroup) and Config.RemainInGroup does not keep it in; a static member does
// not leave (as Java's consumer), so that an instance restarted within the session timeout gets
// its assignment back. Close ends a pending Join or commit, stops the heartbeats and closes the
// Member's connections. Later calls fail with kafka.ErrClosed. It returns the LeaveGroup's
// error, if any.
func (m *Member) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.opMu.Lock()
	defer m.opMu.Unlock()
	var err error
	m.mu.Lock()
	memberID := m.memberID
	leave := m.instance == nil && memberID != ""
	m.mu.Unlock()
	if leave && m.remainInGroup() {
		m.log.Info("group: closing without leaving the group", "member", memberID)
		leave = false
	}
	if leave {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		err = m.leave(ctx, "the consumer is being closed")
		cancel()
	} else {
		m.stopHeartbeat()
	}
	m.mu.Lock()
	nodes := make([]kafka.Node, 0, len(m.nodes))
	for n := range m.nodes {
		nodes = append(nodes, n)
	}
	m.st = unjoined
	m.mu.Unlock()
	for _, n := range nodes {
		m.cl.Interrupt(n, m.groupP)
		m.cl.Interrupt(n, m.hbP)
		m.cl.Interrupt(n, m.leaveP)
	}
	return err
}

// leave stops the heartbeats, resets the member and sends LeaveGroup for its member id.
func (m *Member) leave(ctx context.Context, reason string) error {
	m.stopHeartbeat()
	m.mu.Lock()
	memberID, gen := m.memberID, m.generation
	m.resetLocked(ErrNotJoined)
	m.mu.Unlock()
	if memberID == "" {
		return nil
	}
	m.log.Info("group: leaving", "member", memberID, "generation", gen, "reason", reason)
	return m.withCoordinator(ctx, "leave", func(coord kafka.Node) (bool, error) {
		err := m.sendLeave(ctx, coord, m.groupP, memberID, reason)
		switch {
		case err == nil:
			return false, nil
		case ctx.Err() != nil:
			return false, m.ctxError(ctx, "leave", err)
		case errors.Is(err, sarama.ErrNotCoordinatorForConsumer), errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable):
			m.forgetCoordinator(coord)
		case kerrOf(err) == sarama.ErrNoError && kafka.Retriable(err): // transport
			m.forgetCoordinator(coord)
		case kafka.RetriableCode(kerrOf(err)):
		default:
			return false, err
		}
		return true, err
	})
}

// sendLeave sends one LeaveGroup for memberID on purpose p's connection.
func (m *Member) sendLeave(ctx context.Context, coord kafka.Node, p kafka.Purpose, memberID, reason string) error {
	r := truncate(reason)
	req := &sarama.LeaveGroupRequest{
		Version: 5,
		GroupId: m.cfg.GroupID,
		Members: []sarama.MemberIdentity{{MemberId: memberID, GroupInstanceId: m.instance, Reason: &r}},
	}
	var resp *sarama.LeaveGroupResponse
	err := m.call(ctx, coord, p, func(b *sarama.Broker) (err error) {
		resp, err = b.LeaveGroup(req)
		return err
	})
	if err != nil {
		return fmt.Errorf("group %q: LeaveGroup of member %s: %w", m.cfg.GroupID, memberID, err)
	}
	switch resp.Err {
	case sarama.ErrNoError, sarama.ErrUnknownMemberId:
	default:
		return fmt.Errorf("group %q: LeaveGroup of member %s: %w", m.cfg.GroupID, memberID, resp.Err)
	}
	for _, mr := range resp.Members {
		if mr.Err != sarama.ErrNoError && mr.Err != sarama.ErrUnknownMemberId {
			return fmt.Errorf("group %q: LeaveGroup of member %s: %w", m.cfg.GroupID, memberID, mr.Err)
		}
	}
	return nil
}

// remainInGroup reports whether Config.RemainInGroup keeps the member in the group.
func (m *Member) remainInGroup() bool {
	return m.cfg.RemainInGroup != nil && m.cfg.RemainInGroup()
}

// abandonJoin follows a Join whose context ended: a dynamic member with a member id sends a
// LeaveGroup on a connection of its own (the group connection may have been cut), so the
// coordinator need not wait for it, unless Config.RemainInGroup keeps it in the group; the
// member is then unjoined.
func (m *Member) abandonJoin() {
	m.mu.Lock()
	memberID, coord, known := m.memberID, m.coord, m.coordKnown
	if m.instance == nil {
		m.resetLocked(ErrNotJoined)
	} else {
		m.st, m.generation = unjoined, -1
		m.setRejoinLocked(ErrNotJoined, true)
	}
	m.mu.Unlock()
	if m.instance != nil || memberID == "" || !known {
		return
	}
	if m.remainInGroup() {
		m.log.Debug("group join: cancelled; the member stays in the group", "member", memberID)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), abandonLeaveTimeout)
	defer cancel()
	if err := m.sendLeave(ctx, coord, m.leaveP, memberID, "the join was cancelled"); err != nil {
		m.log.Debug("group join: LeaveGroup after cancellation", "member", memberID, "error", err)
	} else {
		m.log.Debug("group join: cancelled; left the group", "member", memberID)
	}
	m.cl.Interrupt(coord, m.leaveP)
}

// failJoin records a Join's fatal error.
func (m *Member) failJoin(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.st == joining || m.st == syncing {
		m.st, m.generation = unjoined, -1
	}
	m.setRejoinLocked(err, true)
}

// resetLocked forgets the generation and the member id.
func (m *Member) resetLocked(cause error) {
	m.st, m.generation, m.memberID, m.leaderID = unjoined, -1, "", ""
	m.lost = m.joinedGen >= 0 // a later Join is a new member: what the last one held is stale
	m.assigned = nil
	m.rejoin = cause
}

// loseLocked ends the generation: the coordinator no longer counts the member in it.
func (m *Member) loseLocked(cause error, resetMemberID bool) {
	m.st, m.generation, m.leaderID = unjoined, -1, ""
	m.lost = true
	if resetMemberID {
		m.memberID = ""
	}
	m.assigned = nil
	m.setRejoinLocked(cause, true)
	m.log.Info("group: member lost its generation", "reason", cause)
}

// setRejoinLocked records why a rejoin is needed. A severe cause (the generation is lost)
// replaces a milder one; a mild one never replaces another.
func (m *Member) setRejoinLocked(cause error, severe bool) {
	if m.rejoin == nil || severe {
		if m.rejoin == nil {
			m.log.Info("group: rejoin needed", "reason", cause)
		}
		m.rejoin = cause
	}
}

// usable returns why the member cannot run an operation: closed, fenced.
func (m *Member) usable() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return kafka.ErrClosed
	}
	return m.fatal
}
