package runtime

import (
	"slices"
	"time"

	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// The thread's side of the metrics registry (internal/metrics): the loop counts and times
// its operations into th.obs, and publishes its tasks' figures every publishEvery (and
// between restore batches, when the loop does not run).

// publishEvery is how often the thread publishes its tasks' figures.
const publishEvery = 100 * time.Millisecond

// sensors returns the registry of the runtime (New makes one at INFO when the caller gave
// none).
func (r *Runtime) sensors() *metrics.Registry { return r.cfg.Observe }

var threadStateNames = [...]string{"CREATED", "STARTING", "REBALANCING", "RUNNING", "PENDING_SHUTDOWN", "DEAD"}

// String returns Java's name of the state.
func (s ThreadState) String() string {
	if int(s) < len(threadStateNames) {
		return threadStateNames[s]
	}
	return "UNKNOWN"
}

// publishMetrics publishes the figures of the thread's tasks (active, restoring, standby), at
// most every publishEvery unless force.
func (th *thread) publishMetrics(force bool) {
	now := time.Now()
	if !force && now.Sub(th.lastPublish) < publishEvery {
		return
	}
	th.lastPublish = now
	var out []metrics.TaskStats
	add := func(id processor.TaskID, t *task.Task, kind string) {
		s := metrics.TaskStats{ID: id, Kind: kind, Lag: -1, Processed: t.Processed(), Dropped: t.DroppedRecords(),
			DeadLetters: t.DeadLetters(), Buffered: t.BufferedRecords(), Enforced: th.tm.enforced[id]}
		if a, ok := t.AsyncStats(); ok {
			s.Async, s.AsyncInFlight, s.AsyncQueued, s.AsyncPaused = true, a.InFlight, a.Queued, a.Paused
		}
		for _, in := range th.in.byTask[id] {
			s.Partitions = append(s.Partitions, metrics.Partition{Topic: in.tp.Topic, Partition: in.tp.Partition})
			if lag := th.in.lag(in); lag >= 0 {
				s.Lag = max(s.Lag, 0) + lag
			}
		}
		out = append(out, s)
	}
	for id, t := range th.tm.tasks {
		add(id, t, "active")
	}
	for id, t := range th.view.restoringTasks() {
		if th.tm.tasks[id] != t {
			add(id, t, "restoring")
		}
	}
	for id, sb := range th.tm.standbys {
		add(id, sb.t, "standby")
	}
	slices.SortFunc(out, func(a, b metrics.TaskStats) int {
		if a.Kind != b.Kind {
			return kindOrder(a.Kind) - kindOrder(b.Kind)
		}
		return a.ID.Compare(b.ID)
	})
	th.obs.PublishTasks(out)
}

func kindOrder(k string) int {
	switch k {
	case "active":
		return 0
	case "restoring":
		return 1
	}
	return 2
}
