package changelog

import (
	"bytes"
	"context"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/props"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// testLog is a changelog tests can write and read: MemoryLog, or Kafka in kafka_test.go.
type testLog interface {
	Reader
	Append(tp TopicPartition, r Record) int64
}

// count returns the number of offsets of tp (records, plus markers on a transactional log).
func count(t *testing.T, l testLog, tp TopicPartition) int64 {
	t.Helper()
	end, err := l.EndOffset(context.Background(), tp)
	must(t, err)
	begin, err := l.BeginningOffset(context.Background(), tp)
	must(t, err)
	return end - begin
}

// logCollector appends the task's changelog writes to a log and tells the TaskState.
type logCollector struct {
	log     testLog
	ts      *TaskState
	discard bool // drop writes (an aborted transaction: read_committed never sees them)
}

func (c *logCollector) Send(r task.OutRecord) error {
	if c.discard {
		return nil
	}
	tp := TopicPartition{Topic: r.Topic, Partition: r.Partition}
	off := c.log.Append(tp, Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp, Headers: r.Headers})
	if c.ts != nil {
		c.ts.RecordWritten(tp, off)
	}
	return nil
}
func (c *logCollector) PartitionsFor(string) (int32, error) { return 1, nil }

// countingListener records restore callbacks.
type countingListener struct {
	starts   map[string][2]int64
	batches  map[string]int
	restored map[string]int64
}

func newListener() *countingListener {
	return &countingListener{starts: map[string][2]int64{}, batches: map[string]int{}, restored: map[string]int64{}}
}
func (l *countingListener) OnRestoreStart(_ TopicPartition, s string, from, to int64) {
	l.starts[s] = [2]int64{from, to}
}
func (l *countingListener) OnBatchRestored(_ TopicPartition, s string, _, n int64) { l.batches[s]++ }
func (l *countingListener) OnRestoreEnd(_ TopicPartition, s string, total int64) {
	l.restored[s] = total
}

func builders(t *testing.T) []processor.StoreBuilder {
	t.Helper()
	ws, err := store.Stores.PersistentWindowStore("win", 10*time.Minute, time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := store.Stores.PersistentSessionStore("sess", 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return []processor.StoreBuilder{
		store.Stores.KeyValueStoreBuilder(store.Stores.PersistentKeyValueStore("kv"), serde.String(), serde.String()),
		store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("mem"), serde.String(), serde.String()),
		store.Stores.TimestampedKeyValueStoreBuilder(store.Stores.PersistentTimestampedKeyValueStore("ts"), serde.String(), serde.Long()),
		store.Stores.WindowStoreBuilder(ws, serde.String(), serde.Long()),
		store.Stores.SessionStoreBuilder(ss, serde.String(), serde.Long()),
	}
}

type harness struct {
	t    *testing.T
	dir  string
	log  testLog
	app  string
	eos  bool
	buf  *bytes.Buffer
	task *task.Task
	ts   *TaskState
	coll *logCollector
	lis  *countingListener
	// bulkMin is TaskStateConfig.BulkRestoreMinRecords; env, if set, the Pebble environment.
	bulkMin int
	env     storeapi.PebbleEnv
	// lock, if set, is TaskStateConfig.StoreLock, checked to be held around each restored
	// batch (locked counts them) and released between them.
	lock   *heldLock
	locked *lockCheckingTask
}

func (h *harness) open() {
	h.t.Helper()
	h.coll = &logCollector{log: h.log}
	if h.app == "" {
		h.app = "app"
	}
	cfg := task.Config{ApplicationID: h.app, StateDir: h.dir, Collector: h.coll, AppConfigs: map[string]string{}, PebbleEnv: h.env}
	if h.eos {
		cfg.AppConfigs[props.ProcessingGuaranteeConfig] = "exactly_once_v2"
	}
	var specs []task.StoreSpec
	for _, b := range builders(h.t) {
		specs = append(specs, task.StoreSpec{Builder: b})
	}
	tk, err := task.New(processor.TaskID{Subtopology: 0, Partition: 0}, task.Spec{Stores: specs}, cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := tk.Init(); err != nil {
		h.t.Fatal(err)
	}
	h.buf = &bytes.Buffer{}
	h.lis = newListener()
	h.task = tk
	cfg2 := TaskStateConfig{TaskDir: h.dir, ExactlyOnce: h.eos, Reader: h.log, Listener: h.lis,
		Logger: slog.New(slog.NewTextHandler(h.buf, nil)), MaxBatchRecords: 7, BulkRestoreMinRecords: h.bulkMin}
	var restored Task = tk
	if h.lock != nil {
		h.locked = &lockCheckingTask{Task: tk, t: h.t, lock: h.lock}
		restored, cfg2.StoreLock = h.locked, h.lock
		cfg2.Listener = lockCheckingListener{h.lis, h.t, h.lock}
	}
	h.ts = NewTaskState(cfg2, restored)
	h.coll.ts = h.ts
	if err := h.ts.Restore(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) kv() store.KeyValueStore[string, string] {
	return h.task.Store("kv").(store.KeyValueStore[string, string])
}
func (h *harness) mem() store.KeyValueStore[string, string] {
	return h.task.Store("mem").(store.KeyValueStore[string, string])
}
func (h *harness) tsStore() store.TimestampedKeyValueStore[string, int64] {
	return h.task.Store("ts").(store.TimestampedKeyValueStore[string, int64])
}
func (h *harness) win() store.WindowStore[string, int64] {
	return h.task.Store("win").(store.WindowStore[string, int64])
}
func (h *harness) sess() store.SessionStore[string, int64] {
	return h.task.Store("sess").(store.SessionStore[string, int64])
}

// fill writes n updates to every store, starting at key index from.
func (h *harness) fill(from, n int) {
	h.t.Helper()
	for i := from; i < from+n; i++ {
		k := fmt.Sprintf("k%03d", i%40)
		must(h.t, h.kv().Put(k, fmt.Sprint("v", i)))
		must(h.t, h.mem().Put(k, fmt.Sprint("m", i)))
		must(h.t, h.tsStore().Put(k, store.MakeValueAndTimestamp(int64(i), int64(1000+i))))
		must(h.t, h.win().Put(k, int64(i), int64(i%5)*1000))
		must(h.t, h.sess().Put(serde.Windowed[string]{Key: k, Window: serde.Window{Start: int64(i), End: int64(i + 10)}}, int64(i)))
		if i%7 == 3 {
			_, _, err := h.kv().Delete(fmt.Sprintf("k%03d", (i+1)%40))
			must(h.t, err)
			_, _, err = h.mem().Delete(fmt.Sprintf("k%03d", (i+1)%40))
			must(h.t, err)
			must(h.t, h.tsStore().Put(fmt.Sprintf("k%03d", (i+2)%40), nil))
			must(h.t, h.sess().Remove(serde.Windowed[string]{Key: k, Window: serde.Window{Start: int64(i), End: int64(i + 10)}}))
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// dump lists the contents of every store.
func (h *harness) dump() map[string][]string {
	out := map[string][]string{}
	for name, st := range map[string]store.KeyValueStore[string, string]{"kv": h.kv(), "mem": h.mem()} {
		for k, v := range store.All(st.All()) {
			out[name] = append(out[name], k+"="+v)
		}
	}
	for k, v := range store.All(h.tsStore().All()) {
		out["ts"] = append(out["ts"], fmt.Sprintf("%s=%d@%d", k, v.Value, v.Timestamp))
	}
	for k, v := range store.All(h.win().All()) {
		out["win"] = append(out["win"], fmt.Sprintf("%s=%d", k, v))
	}
	for k, v := range store.All(h.sess().FetchRange("", "\xff")) {
		out["sess"] = append(out["sess"], fmt.Sprintf("%s=%d", k, v))
	}
	return out
}

func equalDumps(t *testing.T, got, want map[string][]string) {
	t.Helper()
	for _, name := range []string{"kv", "mem", "ts", "win", "sess"} {
		if len(want[name]) == 0 {
			t.Fatalf("%s: empty reference dump", name)
		}
		if !slices.Equal(got[name], want[name]) {
			t.Errorf("%s: restored contents differ\n got %q\nwant %q", name, got[name], want[name])
		}
	}
}

func TestRestoreFromScratchAndFromCheckpoint(t *testing.T) {
	restoreScenario(t, NewMemoryLog(), "app")
}

// Every restore of the Pebble key-value store runs as a bulk restore (its short tail path).
func TestBulkRestoreFromScratchAndFromCheckpoint(t *testing.T) {
	restoreScenarioBulk(t, NewMemoryLog(), "app", 1)
}

// restoreScenario fills every store kind, deletes the local state and restores it, then keeps
// the local state and restores only the tail after the checkpoint.
func restoreScenario(t *testing.T, log testLog, app string) { restoreScenarioBulk(t, log, app, 0) }

// restoreScenarioBulk is restoreScenario with BulkRestoreMinRecords bulkMin.
func restoreScenarioBulk(t *testing.T, log testLog, app string, bulkMin int) {
	h := &harness{t: t, dir: t.TempDir(), log: log, app: app, bulkMin: bulkMin}
	if c, ok := log.(interface{ ensureTopic(string) }); ok {
		for _, s := range []string{"kv", "mem", "ts", "win", "sess"} {
			c.ensureTopic(app + "-" + s + "-changelog") // the runtime's internal topic manager does this
		}
	}
	h.open()
	h.fill(0, 100)
	must(t, h.task.Commit())
	must(t, h.ts.Checkpoint())
	want := h.dump()
	must(t, h.task.Close())

	cp, err := ReadCheckpoint(filepath.Join(h.dir, CheckpointFileName))
	must(t, err)
	// Persistent logged stores only; the offset is the last record's.
	if len(cp) != 4 || cp[TopicPartition{Topic: h.app + "-kv-changelog", Partition: 0}] != count(t, h.log, TopicPartition{Topic: h.app + "-kv-changelog", Partition: 0})-1 {
		t.Fatalf("checkpoint = %v", cp)
	}
	if _, ok := cp[TopicPartition{Topic: h.app + "-mem-changelog", Partition: 0}]; ok {
		t.Fatal("in-memory store was checkpointed")
	}

	// Delete the local state: everything is restored from the changelogs.
	must(t, os.RemoveAll(filepath.Join(h.dir, storeapi.PebbleDirName)))
	h.open()
	equalDumps(t, h.dump(), want)
	for _, s := range []string{"kv", "ts", "win", "sess"} {
		n := count(t, h.log, TopicPartition{Topic: h.app + "-" + s + "-changelog", Partition: 0})
		if h.lis.restored[s] != n || h.lis.starts[s] != [2]int64{0, n} {
			t.Errorf("%s: restored %d records from %v, want all %d", s, h.lis.restored[s], h.lis.starts[s], n)
		}
	}
	if h.lis.batches["kv"] < 2 {
		t.Errorf("kv restored in %d batches, want several of at most 7 records", h.lis.batches["kv"])
	}

	// Keep the local state; write a tail after the checkpoint and stop without checkpointing.
	must(t, h.ts.Checkpoint())
	before := count(t, h.log, TopicPartition{Topic: h.app + "-kv-changelog", Partition: 0})
	h.fill(100, 6)
	want = h.dump()
	must(t, h.task.Close())
	h.open()
	equalDumps(t, h.dump(), want)
	after := count(t, h.log, TopicPartition{Topic: h.app + "-kv-changelog", Partition: 0})
	if h.lis.restored["kv"] != after-before || h.lis.starts["kv"] != [2]int64{before, after} {
		t.Fatalf("kv: restored %d from %v, want only the tail %d..%d", h.lis.restored["kv"], h.lis.starts["kv"], before, after)
	}
	// The in-memory store always restores everything.
	if n := count(t, h.log, TopicPartition{Topic: h.app + "-mem-changelog", Partition: 0}); h.lis.restored["mem"] != n {
		t.Fatalf("mem: restored %d, want %d", h.lis.restored["mem"], n)
	}
	must(t, h.task.Close())
}

func TestTimestampedChangelogFormat(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), log: NewMemoryLog()}
	h.open()
	must(t, h.tsStore().Put("a", store.MakeValueAndTimestamp(int64(7), 1234)))
	ml := h.log.(*MemoryLog)
	recs := ml.Records(TopicPartition{Topic: "app-ts-changelog", Partition: 0})
	if len(recs) != 1 || !bytes.Equal(recs[0].Value, []byte{0, 0, 0, 0, 0, 0, 0, 7}) || recs[0].Timestamp != 1234 {
		t.Fatalf("changelog record = %+v, want the raw long 7 with timestamp 1234", recs)
	}
	must(t, h.win().Put("a", 5, 3000))
	recs = ml.Records(TopicPartition{Topic: "app-win-changelog", Partition: 0})
	if want := storeapi.WindowStoreKey([]byte("a"), 3000, 0); len(recs) != 1 || !bytes.Equal(recs[0].Key, want) {
		t.Fatalf("window changelog key = %x, want %x", recs[0].Key, want)
	}
	must(t, h.sess().Put(serde.Windowed[string]{Key: "a", Window: serde.Window{Start: 10, End: 20}}, 1))
	recs = ml.Records(TopicPartition{Topic: "app-sess-changelog", Partition: 0})
	if want := storeapi.SessionStoreKey([]byte("a"), 10, 20); len(recs) != 1 || !bytes.Equal(recs[0].Key, want) {
		t.Fatalf("session changelog key = %x, want %x", recs[0].Key, want)
	}
	must(t, h.task.Close())
}

func TestExactlyOnceKeepsTransactionsInABatch(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), log: NewMemoryLog(), eos: true}
	h.open()
	h.fill(0, 20)
	must(t, h.ts.CommitTransaction()) // the Kafka transaction committed
	committed := h.dump()
	// An open transaction whose writes reach the store but never the (committed) log: the
	// process dies before committing.
	h.coll.discard = true
	h.fill(20, 5)
	if got := h.dump(); slices.Equal(got["kv"], committed["kv"]) {
		t.Fatal("writes of the open transaction are not visible to reads")
	}
	must(t, h.task.Close()) // no CommitTransaction: the batch is dropped
	h.open()
	if strings.Contains(h.buf.String(), "wiped") {
		t.Fatalf("store was wiped:\n%s", h.buf.String())
	}
	for _, s := range []string{"kv", "ts", "win", "sess"} {
		if h.lis.restored[s] != 0 {
			t.Errorf("%s: restored %d records, want none (offset committed with the data)", s, h.lis.restored[s])
		}
	}
	got := h.dump()
	for _, s := range []string{"kv", "ts", "win", "sess"} {
		if !slices.Equal(got[s], committed[s]) {
			t.Errorf("%s after crash = %q, want the committed state %q", s, got[s], committed[s])
		}
	}

	// The Kafka transaction commits but the process dies before the batch is applied: restore
	// replays only that transaction's records.
	before := count(t, h.log, TopicPartition{Topic: h.app + "-kv-changelog", Partition: 0})
	h.fill(25, 4)
	want := h.dump()
	must(t, h.task.Close())
	h.open()
	equalDumps(t, h.dump(), want)
	if n := count(t, h.log, TopicPartition{Topic: h.app + "-kv-changelog", Partition: 0}) - before; h.lis.restored["kv"] != n {
		t.Fatalf("kv: restored %d, want the %d records of the last transaction", h.lis.restored["kv"], n)
	}
	if _, err := os.Stat(filepath.Join(h.dir, CheckpointFileName)); !os.IsNotExist(err) {
		t.Fatalf("checkpoint file kept under exactly-once: %v", err)
	}
	must(t, h.task.Close())
}

func TestExactlyOnceWithoutCheckpointWipes(t *testing.T) {
	// Stores not in transactional mode (e.g. written by an at-least-once run) under a task
	// that now runs exactly-once without a checkpoint: Java's rule, wipe and restore.
	h := &harness{t: t, dir: t.TempDir(), log: NewMemoryLog()}
	h.open()
	h.fill(0, 30)
	want := h.dump()
	must(t, h.task.Close())
	// A stray write the changelog never got (uncommitted data).
	h.open()
	h.coll.discard = true
	must(t, h.kv().Put("stray", "x"))
	must(t, h.task.Close())
	_ = os.Remove(filepath.Join(h.dir, CheckpointFileName))
	h.eos = false
	h.coll = nil
	hh := &harness{t: t, dir: h.dir, log: h.log}
	hh.openWith(true)
	if !strings.Contains(hh.buf.String(), "wiped") {
		t.Fatalf("no wipe log:\n%s", hh.buf.String())
	}
	equalDumps(t, hh.dump(), want)
	must(t, hh.task.Close())
}

// openWith opens the task with stores in at-least-once mode but the TaskState in exactly-once
// mode when eosState is set.
func (h *harness) openWith(eosState bool) {
	h.t.Helper()
	h.eos = false
	h.coll = &logCollector{log: h.log}
	if h.app == "" {
		h.app = "app"
	}
	cfg := task.Config{ApplicationID: h.app, StateDir: h.dir, Collector: h.coll, AppConfigs: map[string]string{}}
	var specs []task.StoreSpec
	for _, b := range builders(h.t) {
		specs = append(specs, task.StoreSpec{Builder: b})
	}
	tk, err := task.New(processor.TaskID{}, task.Spec{Stores: specs}, cfg)
	must(h.t, err)
	must(h.t, tk.Init())
	h.buf, h.lis, h.task = &bytes.Buffer{}, newListener(), tk
	h.ts = NewTaskState(TaskStateConfig{TaskDir: h.dir, ExactlyOnce: eosState, Reader: h.log, Listener: h.lis,
		Logger: slog.New(slog.NewTextHandler(h.buf, nil))}, tk)
	h.coll.ts = h.ts
	must(h.t, h.ts.Restore(context.Background()))
}

func TestCorruptStoreIsWipedAndRestored(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), log: NewMemoryLog()}
	h.open()
	h.fill(0, 30)
	must(t, h.task.Commit())
	must(t, h.ts.Checkpoint())
	want := h.dump()
	must(t, h.task.Close())
	// Corrupt the key-value store's manifest.
	kvDir := filepath.Join(h.dir, storeapi.PebbleDirName, "kv")
	entries, err := os.ReadDir(kvDir)
	must(t, err)
	corrupted := false
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "MANIFEST-") {
			must(t, os.WriteFile(filepath.Join(kvDir, e.Name()), bytes.Repeat([]byte{0xde, 0xad}, 100), 0o644))
			corrupted = true
		}
	}
	if !corrupted {
		t.Fatalf("no manifest in %s", kvDir)
	}
	h.open() // the corrupt database is wiped at open (a warning on the store environment's logger)
	equalDumps(t, h.dump(), want)
	if n := count(t, h.log, TopicPartition{Topic: h.app + "-kv-changelog", Partition: 0}); h.lis.restored["kv"] != n {
		t.Fatalf("kv restored %d records, want all %d", h.lis.restored["kv"], n)
	}
	must(t, h.task.Close())
}

func TestTimestampedWindowRestore(t *testing.T) {
	ws, err := store.Stores.PersistentTimestampedWindowStore("tw", time.Hour, 10*time.Second, false)
	must(t, err)
	log := NewMemoryLog()
	dir := t.TempDir()
	open := func() (*task.Task, *TaskState) {
		coll := &logCollector{log: log}
		b := store.Stores.TimestampedWindowStoreBuilder(ws, serde.String(), serde.Long())
		tk, err := task.New(processor.TaskID{}, task.Spec{Stores: []task.StoreSpec{{Builder: b}}},
			task.Config{ApplicationID: "app", StateDir: dir, Collector: coll})
		must(t, err)
		must(t, tk.Init())
		ts := NewTaskState(TaskStateConfig{TaskDir: dir, Reader: log}, tk)
		coll.ts = ts
		must(t, ts.Restore(context.Background()))
		return tk, ts
	}
	tk, _ := open()
	st := tk.Store("tw").(store.TimestampedWindowStore[string, int64])
	must(t, st.Put("a", store.MakeValueAndTimestamp(int64(5), 12_345), 10_000))
	recs := log.Records(TopicPartition{Topic: "app-tw-changelog", Partition: 0})
	if len(recs) != 1 || !bytes.Equal(recs[0].Value, []byte{0, 0, 0, 0, 0, 0, 0, 5}) || recs[0].Timestamp != 12_345 {
		t.Fatalf("changelog = %+v, want the raw value with the timestamp as record timestamp", recs)
	}
	must(t, tk.Close())
	must(t, os.RemoveAll(filepath.Join(dir, storeapi.PebbleDirName)))
	tk, _ = open()
	defer tk.Close()
	st = tk.Store("tw").(store.TimestampedWindowStore[string, int64])
	v, ok, err := st.Fetch("a", 10_000)
	if err != nil || !ok || v.Value != 5 || v.Timestamp != 12_345 {
		t.Fatalf("restored %+v %v %v, want 5 @ 12345", v, ok, err)
	}
}

// A restore long enough to fill several bulk chunks (1 MiB memtables here) ingests them, ends
// with the changelog's contents (overwrites and tombstones in any key order), records the last
// offset only at its end, and the restored data survives a restart from the checkpoint.
func TestBulkRestoreIngestsChunks(t *testing.T) {
	env, err := storeapi.NewPebbleEnv(store.PebbleOptions{MaxMemTableBytes: store.MinMemTableBytes})
	must(t, err)
	defer env.Close()
	log := NewMemoryLog()
	tp := TopicPartition{Topic: "app-kv-changelog", Partition: 0}
	model := map[string]string{}
	const n = 60_000
	for i := range n {
		k := fmt.Sprintf("k%06d", (i*7919)%20_000)
		if i%13 == 5 {
			log.Append(tp, Record{Key: []byte(k)})
			delete(model, k)
			continue
		}
		v := fmt.Sprintf("v%06d-%s", i, strings.Repeat("x", 90))
		log.Append(tp, Record{Key: []byte(k), Value: []byte(v)})
		model[k] = v
	}
	var want []string
	for k, v := range model {
		want = append(want, k+"="+v)
	}
	slices.Sort(want)

	h := &harness{t: t, dir: t.TempDir(), log: log, bulkMin: 1, env: env}
	h.open()
	var got []string
	for k, v := range store.All(h.kv().All()) {
		got = append(got, k+"="+v)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("restored %d entries, want %d", len(got), len(want))
	}
	if h.lis.restored["kv"] != n || h.ts.Offsets()[tp] != n-1 {
		t.Fatalf("restored %d records to offset %d, want %d to %d", h.lis.restored["kv"], h.ts.Offsets()[tp], n, n-1)
	}
	must(t, h.task.Commit())
	must(t, h.ts.Checkpoint())
	must(t, h.task.Close())

	h.open()
	if h.lis.restored["kv"] != 0 {
		t.Fatalf("restored %d records again after a checkpoint at the end", h.lis.restored["kv"])
	}
	got = got[:0]
	for k, v := range store.All(h.kv().All()) {
		got = append(got, k+"="+v)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after restart: %d entries, want %d", len(got), len(want))
	}
	must(t, h.task.Close())
}
