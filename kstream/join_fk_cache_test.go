package kstream_test

import (
	"github.com/kstreams-go/kstreams/internal/topology"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
)

// taskRig runs every sub-topology of a topology in a task of its own (partition 0 of each
// topic), each task with its own record cache, as two stream threads of the runtime would; unlike
// the test driver it never processes or commits by itself: a record produced to a topic another
// task reads is only queued there, and caches flush only when the test commits a task. This lets
// a test replay an interleaving of the multi-partition runtime deterministically.
type taskRig struct {
	t       *testing.T
	tasks   []*task.Task
	offsets map[string]int64
	outputs map[string][]task.OutRecord
}

type rigCollector struct{ r *taskRig }

func (c rigCollector) Send(rec task.OutRecord) error {
	r := c.r
	r.outputs[rec.Topic] = append(r.outputs[rec.Topic], rec)
	for _, tk := range r.tasks {
		if tk.HasSource(rec.Topic) {
			return r.add(tk, rec.Topic, rec.Key, rec.Value, rec.Timestamp)
		}
	}
	return nil
}

func (rigCollector) PartitionsFor(string) (int32, error) { return 1, nil }

func newTaskRig(t *testing.T, topo *processor.Topology, appID string) *taskRig {
	t.Helper()
	r := &taskRig{t: t, offsets: map[string]int64{}, outputs: map[string][]task.OutRecord{}}
	b := topology.Of(topo)
	for _, g := range b.NodeGroups() {
		if g.Global {
			continue
		}
		spec, err := task.SpecFromTopology(b, appID, []int{g.ID})
		if err != nil {
			t.Fatal(err)
		}
		cfg := task.Config{ApplicationID: appID, AppConfigs: map[string]string{"application.id": appID},
			Clock: func() int64 { return 0 }, Collector: rigCollector{r}, Cache: cache.New(10 << 20)}
		tk, err := task.New(processor.TaskID{Subtopology: g.ID, Partition: 0}, spec, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := tk.Init(); err != nil {
			t.Fatal(err)
		}
		r.tasks = append(r.tasks, tk)
	}
	t.Cleanup(func() {
		for _, tk := range r.tasks {
			_ = tk.Close()
		}
	})
	return r
}

func (r *taskRig) add(tk *task.Task, topic string, key, value []byte, ts int64) error {
	off := r.offsets[topic]
	r.offsets[topic] = off + 1
	return tk.AddRecord(task.RawRecord{Topic: topic, Offset: off, Timestamp: ts, Key: key, Value: value})
}

// owner returns the task reading topic.
func (r *taskRig) owner(topic string) *task.Task {
	r.t.Helper()
	for _, tk := range r.tasks {
		if tk.HasSource(topic) {
			return tk
		}
	}
	r.t.Fatalf("no task reads %s", topic)
	return nil
}

// pipe queues a record of a source topic (value nil: a tombstone) at the task reading it and
// processes everything that task has queued, without committing.
func (r *taskRig) pipe(topic, key string, value *string, ts int64) {
	r.t.Helper()
	var vb []byte
	if value != nil {
		vb = []byte(*value)
	}
	tk := r.owner(topic)
	if err := r.add(tk, topic, []byte(key), vb, ts); err != nil {
		r.t.Fatal(err)
	}
	r.process(tk)
}

// process processes everything tk has queued, without committing.
func (r *taskRig) process(tk *task.Task) {
	r.t.Helper()
	for {
		ok, err := tk.Process(0)
		if err != nil {
			r.t.Fatal(err)
		}
		if !ok {
			return
		}
	}
}

// commit commits tk (its caches flush and forward).
func (r *taskRig) commit(tk *task.Task) {
	r.t.Helper()
	if err := tk.Commit(); err != nil {
		r.t.Fatal(err)
	}
}

// settle processes and commits every task until nothing is left queued.
func (r *taskRig) settle() {
	r.t.Helper()
	for range 20 {
		busy := false
		for _, tk := range r.tasks {
			busy = busy || tk.HasRecordsQueued()
			r.process(tk)
			r.commit(tk)
		}
		if !busy {
			return
		}
	}
	r.t.Fatal("tasks did not settle")
}

// final returns the last value of each key of topic whose last record is not a tombstone.
func (r *taskRig) final(topic string) map[string]string {
	out := map[string]string{}
	for _, rec := range r.outputs[topic] {
		if rec.Value == nil {
			delete(out, string(rec.Key))
		} else {
			out[string(rec.Key)] = string(rec.Value)
		}
	}
	return out
}

// TestForeignKeyJoinForeignRowCreatedAndDeletedBetweenFlushes replays, on the Java reference
// topologies fk-inner and fk-left (caching on, as by default), the interleaving that the
// multi-partition runtime hit: the foreign task processes row f=R, then a subscription to f (the
// primary task committed it meanwhile), then the delete of f, all before its next commit. The
// foreign table's cache holds R only as a dirty entry and flushes "R, then delete" as nothing
// at all (a delete of a key absent below is skipped, as in Java). If the subscription is
// answered from the cache (R), nothing ever tells the subscriber that f is gone, and the join
// keeps k|R for good. KIP-213's guarantee is that the result converges to the join of the final
// tables, which is what Java's TopologyTestDriver (a commit after every record) gives for the
// same records in the same order: no inner result for k, and k -> "f:1|-" in the left join.
// The cases where f is updated or kept instead check that answers from the flushed state are
// still corrected by the flush that follows.
func TestForeignKeyJoinForeignRowCreatedAndDeletedBetweenFlushes(t *testing.T) {
	cases := []struct {
		name      string
		last      *string // the last foreign record for f (nil: a delete); skip it when keep
		keep      bool
		wantInner map[string]string
		wantLeft  map[string]string
	}{
		{name: "deleted", wantInner: map[string]string{}, wantLeft: map[string]string{"k": "f:1|-"}},
		{name: "updated", last: ptr("R2"), wantInner: map[string]string{"k": "f:1|R2"}, wantLeft: map[string]string{"k": "f:1|R2"}},
		{name: "kept", keep: true, wantInner: map[string]string{"k": "f:1|R"}, wantLeft: map[string]string{"k": "f:1|R"}},
	}
	for _, c := range cases {
		for _, topoName := range []string{"fk-inner", "fk-left"} {
			t.Run(c.name+"/"+topoName, func(t *testing.T) {
				want := c.wantInner
				if topoName == "fk-left" {
					want = c.wantLeft
				}
				var d dslTopology
				for _, x := range tableJoinTopologies {
					if x.name == topoName {
						d = x
					}
				}
				b := kstream.NewStreamsBuilder()
				d.build(b)
				topo, err := b.Build()
				if err != nil {
					t.Fatal(err)
				}
				left, right, output := topoName+"-left", topoName+"-right", topoName+"-output"
				rig := newTaskRig(t, topo, topoName)
				primary, foreign := rig.owner(left), rig.owner(right)

				// the foreign task takes f=R into its cache (no commit)
				rig.pipe(right, "f", ptr("R"), 100)
				// the primary task processes k -> f and commits: the subscription goes out
				rig.pipe(left, "k", ptr("f:1"), 110)
				rig.commit(primary)
				// the foreign task answers it before its next commit; the primary task joins the answer
				rig.process(foreign)
				rig.process(primary)
				// the foreign task then takes the last foreign record, still before its commit
				if !c.keep {
					rig.pipe(right, "f", c.last, 120)
				}
				rig.commit(foreign)
				rig.settle()
				if got := rig.final(output); !maps.Equal(got, want) {
					t.Fatalf("final %s = %v, want %v (all records: %v)", output, got, want, rig.outputs[output])
				}

				if !javaAvailable() {
					return
				}
				// Java's TopologyTestDriver on the same records in the same order reaches the same state
				events := []conformance.Event{
					conformance.RecordEvent(conformance.InputRecord{Topic: right, Key: conformance.String("f"), Value: conformance.String("R"), Timestamp: 100}),
					conformance.RecordEvent(conformance.InputRecord{Topic: left, Key: conformance.String("k"), Value: conformance.String("f:1"), Timestamp: 110}),
				}
				if !c.keep {
					v := conformance.Null()
					if c.last != nil {
						v = conformance.String(*c.last)
					}
					events = append(events, conformance.RecordEvent(conformance.InputRecord{Topic: right, Key: conformance.String("f"), Value: v, Timestamp: 120}))
				}
				vec := filepath.Join(t.TempDir(), "vector.jsonl")
				f, err := os.Create(vec)
				if err != nil {
					t.Fatal(err)
				}
				if err := conformance.WriteEvents(f, events); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				outs, _ := conformance.RunJava(t, topoName, vec)
				javaFinal := map[string]string{}
				for _, o := range outs {
					if o.Topic != output {
						continue
					}
					if o.ValueBytes == nil {
						delete(javaFinal, string(o.KeyBytes))
					} else {
						javaFinal[string(o.KeyBytes)] = string(o.ValueBytes)
					}
				}
				if !maps.Equal(javaFinal, want) {
					t.Fatalf("Java's final %s = %v, want %v", output, javaFinal, want)
				}
			})
		}
	}
}
