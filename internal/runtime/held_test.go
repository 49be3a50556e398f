package runtime

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// heldTestManager is the task manager of thread 0 of an instance running a stateless topology
// (source "in" to sink "out"), with a state updater and no broker.
func heldTestManager(t *testing.T) *taskManager {
	t.Helper()
	topo := processor.NewTopology()
	if err := topo.AddSource("src", []string{"in"}, processor.WithKeyDeserializer(serde.String()),
		processor.WithValueDeserializer(serde.String())); err != nil {
		t.Fatal(err)
	}
	if err := topo.AddSink("sink", "out", []string{"src"}, processor.WithKeySerializer(serde.String()),
		processor.WithValueSerializer(serde.String())); err != nil {
		t.Fatal(err)
	}
	rt := &Runtime{cfg: Config{Topology: topology.Of(topo), ApplicationID: "app", Task: task.Config{ApplicationID: "app", AppConfigs: map[string]string{}}}}
	log := slog.New(slog.DiscardHandler)
	tm := &taskManager{rt: rt, ctx: context.Background(), log: log, out: &output{}, view: newTaskView(),
		in: &input{parts: map[kafka.TopicPartition]*inputPartition{}}, tasks: map[processor.TaskID]*task.Task{},
		standbys: map[processor.TaskID]*standbyTask{}, obs: metrics.New("app", metrics.Info).Thread("t"),
		updater: newStateUpdater(log, nil)}
	t.Cleanup(func() { tm.close() })
	return tm
}

// A task assigned to a thread while another thread of the instance still holds it is not
// waited for: the assignment is applied at once and the task is held back (owned, counted as
// restoring, not created); the thread's loop retries it (retryHeld) and creates it once the
// other thread let it go. A held-back task the next assignment takes away is forgotten and
// counts as revoked.
func TestTaskHeldByAnotherThreadIsNotWaitedFor(t *testing.T) {
	tm := heldTestManager(t)
	id := processor.TaskID{Subtopology: 0, Partition: 0}
	tp := kafka.TopicPartition{Topic: "in", Partition: 0}
	if err := tm.rt.tryLockTask(id, 1); err != nil { // thread 2 still has it
		t.Fatal(err)
	}
	got := received{active: map[processor.TaskID][]kafka.TopicPartition{id: {tp}}}
	if _, _, err := tm.handleAssignment(got); err != nil {
		t.Fatal(err)
	}
	if !tm.isHeld(id) || tm.updater.job(id) != nil || !tm.restoringActive() ||
		!slices.Equal(tm.restoringPartitions(), []kafka.TopicPartition{tp}) || !slices.Equal(tm.activeIDs(), []processor.TaskID{id}) {
		t.Fatalf("held %v, job %v, restoring %v, partitions %v, active %v", tm.isHeld(id), tm.updater.job(id) != nil,
			tm.restoringActive(), tm.restoringPartitions(), tm.activeIDs())
	}
	if err := tm.retryHeld(); err != nil || !tm.isHeld(id) || tm.updater.job(id) != nil {
		t.Fatalf("retried while still held: %v, held %v", err, tm.isHeld(id))
	}
	tm.rt.unlockTask(id, 1) // thread 2 closed it
	if err := tm.retryHeld(); err != nil || tm.isHeld(id) || tm.updater.job(id) == nil {
		t.Fatalf("retried once let go: %v, held %v, job %v", err, tm.isHeld(id), tm.updater.job(id) != nil)
	}
	if err := tm.rt.tryLockTask(id, 1); err == nil {
		t.Fatal("thread 2 took the task thread 1 now holds")
	}

	// Held back, then revoked.
	other := processor.TaskID{Subtopology: 0, Partition: 1}
	if err := tm.rt.tryLockTask(other, 1); err != nil {
		t.Fatal(err)
	}
	got.active[other] = []kafka.TopicPartition{{Topic: "in", Partition: 1}}
	if _, _, err := tm.handleAssignment(got); err != nil || !tm.isHeld(other) {
		t.Fatalf("%v, held %v", err, tm.isHeld(other))
	}
	delete(got.active, other)
	revoked, _, err := tm.handleAssignment(got)
	if err != nil || !revoked || tm.isHeld(other) {
		t.Fatalf("revoked %v, %v, still held %v", revoked, err, tm.isHeld(other))
	}
}
