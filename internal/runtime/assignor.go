package runtime

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/processor"
)

// AssignorName is the name of the partition assignment strategy the stream threads announce
// in JoinGroup (Java's StreamsPartitionAssignor also calls itself "stream").
const AssignorName = "stream"

// subscription is the user data a member sends with JoinGroup: who it is, where interactive
// queries reach it, and which tasks it owns now (for stickiness). Java: SubscriptionInfo (its
// binary layout is not reproduced: a group mixes only kstreams-go instances).
type subscription struct {
	Version   int      `json:"v"`
	ProcessID string   `json:"pid"`
	Thread    int      `json:"thread"`
	Host      string   `json:"host,omitempty"`
	Owned     []string `json:"owned,omitempty"`
	// Standby are the standby tasks the member keeps now.
	Standby []string `json:"standby,omitempty"`
	// ErrorCode is the instance's assignor error code, a Java AssignorError code (absent: 0,
	// NONE). 4 (SHUTDOWN_REQUESTED) asks the leader to shut the whole application down: an
	// uncaught-error handler of the instance answered ShutdownApplication, or the instance
	// already received that code in an assignment. Java: SubscriptionInfo.errorCode.
	ErrorCode int32 `json:"err,omitempty"`
}

// assignmentInfo is the user data of a member's assignment: its active tasks and, for
// interactive queries, which application.server hosts which tasks. Java: AssignmentInfo.
type assignmentInfo struct {
	Version int                 `json:"v"`
	Active  []string            `json:"active"`
	Standby []string            `json:"standby,omitempty"`
	Hosts   map[string][]string `json:"hosts,omitempty"`
	// ErrorCode is the leader's assignor error code for the member, a Java AssignorError code
	// (absent: 0, NONE). 4 (SHUTDOWN_REQUESTED): a member asked for the application's
	// shutdown; the assignment is empty and the member shuts its instance down.
	// Java: AssignmentInfo.errCode.
	ErrorCode int32 `json:"err,omitempty"`
}

// subtopologySources are the source topics of one sub-topology (names as at run time).
type subtopologySources struct {
	ID     int
	Topics []string
}

// assignor is the partition assignor of a stream thread (a group.Assignor): it groups partitions into tasks
// (sub-topology x partition; the partitions with the same number of the topics one
// sub-topology reads form one task, which keeps co-partitioned topics together) and spreads
// the tasks evenly over the members, keeping each member's current tasks where the balance
// allows (sticky). One assignor per thread; the group leader's computes the plan.
type assignor struct {
	subs []subtopologySources
	self subscription
	// standbys is num.standby.replicas (used when this member leads).
	standbys int
	// errCode is the instance's assignor error code announced in the subscription, shared by
	// the instance's threads (Runtime.shutdown.code); nil: 0.
	errCode *atomic.Int32
	// log receives the errors of members whose subscriptions cannot be read; nil: discarded.
	log *slog.Logger

	mu        sync.Mutex
	owned     []processor.TaskID
	ownedSb   []processor.TaskID
	last      assignmentInfo
	plan      map[string]assignmentInfo
	onAssign  func(assignmentInfo)
	planError error
}

var _ group.Assignor = (*assignor)(nil)

// Name implements group.Assignor.
func (a *assignor) Name() string { return AssignorName }

// Subscription implements group.Assignor: the user data (this member's identity and the tasks
// it owns) and the input partitions of the active tasks it owns.
func (a *assignor) Subscription(topics []string) ([]byte, []kafka.TopicPartition, error) {
	ud, err := a.SubscriptionUserData(topics)
	if err != nil {
		return nil, nil, err
	}
	a.mu.Lock()
	owned := slices.Clone(a.owned)
	a.mu.Unlock()
	var tps []kafka.TopicPartition
	for _, id := range owned {
		for _, s := range a.subs {
			if s.ID != id.Subtopology {
				continue
			}
			for _, t := range s.Topics {
				tps = append(tps, kafka.TopicPartition{Topic: t, Partition: int32(id.Partition)})
			}
		}
	}
	return ud, tps, nil
}

// Assign implements group.Assignor on the group leader: the plan of Plan, with each member's
// assignment user data. A member whose subscription cannot be read gets no tasks, and says so
// in the log: it may be an instance of another version or of Java Kafka Streams, which this
// assignor cannot work with yet.
func (a *assignor) Assign(members []group.Subscription, partitions map[string]int32) (map[string]group.Assignment, error) {
	mm := make(map[string]sarama.ConsumerGroupMemberMetadata, len(members))
	for _, m := range members {
		if m.Err != nil {
			a.logError("a group member's subscription cannot be decoded; it gets no tasks", "member", m.MemberID, "error", m.Err)
			continue
		}
		mm[m.MemberID] = sarama.ConsumerGroupMemberMetadata{Version: m.Version, Topics: m.Topics, UserData: m.UserData}
	}
	topics := make(map[string][]int32, len(partitions))
	for t, n := range partitions {
		ps := make([]int32, n)
		for i := range ps {
			ps[i] = int32(i)
		}
		topics[t] = ps
	}
	plan, err := a.Plan(mm, topics)
	if err != nil {
		return nil, err
	}
	out := make(map[string]group.Assignment, len(plan))
	for id, byTopic := range plan {
		ud, err := a.AssignmentData(id, nil, 0)
		if err != nil {
			return nil, err
		}
		var tps []kafka.TopicPartition
		for t, ps := range byTopic {
			for _, p := range ps {
				tps = append(tps, kafka.TopicPartition{Topic: t, Partition: p})
			}
		}
		out[id] = group.Assignment{Partitions: tps, UserData: ud}
	}
	return out, nil
}

func (a *assignor) logError(msg string, args ...any) {
	if a.log != nil {
		a.log.Error(msg, args...)
	}
}

// onAssignment records this member's assignment: its user data (active and standby tasks,
// hosts, error code) for the thread and interactive queries.
func (a *assignor) onAssignment(as group.Assignment) {
	a.OnAssignment(&sarama.ConsumerGroupMemberAssignment{UserData: as.UserData}, 0)
}

// setOwned records the tasks this member owns, announced in its next subscription.
func (a *assignor) setOwned(ids []processor.TaskID) {
	a.mu.Lock()
	a.owned = slices.Clone(ids)
	a.mu.Unlock()
}

// setOwnedStandby records the standby tasks this member keeps.
func (a *assignor) setOwnedStandby(ids []processor.TaskID) {
	a.mu.Lock()
	a.ownedSb = slices.Clone(ids)
	a.mu.Unlock()
}

// lastAssignment returns the assignment info this member received last.
func (a *assignor) lastAssignment() assignmentInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

// SubscriptionUserData returns the user data of this member's subscription.
func (a *assignor) SubscriptionUserData([]string) ([]byte, error) {
	a.mu.Lock()
	s := a.self
	s.Version = 1
	if a.errCode != nil {
		s.ErrorCode = a.errCode.Load()
	}
	for _, id := range a.owned {
		s.Owned = append(s.Owned, id.String())
	}
	for _, id := range a.ownedSb {
		s.Standby = append(s.Standby, id.String())
	}
	a.mu.Unlock()
	return json.Marshal(s)
}

// OnAssignment decodes this member's assignment user data.
func (a *assignor) OnAssignment(assignment *sarama.ConsumerGroupMemberAssignment, _ int32) {
	var info assignmentInfo
	if assignment != nil && len(assignment.UserData) > 0 {
		if err := json.Unmarshal(assignment.UserData, &info); err != nil {
			a.logError("the leader's assignment cannot be decoded; this member takes no tasks", "error", err)
			info = assignmentInfo{}
		}
	}
	a.mu.Lock()
	a.last = info
	a.mu.Unlock()
	if a.onAssign != nil {
		a.onAssign(info)
	}
}

// tasksFor returns the tasks of the given topic metadata and, per task, its partitions.
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
	if _, err := fmt.Sscanf(a+" "+b, "%d %d", &id.Subtopology, &id.Partition); err != nil {
		return id, false
	}
	return id, true
}

// Plan computes the assignment on the group leader: per member, its partitions by topic.
func (a *assignor) Plan(members map[string]sarama.ConsumerGroupMemberMetadata, topics map[string][]int32) (sarama.BalanceStrategyPlan, error) {
	type member struct {
		id      string
		sub     subscription
		tasks   []processor.TaskID
		standby []processor.TaskID
		hadSb   map[processor.TaskID]bool
	}
	ms := make([]*member, 0, len(members))
	for id, md := range members {
		m := &member{id: id, hadSb: map[processor.TaskID]bool{}}
		if len(md.UserData) > 0 {
			if err := json.Unmarshal(md.UserData, &m.sub); err != nil {
				// Not one of ours (another version, or a Java Kafka Streams instance): tasks
				// given to it could stall until its session expires.
				a.logError("a group member's subscription user data cannot be decoded; it gets no tasks",
					"member", id, "error", err)
				continue
			}
		}
		for _, s := range m.sub.Standby {
			if tid, ok := parseTaskID(s); ok {
				m.hadSb[tid] = true
			}
		}
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].sub.ProcessID != ms[j].sub.ProcessID {
			return ms[i].sub.ProcessID < ms[j].sub.ProcessID
		}
		if ms[i].sub.Thread != ms[j].sub.Thread {
			return ms[i].sub.Thread < ms[j].sub.Thread
		}
		return ms[i].id < ms[j].id
	})
	for _, m := range ms {
		if m.sub.ErrorCode == assignorErrorShutdownRequested {
			return a.errorPlan(members, assignorErrorShutdownRequested), nil
		}
	}
	ids, parts := tasksFor(a.subs, topics)
	assignTasks := func() {
		if len(ms) == 0 {
			return
		}
		base, extra := len(ids)/len(ms), len(ids)%len(ms)
		taken := map[processor.TaskID]bool{}
		exists := map[processor.TaskID]bool{}
		for _, id := range ids {
			exists[id] = true
		}
		// Sticky: each member keeps up to base of its owned tasks, then up to `extra` members
		// keep one more.
		// Owned tasks are kept partition by partition across sub-topologies, so that a member
		// giving tasks away keeps a share of every sub-topology (and of its stores).
		owned := make([][]processor.TaskID, len(ms))
		for i, m := range ms {
			for _, s := range m.sub.Owned {
				if id, ok := parseTaskID(s); ok && exists[id] {
					owned[i] = append(owned[i], id)
				}
			}
			sort.Slice(owned[i], func(a, b int) bool {
				x, y := owned[i][a], owned[i][b]
				if x.Partition != y.Partition {
					return x.Partition < y.Partition
				}
				return x.Subtopology < y.Subtopology
			})
		}
		for i, m := range ms {
			for _, id := range owned[i] {
				if len(m.tasks) < base && !taken[id] {
					taken[id] = true
					m.tasks = append(m.tasks, id)
				}
			}
		}
		for i, m := range ms {
			if extra == 0 {
				break
			}
			for _, id := range owned[i] {
				if !taken[id] && len(m.tasks) == base {
					taken[id] = true
					m.tasks = append(m.tasks, id)
					extra--
					break
				}
			}
		}
		// The rest go to the least loaded member, preferring one that does not yet run a task
		// of the same sub-topology.
		for _, id := range ids {
			if taken[id] {
				continue
			}
			var best *member
			bestScore := 0
			for _, m := range ms {
				// Load first; then prefer a member keeping a standby of the task (a fast
				// fail-over), then one without a task of the same sub-topology.
				score := len(m.tasks) * 4
				for _, t := range m.tasks {
					if t.Subtopology == id.Subtopology {
						score++
						break
					}
				}
				if m.hadSb[id] {
					score -= 2
				}
				if best == nil || score < bestScore {
					best, bestScore = m, score
				}
			}
			taken[id] = true
			best.tasks = append(best.tasks, id)
		}
	}
	assignTasks()
	// Standby tasks: num.standby.replicas copies of each task on members of other processes
	// than the active one (and than each other), least loaded first, keeping previous
	// standbys where possible. Java: the standby part of the HighAvailabilityTaskAssignor.
	if a.standbys > 0 {
		activeOf := map[processor.TaskID]*member{}
		for _, m := range ms {
			for _, t := range m.tasks {
				activeOf[t] = m
			}
		}
		for _, id := range ids {
			used := map[string]bool{}
			if am := activeOf[id]; am != nil {
				used[am.sub.ProcessID] = true
			}
			for r := 0; r < a.standbys; r++ {
				var best *member
				bestScore := 0
				for _, m := range ms {
					if used[m.sub.ProcessID] {
						continue
					}
					score := (len(m.tasks) + len(m.standby)) * 4
					if m.hadSb[id] {
						score -= 3
					}
					if best == nil || score < bestScore {
						best, bestScore = m, score
					}
				}
				if best == nil {
					break
				}
				used[best.sub.ProcessID] = true
				best.standby = append(best.standby, id)
			}
		}
	}
	hosts := map[string][]string{}
	for _, m := range ms {
		sortTasks(m.tasks)
		if m.sub.Host != "" {
			for _, t := range m.tasks {
				hosts[m.sub.Host] = append(hosts[m.sub.Host], t.String())
			}
		}
	}
	plan := sarama.BalanceStrategyPlan{}
	infos := map[string]assignmentInfo{}
	for _, m := range ms {
		info := assignmentInfo{Version: 1, Active: []string{}, Hosts: hosts}
		sortTasks(m.standby)
		for _, t := range m.standby {
			info.Standby = append(info.Standby, t.String())
		}
		for _, t := range m.tasks {
			info.Active = append(info.Active, t.String())
			for topic, ps := range parts[t] {
				for _, p := range ps {
					plan.Add(m.id, topic, p)
				}
			}
		}
		if _, ok := plan[m.id]; !ok {
			plan[m.id] = map[string][]int32{}
		}
		infos[m.id] = info
	}
	a.mu.Lock()
	a.plan = infos
	a.mu.Unlock()
	return plan, nil
}

// AssignmentData returns the user data of the leader's plan for memberID.
func (a *assignor) AssignmentData(memberID string, _ map[string][]int32, _ int32) ([]byte, error) {
	a.mu.Lock()
	info, ok := a.plan[memberID]
	a.mu.Unlock()
	if !ok {
		info = assignmentInfo{Version: 1, Active: []string{}}
	}
	return json.Marshal(info)
}

// errorPlan is the plan of a rebalance the leader answers with an error code: every member gets
// no partitions and, in its assignment user data, code. Java: StreamsPartitionAssignor's
// errorAssignment.
func (a *assignor) errorPlan(members map[string]sarama.ConsumerGroupMemberMetadata, code int32) sarama.BalanceStrategyPlan {
	plan := sarama.BalanceStrategyPlan{}
	infos := map[string]assignmentInfo{}
	for id := range members {
		plan[id] = map[string][]int32{}
		infos[id] = assignmentInfo{Version: 1, Active: []string{}, ErrorCode: code}
	}
	a.mu.Lock()
	a.plan = infos
	a.mu.Unlock()
	return plan
}
