package assignment

import (
	"crypto/rand"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// Member is one group member as the leader sees it in the JoinGroup response.
type Member struct {
	// ID is the member id.
	ID string
	// Owned are the partitions the member owns now (its ConsumerProtocolSubscription's owned
	// partitions).
	Owned []kafka.TopicPartition
	// UserData is its subscription's user data, a SubscriptionInfo.
	UserData []byte
	// Err is set when the member's consumer-protocol subscription itself could not be
	// decoded (then Owned and UserData are unknown).
	Err error
}

// Group is what the leader assigns.
type Group struct {
	// Members are the members, in the order of the JoinGroup response.
	Members []Member
	// Tasks are the input partitions of every task (Java's PartitionGrouper over the
	// topology's sub-topologies and the partition counts).
	Tasks map[TaskID][]kafka.TopicPartition
	// Stateful are the tasks with changelog topics.
	Stateful []TaskID
	// EndOffsetSums returns, per stateful task, the sum of its changelog partitions' end
	// offsets (a source-changelog partition counts with the group's committed offset). It is
	// called once per Assign that needs task lags. An error makes Assign keep the previous
	// assignment and ask for a probing rebalance (Java: FallbackPriorTaskAssignor).
	EndOffsetSums func() (map[TaskID]int64, error)
	// MissingSourceTopics, when not empty, gives every member the error code
	// INCOMPLETE_SOURCE_TOPIC_METADATA and no tasks.
	MissingSourceTopics []string
	// Leader is the process id of the leader's instance: it triggers the probing rebalance.
	Leader UUID
	// NowMs is the time of the assignment, ms since the epoch (the probing rebalance is due
	// Config.ProbingRebalanceInterval later).
	NowMs int64
	// Config holds the assignment settings.
	Config Config
}

// MemberAssignment is the assignment of one member.
type MemberAssignment struct {
	// Partitions are the member's input partitions, sorted by topic and partition (they and
	// Info.ActiveTasks pair up one to one).
	Partitions []kafka.TopicPartition
	// Info is the assignment user data.
	Info Assignment
	// Withheld are tasks assigned to the member whose partitions another member still owns:
	// cooperative rebalancing gives them to it in the follow-up rebalance, after they are
	// revoked there (Info.NextRebalanceMs is 0).
	Withheld []TaskID
}

// Unreadable is a member whose subscription could not be read.
type Unreadable struct {
	ID  string
	Err error
}

// Result is the outcome of Assign.
type Result struct {
	// Assignments holds an assignment for every member of the group.
	Assignments map[string]MemberAssignment
	// Unreadable are the members whose subscription could not be read: they get no tasks and
	// the error code ASSIGNMENT_ERROR (a Java member's thread fails on it), and the partitions
	// they own go to no one else in this rebalance.
	Unreadable []Unreadable
	// Clients are the instances with their assigned tasks, by process id.
	Clients []*Client
	// ErrorCode is non-zero when every member got an error assignment (SHUTDOWN_REQUESTED,
	// INCOMPLETE_SOURCE_TOPIC_METADATA, ASSIGNMENT_ERROR); ErrorReason says why.
	ErrorCode   int32
	ErrorReason string
	// UsedVersion and SupportedVersion are the assignment's version and commonly supported
	// version: the lowest version any member used and the lowest latest version any supports.
	UsedVersion, SupportedVersion int32
	// VersionProbing says a member sent a version above LatestSupportedVersion.
	VersionProbing bool
	// ProbingRebalance says a task could not move to its balanced instance yet (it warms up
	// there): the leader's instance was asked to rebalance again at NowMs +
	// ProbingRebalanceInterval.
	ProbingRebalance bool
	// Fallback is the error of EndOffsetSums when the previous assignment was kept.
	Fallback error
	// DuplicateOwned are partitions two members claimed to own.
	DuplicateOwned []kafka.TopicPartition
}

// futureID is the process id under which members of a version above LatestSupportedVersion
// are grouped (Java: StreamsPartitionAssignor.FUTURE_ID, random per process).
var futureID = func() UUID {
	var u UUID
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}()

// Assign computes the group's assignment on the leader as Java Kafka Streams 4.4's
// StreamsPartitionAssignor.assign does: the members are grouped into instances by process
// id; a shutdown request (SHUTDOWN_REQUESTED in any subscription) or missing source topics
// give every member an error assignment; otherwise the tasks are assigned to the instances
// by AssignTasks (with the lags from the members' task offset sums and the changelog end
// offsets), then to each instance's threads (AssignToThreads); a task whose partitions another
// member still owns is withheld until that member revokes it (cooperative rebalancing, with
// an immediate follow-up rebalance; a stateful task the member kept as standby stays a standby
// meanwhile); partitions by host are added for interactive queries, and the leader's
// instance is told when to probe for caught-up warm-ups. The assignments are encoded at the
// lowest version any member used (version probing). Errors: encoding failures.
func Assign(g Group) (*Result, error) {
	res := &Result{Assignments: map[string]MemberAssignment{}}
	clients := map[UUID]*Client{}
	var order []UUID // first appearance, for a stable result
	allOwned := map[kafka.TopicPartition]bool{}
	minUsed, minSupported := LatestSupportedVersion, LatestSupportedVersion
	future := UnknownVersion
	shutdown := false
	for _, m := range g.Members {
		if m.Err != nil {
			res.Unreadable = append(res.Unreadable, Unreadable{m.ID, m.Err})
			continue
		}
		// The partitions an unreadable member owns stay where they are (see below).
		for _, tp := range m.Owned {
			if allOwned[tp] {
				res.DuplicateOwned = append(res.DuplicateOwned, tp)
			}
			allOwned[tp] = true
		}
		if m.UserData == nil {
			res.Unreadable = append(res.Unreadable, Unreadable{m.ID, fmt.Errorf("%w: the subscription has no user data", ErrMalformed)})
			continue
		}
		s, err := DecodeSubscription(m.UserData)
		if err != nil {
			res.Unreadable = append(res.Unreadable, Unreadable{m.ID, err})
			continue
		}
		if s.ErrorCode == ErrorShutdownRequested {
			shutdown = true
		}
		minUsed = min(minUsed, s.Version)
		minSupported = min(minSupported, s.LatestSupportedVersion)
		pid := s.ProcessID
		if s.Future() {
			future, pid = s.Version, futureID
			if clients[pid] == nil {
				clients[pid] = NewClient(pid, "", nil)
				order = append(order, pid)
			}
		}
		c := clients[pid]
		if c == nil {
			c = NewClient(pid, s.UserEndpoint, s.ClientTags)
			clients[pid] = c
			order = append(order, pid)
		}
		c.AddConsumer(m.ID, m.Owned, s.TaskOffsetSums)
	}
	for _, pid := range order {
		res.Clients = append(res.Clients, clients[pid])
	}
	slices.SortFunc(res.Clients, func(a, b *Client) int { return a.ProcessID.Compare(b.ProcessID) })
	res.UsedVersion, res.SupportedVersion = minUsed, minSupported

	fail := func(code int32, reason string) (*Result, error) {
		res.ErrorCode, res.ErrorReason = code, reason
		info := Assignment{Version: LatestSupportedVersion, CommonlySupportedVersion: LatestSupportedVersion,
			ErrorCode: code, NextRebalanceMs: NoRebalance}
		for _, m := range g.Members {
			res.Assignments[m.ID] = MemberAssignment{Partitions: []kafka.TopicPartition{}, Info: info}
		}
		return res, nil
	}
	if shutdown {
		return fail(ErrorShutdownRequested, "an instance requested the shutdown of the application")
	}
	if len(g.MissingSourceTopics) > 0 {
		return fail(ErrorIncompleteSourceTopicMetadata, "missing source topics "+strings.Join(g.MissingSourceTopics, ", "))
	}
	if future != UnknownVersion {
		if minUsed < EarliestProbeableVersion {
			return fail(ErrorAssignmentError, fmt.Sprintf("a future subscription (version %d) and one of version %d, which cannot probe, at the same time", future, minUsed))
		}
		res.VersionProbing = true
	}

	// Tasks to instances.
	taskOf := map[kafka.TopicPartition]TaskID{}
	allTasks := slices.SortedFunc(maps.Keys(g.Tasks), TaskID.Compare)
	for _, id := range allTasks {
		for _, tp := range g.Tasks[id] {
			taskOf[tp] = id
		}
	}
	stateful := taskSet{}
	for _, id := range g.Stateful {
		if _, ok := g.Tasks[id]; ok {
			stateful[id] = true
		}
	}
	statefulSorted := stateful.sorted()
	var ends map[TaskID]int64
	if len(statefulSorted) > 0 {
		var err error
		if g.EndOffsetSums == nil {
			err = fmt.Errorf("no end offsets")
		} else {
			ends, err = g.EndOffsetSums()
		}
		if err == nil {
			for _, id := range statefulSorted {
				if _, ok := ends[id]; !ok {
					err = fmt.Errorf("no end offset sum for task %s", id)
					break
				}
			}
		}
		if err != nil {
			res.Fallback = err
			ends = map[TaskID]int64{}
			for _, id := range statefulSorted {
				ends[id] = OffsetSumUnknown
			}
		}
	}
	endSums := map[TaskID]int64{}
	for _, id := range statefulSorted {
		endSums[id] = ends[id]
	}
	for _, c := range res.Clients {
		c.InitPrevTasks(taskOf)
		c.ComputeLags(endSums)
	}
	if len(res.Clients) > 0 {
		var probing bool
		if res.Fallback != nil {
			probing = assignFallback(res.Clients, allTasks, statefulSorted, g.Config)
		} else {
			probing = AssignTasks(res.Clients, allTasks, statefulSorted, g.Config)
		}
		if probing {
			res.ProbingRebalance = true
			if c := clients[g.Leader]; c != nil {
				c.SetFollowupDeadline(g.NowMs + g.Config.ProbingRebalanceInterval.Milliseconds())
			}
		}
	}

	// Partitions by host, for interactive queries.
	hosts, standbyHosts := map[HostInfo][]kafka.TopicPartition{}, map[HostInfo][]kafka.TopicPartition{}
	if minUsed >= 2 {
		for _, c := range res.Clients {
			h, ok := parseHost(c.Endpoint)
			if !ok {
				continue
			}
			tps, stps := []kafka.TopicPartition{}, []kafka.TopicPartition{}
			for _, id := range c.Active() {
				tps = append(tps, g.Tasks[id]...)
			}
			for _, id := range c.Standby() {
				stps = append(stps, g.Tasks[id]...)
			}
			hosts[h], standbyHosts[h] = sortedTPs(tps), sortedTPs(stps)
		}
	}

	// Tasks to threads, and the members' assignments.
	for _, c := range res.Clients {
		active, standby := c.AssignToThreads()
		probing := c.FollowupDeadline() != 0
		for _, m := range c.consumers {
			type assigned struct {
				id TaskID
				tp kafka.TopicPartition
			}
			var parts []assigned
			withheld := taskSet{}
			for _, id := range active[m] {
				var mine []assigned
				for _, tp := range sortedTPs(g.Tasks[id]) {
					if prev := c.PreviousOwner(tp); prev != m && allOwned[tp] {
						// Another member owns it: it revokes it first (cooperative).
						withheld[id] = true
						mine = nil
						break
					}
					mine = append(mine, assigned{id, tp})
				}
				parts = append(parts, mine...)
			}
			slices.SortStableFunc(parts, func(a, b assigned) int { return compareTP(a.tp, b.tp) })
			info := Assignment{Version: minUsed, CommonlySupportedVersion: minSupported,
				StandbyTasks: map[TaskID][]kafka.TopicPartition{}, PartitionsByHost: hosts,
				StandbyPartitionsByHost: standbyHosts, NextRebalanceMs: NoRebalance}
			ma := MemberAssignment{Partitions: []kafka.TopicPartition{}}
			for _, p := range parts {
				info.ActiveTasks = append(info.ActiveTasks, p.id)
				ma.Partitions = append(ma.Partitions, p.tp)
			}
			for _, id := range standby[m] {
				info.StandbyTasks[id] = sortedTPs(g.Tasks[id])
			}
			for _, id := range withheld.sorted() {
				// A stateful task the member kept as standby stays one until it can be active.
				if c.PreviouslyOwnedStandby(id) && stateful[id] {
					info.StandbyTasks[id] = sortedTPs(g.Tasks[id])
				}
				ma.Withheld = append(ma.Withheld, id)
			}
			switch {
			case len(withheld) > 0:
				info.NextRebalanceMs = 0
				probing = false
			case probing:
				info.NextRebalanceMs = c.FollowupDeadline()
				probing = false
			}
			ma.Info = info
			res.Assignments[m] = ma
		}
	}
	for _, u := range res.Unreadable {
		res.Assignments[u.ID] = MemberAssignment{Partitions: []kafka.TopicPartition{},
			Info: Assignment{Version: minUsed, CommonlySupportedVersion: minSupported, ErrorCode: ErrorAssignmentError,
				NextRebalanceMs: NoRebalance}}
	}
	return res, nil
}

// parseHost parses an application.server "host:port" (Java: HostInfo.buildFromEndpoint).
func parseHost(endpoint string) (HostInfo, bool) {
	if endpoint == "" {
		return HostInfo{}, false
	}
	i := strings.LastIndexByte(endpoint, ':')
	if i <= 0 {
		return HostInfo{}, false
	}
	host := strings.TrimSuffix(strings.TrimPrefix(endpoint[:i], "["), "]")
	port, err := strconv.Atoi(endpoint[i+1:])
	if err != nil || port < 0 || port > 65535 {
		return HostInfo{}, false
	}
	return HostInfo{Host: host, Port: int32(port)}, true
}

// assignFallback keeps the previous assignment when task lags are unknown (Java:
// FallbackPriorTaskAssignor, which runs its sticky assignor keeping every previous active
// task where it was): each previous active task stays with its instance (the first by process
// id when two claim it), the other tasks go to the least loaded instance per thread, preferring
// one that kept a standby of it, and standbys are placed as AssignTasks places them. It always
// asks for a probing rebalance, to retry with lags.
func assignFallback(clients []*Client, allTasks, statefulTasks []TaskID, cfg Config) bool {
	cs := slices.Clone(clients)
	slices.SortFunc(cs, func(a, b *Client) int { return a.ProcessID.Compare(b.ProcessID) })
	taken := taskSet{}
	for _, c := range cs {
		for _, id := range c.PrevActive() {
			if !taken[id] && slices.ContainsFunc(allTasks, func(t TaskID) bool { return t == id }) {
				taken[id] = true
				c.assignActive(id)
			}
		}
	}
	for _, id := range allTasks {
		if taken[id] {
			continue
		}
		var best *Client
		for _, c := range cs {
			if best == nil || c.activeTaskLoad() < best.activeTaskLoad() ||
				(c.activeTaskLoad() == best.activeTaskLoad() && c.prevStandby[id] && !best.prevStandby[id]) {
				best = c
			}
		}
		best.assignActive(id)
	}
	if cfg.NumStandbyReplicas > 0 {
		set := newConstrainedSet(func(c *Client, id TaskID) bool { return !c.hasAssigned(id) }, (*Client).assignedTaskLoad)
		set.offerAll(cs)
		for _, id := range statefulTasks {
			for remaining := cfg.NumStandbyReplicas; remaining > 0; remaining-- {
				c := set.poll(id, nil)
				if c == nil {
					break
				}
				c.assignStandby(id)
				set.offer(c)
			}
		}
	}
	return true
}
