package changelog

import (
	"context"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/changelog"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kstreams-go/kstreams/processor"
)

// Task is what restore needs of a task; *internal/task.Task implements it.
type Task interface {
	// ID returns the task id; its partition is the changelog partition of every store.
	ID() processor.TaskID
	// Store returns the (outermost) store named name, or nil.
	Store(name string) processor.StateStore
	// ChangelogTopics returns the changelog topic of every logged store, by store name.
	ChangelogTopics() map[string]string
	// Restore hands a batch of changelog records to the restore callback store name registered.
	Restore(name string, batch []processor.RestoreRecord) error
}

// RestoreListener is the public restore listener ([changelog.RestoreListener]).
type RestoreListener = changelog.RestoreListener

// TaskStateConfig configures a [TaskState].
type TaskStateConfig struct {
	// TaskDir is the task's state directory (<state.dir>/<application.id>/<task id>), where
	// the checkpoint file ([CheckpointFileName]) lives; "" means no checkpoint (in-memory only).
	TaskDir string
	// ExactlyOnce is true under processing.guarantee=exactly_once_v2: the checkpoint file is
	// deleted once loaded (Java does the same) and a persistent store with neither a checkpoint
	// nor an offset committed with its data is wiped and restored from the beginning.
	ExactlyOnce bool
	// Reader reads the changelogs. Required for Restore.
	Reader Reader
	// Listener, if set, is told about restore progress.
	Listener RestoreListener
	// Logger receives progress and wipe logs; nil means slog.Default().
	Logger *slog.Logger
	// MaxBatchRecords caps the records handed to a store's restore callback at once; default
	// 1000 (Java: the restore consumer's max.poll.records).
	MaxBatchRecords int
	// BulkRestoreMinRecords is the smallest restore (end offset minus start offset) that runs
	// as a bulk restore when the store's engine is a [storeapi.BulkRestorer] (the Pebble key-value
	// store: sorted table files ingested instead of memtable writes); 0 means the default
	// [DefaultBulkRestoreMinRecords], a negative value turns bulk restores off. No Java
	// counterpart.
	BulkRestoreMinRecords int
	// ProgressInterval is how often a long restore logs its progress; default 10 s.
	ProgressInterval time.Duration
	// StoreLock, when set, is held while Restore changes a store: each batch it writes, a
	// wipe, the start and end of a bulk restore; never while it waits for the broker. Readers
	// that take it too (interactive queries of a restoring task with stale stores allowed,
	// KIP-535) see each store between two batches. nil: no locking.
	StoreLock sync.Locker
}

// locked runs f holding StoreLock, if any.
func (s *TaskState) locked(f func() error) error {
	if l := s.cfg.StoreLock; l != nil {
		l.Lock()
		defer l.Unlock()
	}
	return f()
}

// TaskState manages the changelog offsets of one task's stores: it restores them from their
// changelogs (from the checkpointed offset to the end offset), tracks the offsets written
// while processing, writes the checkpoint file, and commits exactly-once transactions of the
// Pebble stores together with their offsets. Java counterpart: ProcessorStateManager plus the
// per-task part of StoreChangelogReader. Not safe for concurrent use.
type TaskState struct {
	cfg     TaskStateConfig
	task    Task
	log     *slog.Logger
	offsets map[string]int64 // store -> offset of the last record the store holds; absent = unknown
	tps     map[string]TopicPartition
}

// DefaultBulkRestoreMinRecords is the default of TaskStateConfig.BulkRestoreMinRecords: 1000
// records (a shorter restore is one batch of the default MaxBatchRecords anyway).
const DefaultBulkRestoreMinRecords = 1000

// ErrChangelogRestore is wrapped by the errors of Restore, with the store and partition.
var ErrChangelogRestore = errors.New("changelog: restore failed")

// NewTaskState returns the state manager of task, whose stores must be initialised (Init)
// before Restore is called.
func NewTaskState(cfg TaskStateConfig, task Task) *TaskState {
	if cfg.MaxBatchRecords <= 0 {
		cfg.MaxBatchRecords = 1000
	}
	if cfg.BulkRestoreMinRecords == 0 {
		cfg.BulkRestoreMinRecords = DefaultBulkRestoreMinRecords
	}
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = 10 * time.Second
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.Default()
	}
	s := &TaskState{cfg: cfg, task: task, log: lg.With("task", task.ID().String()),
		offsets: map[string]int64{}, tps: map[string]TopicPartition{}}
	for name, topic := range task.ChangelogTopics() {
		s.tps[name] = TopicPartition{Topic: topic, Partition: int32(task.ID().Partition)}
	}
	return s
}

// CheckpointPath returns the path of the task's checkpoint file ("" without a task directory).
func (s *TaskState) CheckpointPath() string {
	if s.cfg.TaskDir == "" {
		return ""
	}
	return filepath.Join(s.cfg.TaskDir, CheckpointFileName)
}

// Partitions returns the changelog partition of every logged store, by store name.
func (s *TaskState) Partitions() map[string]TopicPartition { return maps.Clone(s.tps) }

// Offsets returns the offset of the last changelog record each store holds, by changelog
// partition (only known offsets).
func (s *TaskState) Offsets() map[TopicPartition]int64 {
	out := map[TopicPartition]int64{}
	for name, off := range s.offsets {
		out[s.tps[name]] = off
	}
	return out
}

// RecordWritten records that the record at offset of changelog partition tp was written (the
// producer acknowledged it); Checkpoint and CommitTransaction use the highest offset per
// partition. Java: ProcessorStateManager.updateChangelogOffsets.
func (s *TaskState) RecordWritten(tp TopicPartition, offset int64) {
	for name, p := range s.tps {
		if p == tp {
			if cur, ok := s.offsets[name]; !ok || offset > cur {
				s.offsets[name] = offset
			}
		}
	}
}

// startOffset decides where restore of store name begins: the offset of the last record the
// store already holds, or -1 for "from the beginning" (after a wipe when needed).
func (s *TaskState) startOffset(name string, st processor.StateStore, checkpoint map[TopicPartition]int64) (int64, error) {
	tp := s.tps[name]
	if !st.Persistent() {
		s.log.Info("in-memory state store is restored from the beginning of its changelog", "store", name, "changelog", tp.String())
		return -1, nil
	}
	if w, ok := storeapi.FindWipeable(st); ok && w.WipedOnOpen() {
		return -1, nil
	}
	if t, ok := storeapi.FindTransactional(st); ok && t.Transactional() {
		off, found, err := t.CommittedOffset()
		if err != nil {
			return 0, err
		}
		if found {
			s.log.Info("state store initialized from the changelog offset committed with its data (exactly-once)",
				"store", name, "changelog", tp.String(), "offset", off)
			return off, nil
		}
	}
	if off, ok := checkpoint[tp]; ok && off != OffsetUnknown {
		s.log.Info("state store initialized from checkpoint", "store", name, "changelog", tp.String(), "offset", off)
		return off, nil
	}
	if s.cfg.ExactlyOnce {
		if w, ok := storeapi.FindWipeable(st); ok {
			empty, err := w.IsEmpty()
			if err != nil {
				return 0, err
			}
			if !empty {
				s.log.Warn("state store has no checkpoint offset and is not empty: under exactly-once it may hold "+
					"uncommitted data, so its local state is wiped and restored from the changelog",
					"store", name, "changelog", tp.String())
				if err := s.locked(w.Wipe); err != nil {
					return 0, err
				}
			}
		}
		return -1, nil
	}
	s.log.Info("state store has no checkpoint offset: restoring from the beginning of its changelog", "store", name, "changelog", tp.String())
	return -1, nil
}

// Restore restores every logged store of the task from its changelog, from the offset after
// the one it holds (checkpoint file, or the offset committed with a Pebble store's data under
// exactly-once; a checkpoint an earlier version of this library left at Java's place is
// read once and moved, see loadCheckpoint) to the end offset, in batches of at most MaxBatchRecords records that the
// store writes straight into its engine (or, for a long restore of an engine that is a
// [storeapi.BulkRestorer], as a bulk restore whose offset is recorded only once it ended); no more
// than four fetch responses are held in memory. Under
// exactly-once the checkpoint file is deleted afterwards, as Java does. A checkpointed offset
// outside the log (the changelog was truncated or recreated) wipes the store and restores it
// from the beginning, with a warning. Before a persistent store is restored from the beginning
// (no local state, wiped), its entry is removed from the checkpoint file, so that a restore
// that stops in the middle is not taken for a complete one at the next start.
// Errors wrap ErrChangelogRestore with the store and partition (reader, store or ctx errors).
func (s *TaskState) Restore(ctx context.Context) error {
	if s.cfg.Reader == nil {
		return fmt.Errorf("%w: no changelog reader", ErrChangelogRestore)
	}
	checkpoint := map[TopicPartition]int64{}
	if p := s.CheckpointPath(); p != "" {
		cp, err := s.loadCheckpoint()
		if err != nil {
			// Java treats an unreadable checkpoint as a corrupted task: wipe and restore.
			s.log.Warn("checkpoint file is unreadable: every persistent store of the task is wiped and restored", "file", p, "error", err)
			for name := range s.tps {
				if st := s.task.Store(name); st != nil {
					if w, ok := storeapi.FindWipeable(st); ok {
						if err := s.locked(w.Wipe); err != nil {
							return fmt.Errorf("%w: store %q: wipe: %v", ErrChangelogRestore, name, err)
						}
					}
				}
			}
		} else {
			checkpoint = cp
		}
	}
	names := slices.Sorted(maps.Keys(s.tps))
	for _, name := range names {
		st := s.task.Store(name)
		if st == nil {
			continue
		}
		start, err := s.startOffset(name, st, checkpoint)
		if err != nil {
			return fmt.Errorf("%w: store %q (%s): %v", ErrChangelogRestore, name, s.tps[name], err)
		}
		if err := s.restoreStore(ctx, name, st, start, checkpoint); err != nil {
			return fmt.Errorf("%w: store %q (%s): %w", ErrChangelogRestore, name, s.tps[name], err)
		}
	}
	if s.cfg.ExactlyOnce {
		if p := s.CheckpointPath(); p != "" {
			if err := WriteCheckpoint(p, nil); err != nil {
				return fmt.Errorf("%w: delete checkpoint: %v", ErrChangelogRestore, err)
			}
		}
	}
	return nil
}

// loadCheckpoint reads the task's checkpoint file. When there is none, a checkpoint an
// earlier version of this library left at Java's place (<task>/.checkpoint) is read once as
// ours, written to our place and deleted, so that a Java instance started on the directory
// later never takes our offsets for its own; but when the task directory holds Java Kafka
// Streams' stores (see javaState), that file is Java's, and it is neither read nor touched:
// its offsets are those of Java's RocksDB stores, not of our Pebble stores.
func (s *TaskState) loadCheckpoint() (map[TopicPartition]int64, error) {
	p := s.CheckpointPath()
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		return ReadCheckpoint(p)
	}
	legacy := filepath.Join(s.cfg.TaskDir, JavaCheckpointFileName)
	if _, err := os.Stat(legacy); errors.Is(err, fs.ErrNotExist) {
		return map[TopicPartition]int64{}, nil
	}
	if java := s.javaState(); java != "" {
		s.log.Info("the task directory holds Java Kafka Streams state: its .checkpoint is Java's and is neither read "+
			"nor changed; our stores start from their own offsets", "dir", s.cfg.TaskDir, "java", java)
		return map[TopicPartition]int64{}, nil
	}
	cp, err := ReadCheckpoint(legacy)
	if err != nil {
		// Unreadable: the stores are wiped and restored (as for our own file); the file goes,
		// so that the next start does not wipe them again.
		_ = os.Remove(legacy)
		return nil, err
	}
	if err := WriteCheckpoint(p, cp); err != nil {
		return nil, err
	}
	if err := os.Remove(legacy); err != nil {
		return nil, err
	}
	s.log.Info("moved the checkpoint of an earlier kstreams-go version from Java's place to ours",
		"from", legacy, "to", p, "offsets", len(cp))
	return cp, nil
}

// javaState returns the name of the first entry of the task directory that Java Kafka
// Streams creates for its stores and this library never does ("rocksdb" for key-value
// stores, a directory named after a logged store for window and session stores, a
// ".checkpoint_<store>" file of Kafka Streams 4.3+), or "" when there is none.
func (s *TaskState) javaState() string {
	entries, err := os.ReadDir(s.cfg.TaskDir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		name := e.Name()
		_, logged := s.tps[name]
		switch {
		case e.IsDir() && (name == "rocksdb" || logged):
			return name
		case strings.HasPrefix(name, JavaCheckpointFileName+"_"):
			return name
		}
	}
	return ""
}

// dropCheckpointed removes tp from the task's checkpoint file (checkpoint holds what the file
// held) when it names it, before tp's store is restored from the beginning: should that restore
// stop in the middle (a broker error, a crash), the offset in the file would pass the partly
// restored store off as holding everything up to it at the next start, and the records before
// it that were not restored yet would be lost.
func (s *TaskState) dropCheckpointed(checkpoint map[TopicPartition]int64, tp TopicPartition) error {
	p := s.CheckpointPath()
	if _, ok := checkpoint[tp]; !ok || p == "" {
		return nil
	}
	delete(checkpoint, tp)
	return WriteCheckpoint(p, checkpoint)
}

func (s *TaskState) restoreStore(ctx context.Context, name string, st processor.StateStore, held int64, checkpoint map[TopicPartition]int64) error {
	tp := s.tps[name]
	r := s.cfg.Reader
	end, err := r.EndOffset(ctx, tp)
	if err != nil {
		return err
	}
	begin, err := r.BeginningOffset(ctx, tp)
	if err != nil {
		return err
	}
	pos := held + 1
	if held >= 0 && (pos < begin || pos > end) {
		s.log.Warn("checkpointed offset is outside the changelog: wiping the store and restoring from the beginning",
			"store", name, "changelog", tp.String(), "offset", held, "logStart", begin, "logEnd", end)
		if w, ok := storeapi.FindWipeable(st); ok {
			if err := s.locked(w.Wipe); err != nil {
				return err
			}
		}
		held, pos = -1, begin
	}
	if held < 0 {
		pos = begin
		delete(s.offsets, name)
		if st.Persistent() {
			if err := s.dropCheckpointed(checkpoint, tp); err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
		}
	} else {
		s.offsets[name] = held
	}
	if pos >= end {
		s.log.Debug("state store is up to date with its changelog", "store", name, "changelog", tp.String(), "end", end)
		return nil
	}
	timestamped := storeapi.IsTimestamped(st)
	if s.cfg.Listener != nil {
		s.cfg.Listener.OnRestoreStart(tp, name, pos, end)
	}
	s.log.Info("restoring state store from changelog", "store", name, "changelog", tp.String(), "from", pos, "to", end)
	started := time.Now()
	lastLog := started
	var total int64
	// A long restore into an engine that supports it runs as a bulk restore: the store may hold
	// records back until EndBulkRestore, so the offset of the last record restored is recorded
	// (and can reach a checkpoint) only after that.
	var bulk storeapi.BulkRestorer
	if minRecs := s.cfg.BulkRestoreMinRecords; minRecs >= 0 && end-pos >= int64(max(minRecs, 1)) {
		if b, ok := storeapi.FindBulkRestorer(st); ok {
			if err := s.locked(b.BeginBulkRestore); err != nil {
				return err
			}
			bulk = b
			defer func() {
				if bulk != nil {
					_ = s.locked(func() error { bulk.AbortBulkRestore(); return nil })
				}
			}()
		}
	}
	var bulkLast int64
	// apply hands batch to the store.
	apply := func(batch []Record) error {
		// A cancelled restore (the task was revoked or the instance closes) stops at the next
		// batch: the rest of a fetch already in hand is not applied.
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.locked(func() error { return s.task.Restore(name, batch) }); err != nil {
			return err
		}
		last := batch[len(batch)-1].Offset
		if bulk == nil {
			s.offsets[name] = last
		} else {
			bulkLast = last
		}
		total += int64(len(batch))
		if s.cfg.Listener != nil {
			s.cfg.Listener.OnBatchRestored(tp, name, last, int64(len(batch)))
		}
		return nil
	}
	// Fetches run ahead of the one being applied (as a Kafka consumer prefetches), so broker
	// round trips overlap the Pebble writes: at most prefetchDepth+2 fetch responses are held
	// (one applied, prefetchDepth queued, one being fetched).
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fetched := make(chan fetchResult, prefetchDepth)
	// The record slices of an AppendReader are restore's: their records are completed in place
	// (partition, timestamped value) and handed to the store in batches as they are, then the
	// slices go back to the prefetcher, cleared first so that they keep no fetch response
	// alive. A plain Reader's slices are its own (it may keep them): their records are copied.
	_, recycle := r.(AppendReader)
	free := make(chan []Record, prefetchDepth+2)
	var own []Record
	go prefetch(fctx, r, tp, pos, end, fetched, free)
	for pos < end {
		// Checked first: with a fetch ready too, the select below would pick at random.
		if err := ctx.Err(); err != nil {
			return err
		}
		var f fetchResult
		select {
		case f = <-fetched:
		case <-ctx.Done():
			return ctx.Err()
		}
		if f.err != nil {
			return f.err
		}
		recs, next := f.recs, f.next
		n := len(recs)
		for n > 0 && recs[n-1].Offset >= end {
			n--
		}
		batch := recs[:n]
		if !recycle {
			own = append(own[:0], batch...)
			batch = own
		}
		for i := range batch {
			batch[i].Partition = tp.Partition
			if timestamped {
				batch[i].Value = storeapi.ToTimestampedValue(batch[i].Value, batch[i].Timestamp)
			}
		}
		for len(batch) > 0 {
			k := min(len(batch), s.cfg.MaxBatchRecords)
			if err := apply(batch[:k]); err != nil {
				return err
			}
			batch = batch[k:]
		}
		if recycle {
			clear(recs)
			select {
			case free <- recs[:0]:
			default:
			}
		} else {
			clear(own)
		}
		if next > pos {
			pos = next
		}
		if now := time.Now(); now.Sub(lastLog) >= s.cfg.ProgressInterval {
			lastLog = now
			s.log.Info("restore progress", "store", name, "changelog", tp.String(), "restored", total, "position", pos, "end", end)
		}
	}
	if bulk != nil {
		b := bulk
		bulk = nil
		if err := s.locked(b.EndBulkRestore); err != nil {
			return err
		}
		if total > 0 {
			s.offsets[name] = bulkLast
		}
	}
	if s.cfg.Listener != nil {
		s.cfg.Listener.OnRestoreEnd(tp, name, total)
	}
	s.log.Info("finished restoring state store", "store", name, "changelog", tp.String(), "restored", total,
		"duration", time.Since(started).Round(time.Millisecond).String())
	return nil
}

// prefetchDepth is the number of fetched responses queued ahead of the one being applied.
const prefetchDepth = 2

type fetchResult struct {
	recs []Record
	next int64
	err  error
}

// prefetch fetches from pos until end (or an error, or ctx ends), sending each result to out;
// with an AppendReader it decodes into a slice taken from free when there is one.
func prefetch(ctx context.Context, r Reader, tp TopicPartition, pos, end int64, out chan<- fetchResult, free <-chan []Record) {
	ar, _ := r.(AppendReader)
	for pos < end {
		var recs []Record
		var next int64
		var err error
		if ar != nil {
			var buf []Record
			select {
			case buf = <-free:
			default:
			}
			recs, next, err = ar.FetchAppend(ctx, tp, pos, buf)
		} else {
			recs, next, err = r.Fetch(ctx, tp, pos)
		}
		select {
		case out <- fetchResult{recs: recs, next: next, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
		if next > pos {
			pos = next
		}
	}
}

// Checkpoint writes the task's checkpoint file: for every logged persistent store, the offset
// of the last changelog record it holds (OffsetUnknown when not known), as Java's
// ProcessorStateManager.checkpoint does. Call it after the stores were flushed and the producer
// flushed (at-least-once: on every commit; exactly-once: only on a clean close, as Java).
// Without a task directory it does nothing.
func (s *TaskState) Checkpoint() error {
	p := s.CheckpointPath()
	if p == "" {
		return nil
	}
	offsets := map[TopicPartition]int64{}
	for name, tp := range s.tps {
		st := s.task.Store(name)
		if st == nil || !st.Persistent() {
			continue
		}
		if off, ok := s.offsets[name]; ok {
			offsets[tp] = off
		} else {
			offsets[tp] = OffsetUnknown
		}
	}
	return WriteCheckpoint(p, offsets)
}

// CommitTransaction is called after the Kafka transaction committed (exactly-once): every
// Pebble store of the task applies the writes it kept in its transaction batch together with
// the offset of the last changelog record written for it, in one atomic Pebble write. Under
// at-least-once it records the offsets with the data (harmless; restore uses the checkpoint).
func (s *TaskState) CommitTransaction() error {
	for name := range s.tps {
		st := s.task.Store(name)
		if st == nil {
			continue
		}
		if t, ok := storeapi.FindTransactional(st); ok {
			off, known := s.offsets[name]
			if !known {
				off = -1
			}
			if err := t.CommitTransaction(off); err != nil {
				return fmt.Errorf("changelog: commit store %q: %w", name, err)
			}
		}
	}
	return nil
}

// AbortTransaction drops the transaction batches of the task's Pebble stores (after the Kafka
// transaction was aborted). The task must then be closed and revived, as Java does, because
// its in-memory state (offsets written, caches) is no longer valid.
func (s *TaskState) AbortTransaction() error {
	for name := range s.tps {
		if st := s.task.Store(name); st != nil {
			if t, ok := storeapi.FindTransactional(st); ok {
				if err := t.AbortTransaction(); err != nil {
					return fmt.Errorf("changelog: abort store %q: %w", name, err)
				}
			}
		}
	}
	return nil
}
