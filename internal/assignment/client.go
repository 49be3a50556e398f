package assignment

import (
	"cmp"
	"maps"
	"slices"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// taskSet is a set of task ids.
type taskSet map[TaskID]bool

// sorted returns the tasks in TaskID order (Java: a TreeSet's iteration).
func (s taskSet) sorted() []TaskID { return slices.SortedFunc(maps.Keys(s), TaskID.Compare) }

// Client is one application instance in a rebalance (Java: ClientState with the
// StreamsPartitionAssignor's ClientMetadata): its stream threads (the group members sharing
// its process id), what they owned and what state they have, and, once assigned, its tasks.
// Build it with NewClient and AddConsumer, then InitPrevTasks and ComputeLags.
type Client struct {
	// ProcessID identifies the instance.
	ProcessID UUID
	// Endpoint is its application.server ("" for none).
	Endpoint string
	// Tags are its client tags.
	Tags map[string]string

	consumers    []string                        // member ids, sorted
	owned        map[kafka.TopicPartition]string // owned partition -> member id
	offsetSums   map[TaskID]int64                // all members' task offset sums
	consumerPrev map[string]taskSet              // member id -> the tasks of its offset sums
	prevActive   taskSet                         // previous active tasks
	prevActiveBy map[string]taskSet              // member id -> its previous active tasks (from owned partitions)
	prevStandby  taskSet                         // previous standby tasks
	lags         map[TaskID]int64                // per stateful task
	active       taskSet                         // assigned active tasks
	standby      taskSet                         // assigned standby tasks (warm-ups included)
	followup     int64                           // probing rebalance deadline, ms since the epoch; 0 none
}

// NewClient returns the state of the instance with process id pid, without members yet.
func NewClient(pid UUID, endpoint string, tags map[string]string) *Client {
	return &Client{ProcessID: pid, Endpoint: endpoint, Tags: tags, owned: map[kafka.TopicPartition]string{},
		offsetSums: map[TaskID]int64{}, consumerPrev: map[string]taskSet{}, prevActive: taskSet{},
		prevActiveBy: map[string]taskSet{}, prevStandby: taskSet{}, lags: map[TaskID]int64{},
		active: taskSet{}, standby: taskSet{}}
}

// AddConsumer adds one of the instance's members (a stream thread): its member id, the
// partitions it owns and the task offset sums of its subscription. Each member adds one to
// the instance's capacity. Java: ClientMetadata.addConsumer and addPreviousTasksAndOffsetSums.
func (c *Client) AddConsumer(memberID string, owned []kafka.TopicPartition, offsetSums map[TaskID]int64) {
	if i, found := slices.BinarySearch(c.consumers, memberID); !found {
		c.consumers = slices.Insert(c.consumers, i, memberID)
	}
	for _, tp := range owned {
		c.owned[tp] = memberID
	}
	maps.Copy(c.offsetSums, offsetSums)
	set := taskSet{}
	for id := range offsetSums {
		set[id] = true
	}
	c.consumerPrev[memberID] = set
}

// Consumers returns the instance's member ids, sorted.
func (c *Client) Consumers() []string { return slices.Clone(c.consumers) }

// Capacity is the number of members (stream threads) of the instance.
func (c *Client) Capacity() int { return len(c.consumers) }

// PreviousOwner returns the member of this instance that owned tp, "" if none.
func (c *Client) PreviousOwner(tp kafka.TopicPartition) string { return c.owned[tp] }

// InitPrevTasks works out the instance's previous tasks: active ones from the owned
// partitions (taskOf maps an input partition to its task; unknown partitions are returned),
// then the rest of the offset sums: OffsetSumRunning is a previous active task, anything else
// a previous standby. Java: ClientState.initializePrevTasks.
func (c *Client) InitPrevTasks(taskOf map[kafka.TopicPartition]TaskID) (unknown []kafka.TopicPartition) {
	tps := slices.SortedFunc(maps.Keys(c.owned), compareTP)
	for _, tp := range tps {
		id, ok := taskOf[tp]
		if !ok {
			unknown = append(unknown, tp)
			continue
		}
		c.prevActive[id] = true
		m := c.owner(c.owned[tp])
		m[id] = true
	}
	for id, sum := range c.offsetSums {
		if c.prevActive[id] {
			continue
		}
		if sum == OffsetSumRunning {
			c.prevActive[id] = true
		} else {
			c.prevStandby[id] = true
		}
	}
	return unknown
}

func (c *Client) owner(member string) taskSet {
	m := c.prevActiveBy[member]
	if m == nil {
		m = taskSet{}
		c.prevActiveBy[member] = m
	}
	return m
}

// ComputeLags sets the lag of every stateful task (the keys of endOffsetSums, each the sum of
// the task's changelog end offsets): OffsetSumRunning when the instance runs it,
// OffsetSumUnknown when it reported an unknown sum, else the end offset sum minus the
// instance's offset sum (0 when it has no state for the task: the whole changelog; the end
// offset sum itself when the instance's sum is larger, a sign of corrupt state). Java:
// ClientState.computeTaskLags.
func (c *Client) ComputeLags(endOffsetSums map[TaskID]int64) {
	for id, end := range endOffsetSums {
		sum := c.offsetSums[id]
		switch {
		case sum == OffsetSumRunning:
			c.lags[id] = OffsetSumRunning
		case sum == OffsetSumUnknown:
			c.lags[id] = OffsetSumUnknown
		case end < sum:
			c.lags[id] = end
		default:
			c.lags[id] = end - sum
		}
	}
}

// Lag returns the instance's lag for stateful task id (see ComputeLags) and whether id is
// stateful.
func (c *Client) Lag(id TaskID) (int64, bool) {
	l, ok := c.lags[id]
	return l, ok
}

// PrevActive returns the instance's previous active tasks, sorted.
func (c *Client) PrevActive() []TaskID { return c.prevActive.sorted() }

// PrevStandby returns the instance's previous standby tasks, sorted.
func (c *Client) PrevStandby() []TaskID { return c.prevStandby.sorted() }

// PreviouslyOwnedStandby reports whether the instance kept a standby of id.
func (c *Client) PreviouslyOwnedStandby(id TaskID) bool { return c.prevStandby[id] }

// Active returns the assigned active tasks, sorted.
func (c *Client) Active() []TaskID { return c.active.sorted() }

// Standby returns the assigned standby tasks (warm-ups included), sorted.
func (c *Client) Standby() []TaskID { return c.standby.sorted() }

// FollowupDeadline returns the time (ms since the epoch) of the probing rebalance this
// instance is to trigger, 0 for none.
func (c *Client) FollowupDeadline() int64 { return c.followup }

// SetFollowupDeadline sets the time of the probing rebalance this instance is to trigger.
func (c *Client) SetFollowupDeadline(ms int64) { c.followup = ms }

// prevTasksByLag returns the stateful tasks member had state for, by lag then task id
// (Java: ClientState.prevTasksByLag).
func (c *Client) prevTasksByLag(member string) []TaskID {
	var out []TaskID
	for id := range c.consumerPrev[member] {
		if _, ok := c.lags[id]; ok {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b TaskID) int {
		if x := cmp.Compare(c.lags[a], c.lags[b]); x != 0 {
			return x
		}
		return a.Compare(b)
	})
	return out
}

func (c *Client) capacity() float64 { return float64(len(c.consumers)) }

func (c *Client) assignedCount() int { return len(c.active) + len(c.standby) }

// assignedTaskLoad is Java's ClientState.assignedTaskLoad.
func (c *Client) assignedTaskLoad() float64 { return float64(c.assignedCount()) / c.capacity() }

// activeTaskLoad is Java's ClientState.activeTaskLoad.
func (c *Client) activeTaskLoad() float64 { return float64(len(c.active)) / c.capacity() }

func (c *Client) hasAssigned(id TaskID) bool { return c.active[id] || c.standby[id] }

func (c *Client) assignActive(id TaskID) {
	c.mustNotHave(id)
	c.active[id] = true
}

func (c *Client) unassignActive(id TaskID) {
	if !c.active[id] {
		panic("assignment: unassigning active task " + id.String() + ", which is not assigned")
	}
	delete(c.active, id)
}

func (c *Client) assignStandby(id TaskID) {
	c.mustNotHave(id)
	c.standby[id] = true
}

func (c *Client) unassignStandby(id TaskID) {
	if !c.standby[id] {
		panic("assignment: unassigning standby task " + id.String() + ", which is not assigned")
	}
	delete(c.standby, id)
}

func (c *Client) mustNotHave(id TaskID) {
	if c.hasAssigned(id) {
		panic("assignment: task " + id.String() + " is assigned to the client twice")
	}
}

// statefulActive and statelessActive return the assigned active tasks that are (not)
// stateful, in the order Java's Collectors.toSet() of the sorted tasks iterates them.
func (c *Client) statefulActive() []TaskID {
	var out []TaskID
	for _, id := range c.active.sorted() {
		if _, ok := c.lags[id]; ok {
			out = append(out, id)
		}
	}
	return javaHashOrder(out, hashTask)
}

func (c *Client) statelessActive() []TaskID {
	var out []TaskID
	for _, id := range c.active.sorted() {
		if _, ok := c.lags[id]; !ok {
			out = append(out, id)
		}
	}
	return javaHashOrder(out, hashTask)
}
