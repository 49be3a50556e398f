package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/internal/assignment"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/testhooks"
	"github.com/kstreams-go/kstreams/processor"
)

// AssignorName is the name of the partition assignment strategy the stream threads announce
// in JoinGroup, Java's StreamsPartitionAssignor's: a group can mix kstreams-go and Java Kafka
// Streams instances of one application, and either can lead it.
const AssignorName = "stream"

// Errors of the task assignment, wrapped with the thread, generation and leader they concern.
var (
	// ErrAssignment is wrapped by the errors that stop a stream thread because of its
	// assignment (Java: TaskAssignmentException): the leader's user data cannot be read, does
	// not match the assigned partitions, or carries the error code ASSIGNMENT_ERROR (the
	// leader could not compute an assignment, or could not read this member's subscription).
	ErrAssignment = errors.New("kstreams: task assignment failed")
)

// subtopologySources are the topics of one sub-topology (names as at run time).
type subtopologySources struct {
	ID int
	// Topics are its source topics.
	Topics []string
	// Changelogs are the changelog topics of its logged stores, sorted (a task's changelog
	// partition has the task's partition number); a sub-topology with changelogs has stateful
	// tasks. SourceChangelogs are those among them that are also source topics (a source
	// table restoring from its input): their "end offset" is the group's committed offset.
	Changelogs, SourceChangelogs []string
}

// received is what a member took from its last assignment (Java: the part of
// StreamsPartitionAssignor.onAssignment that reaches the TaskManager and StreamsMetadataState).
type received struct {
	// active are the active tasks with their partitions (paired from the assignment).
	active map[processor.TaskID][]kafka.TopicPartition
	// standby are the standby tasks (warm-ups included) with their input partitions.
	standby map[processor.TaskID][]kafka.TopicPartition
	// hosts and standbyHosts are, per application.server, the active and standby tasks.
	hosts, standbyHosts map[string][]processor.TaskID
	// errorCode is the leader's assignor error code (assignment.Error*).
	errorCode int32
	// nextRebalanceMs is the follow-up rebalance the assignment asks for: 0 at once, a time in
	// ms since the epoch, assignment.NoRebalance for none.
	nextRebalanceMs int64
	// why says why a follow-up at once is due ("" when none or from the leader).
	why string
}

// subscription is the identity a stream thread gives its assignor when it creates it
// (newThread): the instance's process id (a UUID), the thread's index and the instance's
// application.server. init completes the assignor from it.
type subscription struct {
	ProcessID string
	Thread    int
	Host      string
}

// assignmentInfo is what an assignment gave a member, as the runtime's host map takes it.
type assignmentInfo = received

// assignor is the "stream" protocol of one stream thread's group member (a group.Assignor),
// Java's StreamsPartitionAssignor on the wire: the subscription carries Java's binary
// SubscriptionInfo (this instance's process id, the task offset sums of its state, its
// application.server, client tags and assignor error code), and, when the member leads, the
// assignment is computed as Java's (internal/assignment: high-availability task assignor,
// cooperative withholding, probing rebalances, version probing) and sent as Java's binary
// AssignmentInfo. The thread's membership reads what it receives (membership.go: assignmentOf)
// and the thread applies it (rebalance.go).
type assignor struct {
	subs []subtopologySources
	// self, standbys and onAssign are set by newThread; init derives the rest.
	self     subscription
	standbys int
	// onAssign receives every assignment read (interactive-query metadata); nil: none.
	onAssign func(assignmentInfo)
	inited   bool

	processID assignment.UUID
	endpoint  string
	tags      map[string]string
	cfg       assignment.Config
	// errCode is the instance's assignor error code announced in the subscription, shared by
	// the instance's threads (Runtime.shutdown.code); nil: 0.
	errCode *atomic.Int32
	log     *slog.Logger
	// groupID is application.id (for the test hook testhooks.BeforeAssign).
	groupID string
	// offsetSums returns the task offset sums of the member's state (called from Join, on the
	// thread's goroutine); nil: none.
	offsetSums func() map[processor.TaskID]int64
	// endOffsets and committed look up, for the leader, the end offsets of changelog
	// partitions and the group's committed offsets of source-changelog partitions (-1: none
	// committed); nil: not available (the leader keeps the previous assignment).
	endOffsets func(tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error)
	committed  func(tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error)
	// now is the clock of probing rebalances; nil: time.Now.
	now func() time.Time

	mu       sync.Mutex
	owned    []kafka.TopicPartition
	used     int32 // the subscription version (lowered and raised by version probing)
	unique   int8
	last     received
	lastPlan *assignment.Result
	followup *time.Timer
	followAt int64
}

var _ group.Assignor = (*assignor)(nil)

// init completes the assignor of membership m before its first join: the process id, the
// application.server, the client tags and the assignment settings of the runtime, and the
// thread's lookups (its task offset sums; as leader, end and committed offsets on the thread's
// cluster connection). Errors: a process id that is not a UUID.
func (a *assignor) init(m *membership) error {
	if a.inited {
		return nil
	}
	pid, err := assignment.ParseUUID(a.self.ProcessID)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrAssignment, err)
	}
	r := m.rt
	a.processID, a.endpoint, a.tags = pid, a.self.Host, r.cfg.ClientTags
	a.groupID = r.cfg.ApplicationID
	a.cfg = r.cfg.Assignment
	a.cfg.NumStandbyReplicas = a.standbys
	a.offsetSums = m.offsetSums
	a.endOffsets = func(tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error) {
		return listEndOffsets(m.ctx, m.cluster, tps)
	}
	a.committed = func(tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error) {
		return committedOffsets(m.ctx, m.cluster, r.cfg.ApplicationID, tps)
	}
	a.inited = true
	return nil
}

// Name implements group.Assignor.
func (a *assignor) Name() string { return AssignorName }

// setOwned records the partitions this member owns (its active tasks' input partitions),
// announced in its next subscription.
func (a *assignor) setOwned(tps []kafka.TopicPartition) {
	a.mu.Lock()
	a.owned = slices.Clone(tps)
	a.mu.Unlock()
}

// lastAssignment returns what this member took from its last assignment.
func (a *assignor) lastAssignment() received {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

func (a *assignor) logger() *slog.Logger {
	if a.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.log
}

func (a *assignor) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

// subscriptionInfo returns this member's SubscriptionInfo for the next JoinGroup.
func (a *assignor) subscriptionInfo() assignment.Subscription {
	var sums map[processor.TaskID]int64
	if a.offsetSums != nil {
		sums = a.offsetSums()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.used == 0 {
		a.used = assignment.LatestSupportedVersion
	}
	a.unique++ // new metadata for every join, so the coordinator always rebalances (Java's uniqueField)
	s := assignment.Subscription{Version: a.used, LatestSupportedVersion: assignment.LatestSupportedVersion,
		ProcessID: a.processID, UserEndpoint: a.endpoint, UniqueField: a.unique, ClientTags: a.tags}
	if a.errCode != nil {
		s.ErrorCode = a.errCode.Load()
	}
	if len(sums) > 0 {
		s.TaskOffsetSums = make(map[assignment.TaskID]int64, len(sums))
		for id, sum := range sums {
			s.TaskOffsetSums[wireTask(id)] = sum
		}
	}
	return s
}

// Subscription implements group.Assignor: Java's SubscriptionInfo and the partitions this
// member owns.
func (a *assignor) Subscription([]string) ([]byte, []kafka.TopicPartition, error) {
	s := a.subscriptionInfo()
	b, err := s.Encode()
	if err != nil {
		return nil, nil, fmt.Errorf("subscription user data: %w", err)
	}
	a.mu.Lock()
	owned := slices.Clone(a.owned)
	a.mu.Unlock()
	return b, owned, nil
}

func wireTask(id processor.TaskID) assignment.TaskID {
	return assignment.TaskID{Subtopology: int32(id.Subtopology), Partition: int32(id.Partition)}
}

func localTask(id assignment.TaskID) (processor.TaskID, error) {
	if id.Topology != "" {
		return processor.TaskID{}, fmt.Errorf("task %s belongs to named topology %q, which this library does not have", id, id.Topology)
	}
	return processor.TaskID{Subtopology: int(id.Subtopology), Partition: int(id.Partition)}, nil
}

// tasksFor returns the tasks of the given topic metadata and, per task, its partitions: the
// partitions with the same number of the topics one sub-topology reads form one task (Java's
// PartitionGrouper), which keeps co-partitioned topics together.
func tasksFor(subs []subtopologySources, topics map[string][]int32) ([]processor.TaskID, map[processor.TaskID]map[string][]int32) {
	parts := map[processor.TaskID]map[string][]int32{}
	var ids []processor.TaskID
	for _, s := range subs {
		for _, t := range s.Topics {
			for _, p := range topics[t] {
				id := processor.TaskID{Subtopology: s.ID, Partition: int(p)}
				if parts[id] == nil {
					parts[id] = map[string][]int32{}
					ids = append(ids, id)
				}
				parts[id][t] = append(parts[id][t], p)
			}
		}
	}
	sortTasks(ids)
	return ids, parts
}

func sortTasks(ids []processor.TaskID) {
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].Subtopology != ids[j].Subtopology {
			return ids[i].Subtopology < ids[j].Subtopology
		}
		return ids[i].Partition < ids[j].Partition
	})
}

// parseTaskID parses "<subtopology>_<partition>".
func parseTaskID(s string) (processor.TaskID, bool) {
	var id processor.TaskID
	a, b, ok := strings.Cut(s, "_")
	if !ok {
		return id, false
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || x < 0 || y < 0 {
		return id, false
	}
	return processor.TaskID{Subtopology: x, Partition: y}, true
}

// Assign implements group.Assignor on the leader, as Java's StreamsPartitionAssignor.assign:
// see assignment.Assign. Members whose subscription cannot be read are logged as errors (with
// their member id): they get the error code ASSIGNMENT_ERROR and no tasks, and the partitions
// they own go to no one else until they left.
func (a *assignor) Assign(members []group.Subscription, partitions map[string]int32) (map[string]group.Assignment, error) {
	if h := testhooks.BeforeAssign; h != nil {
		h(a.groupID)
	}
	topics := make(map[string][]int32, len(partitions))
	for t, n := range partitions {
		ps := make([]int32, n)
		for i := range ps {
			ps[i] = int32(i)
		}
		topics[t] = ps
	}
	var missing []string
	for _, s := range a.subs {
		for _, t := range s.Topics {
			if _, ok := partitions[t]; !ok && !slices.Contains(missing, t) {
				missing = append(missing, t)
			}
		}
	}
	slices.Sort(missing)
	ids, parts := tasksFor(a.subs, topics)
	in := assignment.Group{Tasks: map[assignment.TaskID][]kafka.TopicPartition{}, MissingSourceTopics: missing,
		Leader: a.processID, NowMs: a.clock().UnixMilli(), Config: a.cfg}
	changelogs := map[int]subtopologySources{}
	for _, s := range a.subs {
		changelogs[s.ID] = s
	}
	var stateful []processor.TaskID
	for _, id := range ids {
		var tps []kafka.TopicPartition
		for t, ps := range parts[id] {
			for _, p := range ps {
				tps = append(tps, kafka.TopicPartition{Topic: t, Partition: p})
			}
		}
		in.Tasks[wireTask(id)] = tps
		if len(changelogs[id.Subtopology].Changelogs) > 0 {
			stateful = append(stateful, id)
			in.Stateful = append(in.Stateful, wireTask(id))
		}
	}
	in.EndOffsetSums = func() (map[assignment.TaskID]int64, error) { return a.endOffsetSums(stateful, changelogs) }
	for _, m := range members {
		in.Members = append(in.Members, assignment.Member{ID: m.MemberID, Owned: m.Owned, UserData: m.UserData, Err: m.Err})
	}
	res, err := assignment.Assign(in)
	if err != nil {
		return nil, err
	}
	a.logPlan(res)
	a.mu.Lock()
	a.lastPlan = res
	a.mu.Unlock()
	out := make(map[string]group.Assignment, len(res.Assignments))
	for id, ma := range res.Assignments {
		ud, err := ma.Info.Encode()
		if err != nil {
			return nil, fmt.Errorf("assignment of member %s: %w", id, err)
		}
		out[id] = group.Assignment{Partitions: ma.Partitions, UserData: ud}
	}
	return out, nil
}

// endOffsetSums returns, per stateful task, the sum of its changelog partitions' end offsets
// (source changelogs: the committed offset, 0 when none), saturating at math.MaxInt64.
func (a *assignor) endOffsetSums(tasks []processor.TaskID, subs map[int]subtopologySources) (map[assignment.TaskID]int64, error) {
	if a.endOffsets == nil {
		return nil, errors.New("no end offset lookup")
	}
	var ends, commits []kafka.TopicPartition
	for _, id := range tasks {
		s := subs[id.Subtopology]
		for _, t := range s.Changelogs {
			tp := kafka.TopicPartition{Topic: t, Partition: int32(id.Partition)}
			if slices.Contains(s.SourceChangelogs, t) {
				commits = append(commits, tp)
			} else {
				ends = append(ends, tp)
			}
		}
	}
	offsets := map[kafka.TopicPartition]int64{}
	if len(ends) > 0 {
		got, err := a.endOffsets(ends)
		if err != nil {
			return nil, fmt.Errorf("changelog end offsets: %w", err)
		}
		for tp, off := range got {
			offsets[tp] = off
		}
	}
	if len(commits) > 0 {
		if a.committed == nil {
			return nil, errors.New("no committed offset lookup")
		}
		got, err := a.committed(commits)
		if err != nil {
			return nil, fmt.Errorf("committed offsets of source changelogs: %w", err)
		}
		for tp, off := range got {
			offsets[tp] = max(off, 0)
		}
	}
	out := make(map[assignment.TaskID]int64, len(tasks))
	for _, id := range tasks {
		var sum int64
		for _, t := range subs[id.Subtopology].Changelogs {
			tp := kafka.TopicPartition{Topic: t, Partition: int32(id.Partition)}
			off, ok := offsets[tp]
			if !ok {
				return nil, fmt.Errorf("no end offset for changelog %s of task %s", tp, id)
			}
			if sum > math.MaxInt64-off {
				sum = math.MaxInt64
				break
			}
			sum += off
		}
		out[wireTask(id)] = sum
	}
	return out, nil
}

// logPlan logs what the leader decided, and every member it could not understand.
func (a *assignor) logPlan(res *assignment.Result) {
	lg := a.logger()
	for _, u := range res.Unreadable {
		lg.Error("group leader: a member's subscription cannot be read; it gets the error code ASSIGNMENT_ERROR and no tasks, "+
			"and the partitions it owns stay unassigned until it leaves the group",
			"member", u.ID, "error", u.Err)
	}
	if len(res.DuplicateOwned) > 0 {
		lg.Warn("group leader: partitions claimed by two members", "partitions", fmt.Sprint(res.DuplicateOwned))
	}
	if res.ErrorCode != assignment.ErrorNone {
		lg.Error("group leader: every member gets an error assignment", "code", res.ErrorCode, "reason", res.ErrorReason)
		return
	}
	if res.Fallback != nil {
		lg.Warn("group leader: task lags unknown (changelog end offsets could not be read); keeping the previous assignment and probing again",
			"error", res.Fallback)
	}
	if res.VersionProbing {
		lg.Info("group leader: a member uses a newer assignment protocol version; answering with the commonly supported one",
			"version", res.UsedVersion, "supported", res.SupportedVersion)
	}
	var b strings.Builder
	for _, c := range res.Clients {
		fmt.Fprintf(&b, " %s(threads %d)=active %v standby %v;", c.ProcessID, c.Capacity(), c.Active(), c.Standby())
	}
	lg.Info("group leader: assigned tasks", "clients", len(res.Clients), "assignment", strings.TrimSpace(b.String()),
		"probing_rebalance", res.ProbingRebalance, "version", res.UsedVersion)
}

// onAssignment reads this member's assignment (Java: StreamsPartitionAssignor.onAssignment):
// the error code, the version checks and version probing, the active tasks paired with the
// assigned partitions, the standbys, the hosts, and the follow-up it asks for. Errors (wrap
// ErrAssignment): the user data cannot be read, its version is above the subscription's, the
// partitions and tasks do not pair up, a task of a named topology.
func (a *assignor) onAssignment(as group.Assignment) (received, error) {
	r := received{nextRebalanceMs: assignment.NoRebalance}
	if len(as.UserData) == 0 {
		return r, fmt.Errorf("%w: the assignment has no user data", ErrAssignment)
	}
	info, err := assignment.DecodeAssignment(as.UserData)
	if err != nil {
		return r, fmt.Errorf("%w: %w", ErrAssignment, err)
	}
	r.errorCode = info.ErrorCode
	if info.ErrorCode != assignment.ErrorNone {
		a.setLast(r)
		return r, nil
	}
	a.mu.Lock()
	used := a.used
	if used == 0 {
		used = assignment.LatestSupportedVersion
	}
	a.mu.Unlock()
	if info.Version > used {
		return r, fmt.Errorf("%w: sent a version %d subscription but got an assignment of higher version %d", ErrAssignment, used, info.Version)
	}
	if info.CommonlySupportedVersion > assignment.LatestSupportedVersion {
		return r, fmt.Errorf("%w: the commonly supported version %d is above the latest this library supports, %d",
			ErrAssignment, info.CommonlySupportedVersion, assignment.LatestSupportedVersion)
	}
	tps := slices.Clone(as.Partitions)
	slices.SortFunc(tps, func(x, y kafka.TopicPartition) int {
		if c := strings.Compare(x.Topic, y.Topic); c != 0 {
			return c
		}
		return int(x.Partition) - int(y.Partition)
	})
	if len(tps) != len(info.ActiveTasks) {
		return r, fmt.Errorf("%w: %d assigned partitions but %d active task ids", ErrAssignment, len(tps), len(info.ActiveTasks))
	}
	r.active = map[processor.TaskID][]kafka.TopicPartition{}
	for i, tp := range tps {
		id, err := localTask(info.ActiveTasks[i])
		if err != nil {
			return r, fmt.Errorf("%w: %w", ErrAssignment, err)
		}
		r.active[id] = append(r.active[id], tp)
	}
	r.standby = map[processor.TaskID][]kafka.TopicPartition{}
	for wid, ps := range info.StandbyTasks {
		id, err := localTask(wid)
		if err != nil {
			return r, fmt.Errorf("%w: %w", ErrAssignment, err)
		}
		r.standby[id] = ps
	}
	r.hosts, r.standbyHosts = a.hostTasks(info.PartitionsByHost), a.hostTasks(info.StandbyPartitionsByHost)
	r.nextRebalanceMs = info.NextRebalanceMs

	// Version probing (Java: maybeUpdateSubscriptionVersion), then the host check.
	a.mu.Lock()
	a.used = used
	if info.Version >= assignment.EarliestProbeableVersion {
		switch {
		case info.CommonlySupportedVersion > a.used:
			r.why = fmt.Sprintf("version probing: the group supports version %d now (this member sent %d)", info.CommonlySupportedVersion, a.used)
			a.used = info.CommonlySupportedVersion
		case info.Version < a.used:
			r.why = fmt.Sprintf("version probing: the leader answered with version %d (this member sent %d); downgrading to %d",
				info.Version, a.used, info.CommonlySupportedVersion)
			a.used = info.CommonlySupportedVersion
		}
	}
	a.mu.Unlock()
	if r.why == "" && a.endpoint != "" && len(info.PartitionsByHost) > 0 {
		if h, ok := parseHostPort(a.endpoint); ok {
			if _, found := info.PartitionsByHost[h]; !found {
				r.why = "this instance's application.server " + a.endpoint + " is not in the assignment's host map"
			}
		}
	}
	if r.why != "" {
		r.nextRebalanceMs = 0
	}
	a.setLast(r)
	return r, nil
}

func (a *assignor) setLast(r received) {
	a.mu.Lock()
	a.last = r
	f := a.onAssign
	a.mu.Unlock()
	if f != nil {
		f(r)
	}
}

// hostTasks turns partitions by host into tasks by "host:port" (a partition of a topic no
// sub-topology reads is left out).
func (a *assignor) hostTasks(m map[assignment.HostInfo][]kafka.TopicPartition) map[string][]processor.TaskID {
	out := make(map[string][]processor.TaskID, len(m))
	subOf := map[string]int{}
	for _, s := range a.subs {
		for _, t := range s.Topics {
			subOf[t] = s.ID
		}
	}
	for h, tps := range m {
		key := h.String()
		if strings.Contains(h.Host, ":") {
			key = "[" + h.Host + "]:" + strconv.Itoa(int(h.Port))
		}
		seen := map[processor.TaskID]bool{}
		ids := []processor.TaskID{}
		for _, tp := range tps {
			sub, ok := subOf[tp.Topic]
			if !ok {
				continue
			}
			id := processor.TaskID{Subtopology: sub, Partition: int(tp.Partition)}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		sortTasks(ids)
		out[key] = ids
	}
	return out
}

func parseHostPort(endpoint string) (assignment.HostInfo, bool) {
	i := strings.LastIndexByte(endpoint, ':')
	if i <= 0 {
		return assignment.HostInfo{}, false
	}
	port, err := strconv.Atoi(endpoint[i+1:])
	if err != nil {
		return assignment.HostInfo{}, false
	}
	host := strings.TrimSuffix(strings.TrimPrefix(endpoint[:i], "["), "]")
	return assignment.HostInfo{Host: host, Port: int32(port)}, true
}

// scheduleFollowup arranges the follow-up rebalance an assignment asked for: at once (0), at a
// time (ms since the epoch), or none (assignment.NoRebalance cancels a scheduled one). The
// member is asked to rejoin (RequestRejoin), which the thread sees on its next loop iteration.
// Java: StreamThread's nextProbingRebalanceMs check and enforceRebalance.
func (a *assignor) scheduleFollowup(m *group.Member, atMs int64, why string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.followup != nil {
		a.followup.Stop()
		a.followup = nil
	}
	a.followAt = atMs
	switch {
	case atMs == assignment.NoRebalance:
		return
	case atMs == 0:
		if why == "" {
			why = "the leader asked for a follow-up rebalance at once (tasks change owners once revoked)"
		}
		m.RequestRejoin(why)
		return
	}
	d := time.Until(time.UnixMilli(atMs))
	if why == "" {
		why = "probing rebalance scheduled by the leader, for warm-up replicas that may have caught up"
	}
	a.logger().Info("follow-up rebalance scheduled", "at", time.UnixMilli(atMs).Format(time.RFC3339), "in", d.Round(time.Second).String())
	if d <= 0 {
		m.RequestRejoin(why)
		return
	}
	a.followup = time.AfterFunc(d, func() { m.RequestRejoin(why) })
}

// stopFollowup cancels a scheduled follow-up rebalance (a rejoin is under way anyway).
func (a *assignor) stopFollowup() {
	a.mu.Lock()
	if a.followup != nil {
		a.followup.Stop()
		a.followup = nil
	}
	a.mu.Unlock()
}
