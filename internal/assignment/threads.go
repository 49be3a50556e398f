package assignment

import (
	"maps"
	"slices"
)

// assignTasksToThreads spreads one client's tasks over its members (stream threads) as Java's
// StreamsPartitionAssignor.assignTasksToThreads: each member first keeps (stateful tasks) the
// tasks it has state for, lowest lag first, up to the even share; the remaining tasks are dealt
// out to the members below the share, and the last ones (fewer than members) go to their
// previous owners where possible, else one each to the members still at the share. load
// carries each member's task count across the calls (active stateful, standby, stateless)
// and is updated. tasks is in the iteration order of the Java collection the caller passes
// (sorted says it is a sorted set).
func assignTasksToThreads(tasks []TaskID, sorted, stateful bool, consumers []string, c *Client, load map[string]int) map[string][]TaskID {
	out := make(map[string][]TaskID, len(consumers))
	for _, m := range consumers {
		out[m] = []TaskID{}
	}
	total := len(tasks)
	for _, n := range load {
		total += n
	}
	if len(consumers) == 0 {
		return out
	}
	minPerThread := total / len(consumers)
	unassigned := newJavaPQ(tasks, TaskID.Compare, sorted)
	var toFill []string
	prevOwner := map[TaskID]string{}
	if unassigned.len() > 0 {
		for _, m := range consumers {
			target := minPerThread - load[m]
			if stateful {
				for _, id := range c.prevTasksByLag(m) {
					if !unassigned.contains(id) {
						continue
					}
					if len(out[m]) < target {
						out[m] = append(out[m], id)
						unassigned.remove(id)
					} else {
						prevOwner[id] = m
					}
				}
			}
			if len(out[m]) < target {
				toFill = append(toFill, m)
			}
		}
		for len(toFill) > 0 {
			id, ok := unassigned.poll()
			if !ok {
				panic("assignment: ran out of unassigned tasks while some threads are below their share")
			}
			m := toFill[0]
			toFill = toFill[1:]
			out[m] = append(out[m], id)
			if len(out[m])+load[m] < minPerThread {
				toFill = append(toFill, m)
			}
		}
		if unassigned.len() > 0 {
			for _, m := range consumers {
				if len(out[m])+load[m] == minPerThread {
					toFill = append(toFill, m)
				}
			}
			for _, id := range slices.SortedFunc(maps.Keys(prevOwner), TaskID.Compare) {
				m := prevOwner[id]
				if i := slices.Index(toFill, m); i >= 0 && unassigned.contains(id) {
					out[m] = append(out[m], id)
					unassigned.remove(id)
					toFill = slices.Delete(toFill, i, i+1)
				}
			}
			for _, id := range unassigned.items() {
				if len(toFill) == 0 {
					panic("assignment: more tasks left than threads at their share")
				}
				m := toFill[0]
				toFill = toFill[1:]
				out[m] = append(out[m], id)
			}
		}
	}
	for _, m := range consumers {
		load[m] += len(out[m])
	}
	return out
}

// AssignToThreads spreads the client's assigned tasks over its members as Java's
// StreamsPartitionAssignor.computeNewAssignment does: the active stateful tasks, then the
// standbys, then the stateless active tasks, keeping the members' counts even. It returns each
// member's active and standby tasks.
func (c *Client) AssignToThreads() (active, standby map[string][]TaskID) {
	load := map[string]int{}
	active = assignTasksToThreads(c.statefulActive(), false, true, c.consumers, c, load)
	standby = assignTasksToThreads(c.standby.sorted(), false, true, c.consumers, c, load)
	stateless := assignTasksToThreads(c.statelessActive(), false, false, c.consumers, c, load)
	for m, ids := range stateless {
		active[m] = append(active[m], ids...)
	}
	return active, standby
}
