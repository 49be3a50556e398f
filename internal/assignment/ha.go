package assignment

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Defaults of the assignment settings, Java's (StreamsConfig).
const (
	// DefaultAcceptableRecoveryLag is acceptable.recovery.lag's default: 10 000 offsets.
	DefaultAcceptableRecoveryLag int64 = 10_000
	// DefaultMaxWarmupReplicas is max.warmup.replicas's default: 2.
	DefaultMaxWarmupReplicas = 2
	// DefaultProbingRebalanceInterval is probing.rebalance.interval.ms's default: 10 minutes.
	DefaultProbingRebalanceInterval = 10 * time.Minute
)

// Config holds the settings of the task assignment (Java: AssignmentConfigs).
type Config struct {
	// AcceptableRecoveryLag is acceptable.recovery.lag: the largest lag (summed over a task's
	// changelog partitions, in offsets) at which an instance counts as caught up on a task and
	// may take it over as active at once. math.MaxInt64 counts every instance caught up.
	AcceptableRecoveryLag int64
	// MaxWarmupReplicas is max.warmup.replicas: how many warm-up replicas (extra standbys
	// placed where a task should move once caught up) one assignment may add, at least 1.
	MaxWarmupReplicas int
	// NumStandbyReplicas is num.standby.replicas.
	NumStandbyReplicas int
	// ProbingRebalanceInterval is probing.rebalance.interval.ms: while warm-ups catch up, the
	// leader's instance triggers a rebalance this long after the assignment (at least 1 min).
	ProbingRebalanceInterval time.Duration
}

// AssignTasks assigns allTasks to the clients as Java's HighAvailabilityTaskAssignor does
// (without rack awareness: rack.aware.assignment.strategy "none", no rack.aware.assignment.tags):
//
//  1. the stateful tasks round-robin over the clients in process id order, then balanced over
//     the clients' capacities (stream threads);
//  2. NumStandbyReplicas standbys of each stateful task on the least loaded clients that do
//     not hold the task, balanced likewise;
//  3. an active task whose balanced client is not caught up (lag above
//     AcceptableRecoveryLag) while another client is more caught up moves to a caught-up
//     client (one holding a caught-up standby swaps with it), and the balanced client gets
//     the task as a warm-up standby while MaxWarmupReplicas allows; standbys likewise;
//  4. the stateless tasks to the clients with the fewest active tasks per thread.
//
// statefulTasks are the tasks with changelogs; every client must have had ComputeLags called
// with all of them. It reports whether a task could not go to its balanced client (a probing
// rebalance is due, to move it once caught up). It panics on inconsistent input (a client
// without members, a stateful task without a lag), as Java throws IllegalStateException.
func AssignTasks(clients []*Client, allTasks, statefulTasks []TaskID, cfg Config) bool {
	if len(clients) == 0 {
		return false
	}
	cs := slices.Clone(clients)
	slices.SortFunc(cs, func(a, b *Client) int { return a.ProcessID.Compare(b.ProcessID) })
	stateful := taskSet{}
	for _, id := range statefulTasks {
		stateful[id] = true
	}
	statefulSorted := stateful.sorted()

	// 1. Active stateful tasks.
	for i, id := range statefulSorted {
		cs[i%len(cs)].assignActive(id)
	}
	balanceOverThreads(cs, func(c *Client) taskSet { return c.active }, (*Client).unassignActive, (*Client).assignActive)

	// 2. Standby replicas (Java: DefaultStandbyTaskAssignor).
	if cfg.NumStandbyReplicas > 0 {
		set := newConstrainedSet(func(c *Client, id TaskID) bool { return !c.hasAssigned(id) }, (*Client).assignedTaskLoad)
		set.offerAll(cs)
		for _, id := range statefulSorted {
			for remaining := cfg.NumStandbyReplicas; remaining > 0; remaining-- {
				c := set.poll(id, nil)
				if c == nil {
					break // not enough clients for the replicas Java logs it and goes on
				}
				c.assignStandby(id)
				set.offer(c)
			}
		}
		balanceOverThreads(cs, func(c *Client) taskSet { return c.standby }, (*Client).unassignStandby, (*Client).assignStandby)
	}

	// 3. Movements towards caught-up clients, with warm-ups.
	caughtUp := map[TaskID]map[*Client]bool{}
	byLag := map[TaskID][]*Client{}
	for _, id := range statefulSorted {
		set := map[*Client]bool{}
		for _, c := range cs {
			lag := c.mustLag(id)
			if lag == OffsetSumRunning || cfg.AcceptableRecoveryLag == math.MaxInt64 ||
				(lag >= 0 && lag <= cfg.AcceptableRecoveryLag) {
				set[c] = true
			}
		}
		caughtUp[id] = set
		order := slices.Clone(cs)
		slices.SortStableFunc(order, func(a, b *Client) int {
			if x := cmp.Compare(a.mustLag(id), b.mustLag(id)); x != 0 {
				return x
			}
			return a.ProcessID.Compare(b.ProcessID)
		})
		byLag[id] = order
	}
	m := &movements{cs: cs, caughtUp: caughtUp, byLag: byLag, warmups: map[*Client]taskSet{},
		remainingWarmups: cfg.MaxWarmupReplicas}
	needed := m.activeMovements() + m.standbyMovements()

	// 4. Stateless tasks.
	set := newConstrainedSet(func(*Client, TaskID) bool { return true }, (*Client).activeTaskLoad)
	set.offerAll(cs)
	var stateless []TaskID
	for _, id := range allTasks {
		if !stateful[id] {
			stateless = append(stateless, id)
		}
	}
	slices.SortFunc(stateless, TaskID.Compare)
	stateless = slices.Compact(stateless)
	for _, id := range stateless {
		c := set.poll(id, nil)
		c.assignActive(id)
		set.offer(c)
	}
	return needed > 0
}

func (c *Client) mustLag(id TaskID) int64 {
	l, ok := c.lags[id]
	if !ok {
		panic("assignment: no lag for stateful task " + id.String() + " on client " + c.ProcessID.String())
	}
	return l
}

// balanceOverThreads moves tasks from the more to the less loaded clients (per thread) while
// that lowers the skew, as Java's HighAvailabilityTaskAssignor.balanceTasksOverThreads.
func balanceOverThreads(cs []*Client, tasks func(*Client) taskSet, unassign, assign func(*Client, TaskID)) {
	for keep := true; keep; {
		keep = false
		for _, src := range cs {
			for _, dst := range cs {
				if src == dst {
					continue
				}
				ids := tasks(src).sorted()
				for i := 0; i < len(ids) && shouldMoveTask(src, dst); i++ {
					if !dst.hasAssigned(ids[i]) {
						unassign(src, ids[i])
						assign(dst, ids[i])
						keep = true
					}
				}
			}
		}
	}
}

// shouldMoveTask is Java's HighAvailabilityTaskAssignor.shouldMoveATask.
func shouldMoveTask(src, dst *Client) bool {
	skew := src.assignedTaskLoad() - dst.assignedTaskLoad()
	if skew <= 0 {
		return false
	}
	atDst := (float64(dst.assignedCount()) + 1.0) / dst.capacity()
	atSrc := (float64(src.assignedCount()) - 1.0) / src.capacity()
	proposed := atSrc - atDst
	if proposed < 0 {
		return false
	}
	return proposed < skew
}

// movements is Java's TaskMovement: moving active tasks and standbys to caught-up clients.
type movements struct {
	cs               []*Client
	caughtUp         map[TaskID]map[*Client]bool
	byLag            map[TaskID][]*Client
	warmups          map[*Client]taskSet
	remainingWarmups int
}

type movement struct {
	task     TaskID
	dst      *Client
	caughtUp int
}

func (m *movements) isCaughtUp(c *Client, id TaskID) bool { return m.caughtUp[id][c] }

// notCaughtUpAndOthersAre reports whether c is not caught up on id while some client is more
// caught up.
func (m *movements) notCaughtUpAndOthersAre(id TaskID, c *Client) bool {
	if m.isCaughtUp(c, id) {
		return false
	}
	return m.byLag[id][0].mustLag(id) < c.mustLag(id)
}

// movementOrder returns the movements in the order Java's PriorityQueue of them (by number of
// caught-up clients, then task) polls them: two standbys of one task tie, and then the
// heap's layout decides.
func movementOrder(ms []*movement) []*movement {
	q := newJavaPQ(nil, func(a, b *movement) int {
		if x := cmp.Compare(a.caughtUp, b.caughtUp); x != 0 {
			return x
		}
		return a.task.Compare(b.task)
	}, true)
	for _, m := range ms {
		q.offer(m)
	}
	out := make([]*movement, 0, len(ms))
	for {
		m, ok := q.poll()
		if !ok {
			return out
		}
		out = append(out, m)
	}
}

// takeWarmup is Java's remainingWarmupReplicas.getAndDecrement() > 0.
func (m *movements) takeWarmup() bool {
	ok := m.remainingWarmups > 0
	m.remainingWarmups--
	return ok
}

func (m *movements) activeMovements() int {
	set := newConstrainedSet(m.isCaughtUp, (*Client).assignedTaskLoad)
	var ms []*movement
	for _, c := range m.cs {
		for _, id := range c.active.sorted() {
			if m.notCaughtUpAndOthersAre(id, c) {
				ms = append(ms, &movement{task: id, dst: c, caughtUp: len(m.caughtUp[id])})
			}
		}
		set.offer(c)
	}
	for _, mv := range movementOrder(ms) {
		id, dst := mv.task, mv.dst
		// A caught-up client with a standby of the task swaps with the destination.
		if src := set.poll(id, func(c *Client) bool { return c.standby[id] }); src != nil {
			swapStandbyAndActive(id, src, dst)
			set.offerAll([]*Client{src, dst})
			continue
		}
		// Else any caught-up client takes it; the destination warms up.
		if src := set.poll(id, nil); src != nil {
			m.moveActive(id, src, dst)
			set.offerAll([]*Client{src, dst})
			continue
		}
		// Else the most caught-up client.
		src := m.mostCaughtUp(id, dst, func(*Client) bool { return true })
		if src == nil {
			panic("assignment: no client is more caught up on " + id.String() + " than its destination")
		}
		if src.standby[id] {
			swapStandbyAndActive(id, src, dst)
		} else {
			m.moveActive(id, src, dst)
		}
		set.offerAll([]*Client{src, dst})
	}
	return len(ms)
}

func (m *movements) standbyMovements() int {
	set := newConstrainedSet(m.isCaughtUp, (*Client).assignedTaskLoad)
	var ms []*movement
	for _, c := range m.cs {
		for _, id := range c.standby.sorted() {
			if m.warmups[c][id] {
				continue // a warm-up placed by the active movements stays
			}
			if m.notCaughtUpAndOthersAre(id, c) {
				ms = append(ms, &movement{task: id, dst: c, caughtUp: len(m.caughtUp[id])})
			}
		}
		set.offer(c)
	}
	needed := 0
	for _, mv := range movementOrder(ms) {
		id, dst := mv.task, mv.dst
		eligible := func(c *Client) bool { return !c.hasAssigned(id) }
		src := set.poll(id, eligible)
		if src == nil {
			src = m.mostCaughtUp(id, dst, eligible)
		}
		if src == nil {
			continue // every more caught-up client holds the task already
		}
		src.assignStandby(id)
		if !m.takeWarmup() {
			dst.unassignStandby(id)
		}
		set.offerAll([]*Client{src, dst})
		needed++
	}
	return needed
}

func (m *movements) moveActive(id TaskID, src, dst *Client) {
	src.assignActive(id)
	dst.unassignActive(id)
	if m.takeWarmup() {
		dst.assignStandby(id)
		w := m.warmups[dst]
		if w == nil {
			w = taskSet{}
			m.warmups[dst] = w
		}
		w[id] = true
	}
}

func swapStandbyAndActive(id TaskID, src, dst *Client) {
	src.unassignStandby(id)
	src.assignActive(id)
	dst.unassignActive(id)
	dst.assignStandby(id)
}

// mostCaughtUp returns the first client by lag, before dst, that ok accepts.
func (m *movements) mostCaughtUp(id TaskID, dst *Client, ok func(*Client) bool) *Client {
	for _, c := range m.byLag[id] {
		if c == dst {
			break
		}
		if ok(c) {
			return c
		}
	}
	return nil
}

// constrainedSet is Java's ConstrainedPrioritySet: clients by a weight (then process id),
// polled for the lightest one meeting a constraint.
type constrainedSet struct {
	q  *javaPQ[*Client]
	in map[*Client]bool
	ok func(*Client, TaskID) bool
}

func newConstrainedSet(ok func(*Client, TaskID) bool, weight func(*Client) float64) *constrainedSet {
	return &constrainedSet{in: map[*Client]bool{}, ok: ok,
		q: newJavaPQ(nil, func(a, b *Client) int {
			if x := cmp.Compare(weight(a), weight(b)); x != 0 {
				return x
			}
			return a.ProcessID.Compare(b.ProcessID)
		}, true)}
}

// poll returns the lightest client meeting the constraint for id and extra (nil: none), or
// nil; the clients it passed over go back into the set.
func (s *constrainedSet) poll(id TaskID, extra func(*Client) bool) *Client {
	var invalid []*Client
	for {
		c, ok := s.q.poll()
		if !ok {
			break
		}
		delete(s.in, c)
		if s.ok(c, id) && (extra == nil || extra(c)) {
			s.offerAll(javaHashOrder(invalid, hashClient))
			return c
		}
		invalid = append(invalid, c)
	}
	s.offerAll(javaHashOrder(invalid, hashClient))
	return nil
}

func (s *constrainedSet) offer(c *Client) {
	if s.in[c] {
		s.q.remove(c)
	} else {
		s.in[c] = true
	}
	s.q.offer(c)
}

func (s *constrainedSet) offerAll(cs []*Client) {
	for _, c := range cs {
		s.offer(c)
	}
}

func hashClient(c *Client) int32 { return hashUUID(c.ProcessID) }
