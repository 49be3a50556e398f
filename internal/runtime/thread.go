package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams/changelog"
	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// partBuf is the bounded hand-over of one assigned partition from its claim goroutine to the
// processing loop. When it is full the claim goroutine blocks, sarama's fetch channel fills
// and fetching that partition pauses.
type partBuf struct {
	id processor.TaskID
	ch chan *sarama.ConsumerMessage
	// next is the offset after the last record received, or -1 before the first; progress is
	// when (unix ms) the claim started or the stall check last saw next move (so the claim does
	// not read the clock per record). Both atomic: written by the claim goroutine, read by the
	// stall check. seenNext, owned by the processing loop, is next at the last stall check.
	next     atomic.Int64
	progress atomic.Int64
	seenNext int64
	// claim is the partition's sarama.ConsumerGroupClaim once its ConsumeClaim started; start
	// the offset fetching started at (-1 until known). pos, owned by the processing loop, is the
	// offset after the last record moved into the task (-1 before the first): the consumer
	// position of the fetched lag. probe, probing and lastProbe track lag probes (idle.go).
	claim     atomic.Value
	start     atomic.Int64
	pos       int64
	probe     atomic.Pointer[lagProbe]
	probing   atomic.Bool
	lastProbe atomic.Int64
	lagGauge  prometheus.Gauge
}

// Stall detection: a partition that delivered nothing for stallAfter while the broker has
// records beyond it (or cannot be asked) counts as stuck; the thread then rebuilds its
// consumer-group client (sarama can keep a dead broker connection after a broker restart).
const (
	stallAfter      = 30 * time.Second
	stallCheckEvery = 5 * time.Second
)

// thread is a stream thread: one consumer-group member, one producer, its active tasks.
// Java: StreamThread with its TaskManager.
type thread struct {
	rt   *Runtime
	idx  int
	name string
	log  *slog.Logger

	client sarama.Client
	group  sarama.ConsumerGroup
	// cluster is the producer's view of the cluster; producer the batch-level producer every
	// record of the thread's tasks goes to (output.go).
	cluster  *kafka.Cluster
	producer *produce.Producer
	assignor *assignor
	topics   []string

	ctx  context.Context
	done chan struct{}

	// tasks are the active tasks, running or suspended between sessions, with their changelog
	// state (restore, checkpoints, exactly-once store transactions).
	tasks  map[processor.TaskID]*task.Task
	states map[processor.TaskID]*changelog.TaskState
	// changelogOwner maps a changelog partition to the task writing it.
	changelogOwner map[changelog.TopicPartition]processor.TaskID
	reader         changelog.Reader
	cache          *cache.ThreadCache
	// standbys are the standby tasks (num.standby.replicas).
	standbys    map[processor.TaskID]*standbyTask
	lastStandby time.Time
	// running are the tasks of the current session, readable by interactive queries.
	mu      sync.Mutex
	running map[processor.TaskID]*task.Task
	// storeMu is held by the thread while it processes, punctuates, commits or closes its
	// active tasks, and by interactive queries while they read a store of one of them: the
	// stores and the thread's record cache are not safe for concurrent use. Java: the caching
	// layer's lock and the synchronized in-memory stores.
	storeMu sync.Mutex

	parts  map[string]map[int32]*partBuf
	inputs map[processor.TaskID][]taskInput
	idle   idleState
	wake   chan struct{}
	// sent counts the records handed to the producer; discarded those the collector dropped
	// because discard was set (while tasks close dirty, or after a clean close's checkpoint).
	sent, discarded int64
	// txnOpen: under exactly-once, the producer's transaction is open.
	txnOpen        bool
	discard        bool
	fatalErr       error
	migrated       bool
	stalled        bool
	sconf          *sarama.Config
	lastStallCheck time.Time
	endSess        context.CancelFunc
	loopDone       chan error
	// checkpointed holds, per active task, the changelog offsets of its last checkpoint
	// (see checkpointDue).
	checkpointed map[processor.TaskID]map[changelog.TopicPartition]int64
	// sessMu guards inSession, joinClosed and memberID: interruptJoin checks and closes under
	// it, Setup starts a session under it.
	sessMu sync.Mutex
	// inSession is true from Setup to the end of Cleanup: the thread holds tasks of a
	// consumer-group session (false while it joins the group).
	inSession bool
	// joinClosed is set when interruptJoin closed the group client: no session may start.
	joinClosed bool
	// memberID is the group member id of the last session (for interruptJoin's LeaveGroup).
	memberID string
}

func newThread(r *Runtime, idx int) (*thread, error) {
	th := &thread{rt: r, idx: idx, name: fmt.Sprintf("%s-StreamThread-%d", r.cfg.ClientID, idx+1),
		ctx: r.ctx, done: make(chan struct{}), tasks: map[processor.TaskID]*task.Task{},
		states: map[processor.TaskID]*changelog.TaskState{}, changelogOwner: map[changelog.TopicPartition]processor.TaskID{},
		standbys: map[processor.TaskID]*standbyTask{},
		running:  map[processor.TaskID]*task.Task{}, wake: make(chan struct{}, 1)}
	th.log = r.log.With("thread", th.name)
	for _, s := range r.layout.Subtopologies {
		th.topics = append(th.topics, s.Topics...)
	}
	th.assignor = &assignor{subs: r.layout.Subtopologies,
		self:     subscription{ProcessID: r.cfg.ProcessID, Thread: idx, Host: r.cfg.ApplicationServer},
		onAssign: r.setHosts, standbys: r.cfg.NumStandbyReplicas, errCode: &r.shutdown.code}
	sc := r.cfg.Sarama()
	sc.ClientID = th.name
	sc.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{th.assignor}
	sc.Consumer.Offsets.AutoCommit.Enable = false
	sc.Consumer.Offsets.Initial = sarama.OffsetOldest
	sc.Consumer.Return.Errors = true
	sc.Consumer.Fetch.Default = 1 << 20
	if r.cfg.ExactlyOnce {
		sc.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	// The broker holds a JoinGroup answer until every member has rejoined or left, up to the
	// rebalance timeout: a shorter read timeout makes the member give up on a join in progress
	// and start over, prolonging the rebalance. Java's consumer waits rebalance.timeout.ms +
	// 5 s for JoinGroup; sarama has one read timeout per client, so this client gets it.
	if min := sc.Consumer.Group.Rebalance.Timeout + 5*time.Second; sc.Net.ReadTimeout < min {
		sc.Net.ReadTimeout = min
	}
	th.sconf = sc
	var err error
	if th.client, err = sarama.NewClient(r.cfg.Brokers, sc); err != nil {
		return nil, fmt.Errorf("%s: client: %w", th.name, err)
	}
	if th.group, err = sarama.NewConsumerGroupFromClient(r.cfg.ApplicationID, th.client); err != nil {
		th.client.Close()
		return nil, fmt.Errorf("%s: consumer group: %w", th.name, err)
	}
	th.reader = changelog.NewSaramaReader(th.client, r.cfg.ExactlyOnce)
	if r.cfg.CacheMaxBytes > 0 {
		th.cache = cache.New(r.cfg.CacheMaxBytes / int64(max(r.cfg.Threads, 1)))
	}
	if err := th.newProducer(); err != nil {
		th.group.Close()
		th.client.Close()
		return nil, err
	}
	th.drainErrors()
	return th, nil
}

func (th *thread) drainErrors() {
	g := th.group
	go func() {
		for err := range g.Errors() {
			th.log.Warn("consumer group error", "error", err)
		}
	}()
}

// rebuildGroup replaces the consumer-group member and its client (and the changelog reader
// using it) by new ones.
func (th *thread) rebuildGroup() error {
	th.group.Close()
	th.client.Close()
	client, err := sarama.NewClient(th.rt.cfg.Brokers, th.sconf)
	if err != nil {
		return err
	}
	group, err := sarama.NewConsumerGroupFromClient(th.rt.cfg.ApplicationID, client)
	if err != nil {
		client.Close()
		return err
	}
	th.mu.Lock()
	th.client, th.group = client, group
	th.mu.Unlock()
	th.reader = changelog.NewSaramaReader(client, th.rt.cfg.ExactlyOnce)
	th.drainErrors()
	return nil
}

// checkStall looks for partitions that delivered nothing for stallAfter although the broker
// has records beyond them; it reports whether consumption is stuck.
func (th *thread) checkStall() bool {
	now := time.Now()
	if now.Sub(th.lastStallCheck) < stallCheckEvery {
		return false
	}
	th.lastStallCheck = now
	for topic, ps := range th.parts {
		for p, pb := range ps {
			if n := pb.next.Load(); n != pb.seenNext {
				pb.seenNext = n // records arrived since the last check
				pb.progress.Store(now.UnixMilli())
				continue
			}
			if now.Sub(time.UnixMilli(pb.progress.Load())) < stallAfter {
				continue
			}
			if len(pb.ch) > 0 {
				continue // records are waiting here: not a fetch problem
			}
			next := pb.next.Load()
			if next < 0 { // no record yet and no committed offset: the log start
				if oldest, err := th.client.GetOffset(topic, p, sarama.OffsetOldest); err == nil {
					next = oldest
				}
			}
			end, err := th.client.GetOffset(topic, p, sarama.OffsetNewest)
			if err == nil && end > next {
				// Beyond next there may be only transaction markers and aborted records.
				var deliverable bool
				if deliverable, err = th.hasDeliverable(topic, p, next); err == nil && !deliverable {
					pb.progress.Store(now.UnixMilli()) // caught up: look again after stallAfter
					continue
				}
			}
			if err != nil || end > next {
				th.log.Warn("partition delivers nothing although the broker has records", "topic", topic,
					"partition", p, "next", next, "end", end, "error", err)
				return true
			}
		}
	}
	return false
}

func (th *thread) setState(st ThreadState) {
	if th.rt.cfg.OnState != nil {
		th.rt.cfg.OnState(th.idx, st)
	}
}

// run is the thread's main loop: sessions of the consumer group until the runtime stops.
func (th *thread) run() {
	defer close(th.done)
	th.setState(ThreadStarting)
	backoff := 100 * time.Millisecond
	for th.ctx.Err() == nil {
		cctx, cancel := context.WithCancel(th.ctx)
		th.endSess = cancel
		err := th.group.Consume(cctx, th.topics, th)
		cancel()
		if th.fatalErr != nil {
			ferr := th.fatalErr
			th.fatalErr = nil
			th.closeTasks(false)
			th.resetProducer()
			if !th.rt.threadFailed(th.idx, ferr) {
				break
			}
			continue
		}
		if th.stalled {
			th.stalled = false
			th.log.Warn("partition consumption stalled; rebuilding the consumer-group client")
			th.closeTasks(false)
			th.resetProducer()
			if err := th.rebuildGroup(); err != nil {
				th.log.Warn("rebuilding the consumer-group client failed; retrying", "error", err)
				th.stalled = true
				select {
				case <-th.ctx.Done():
				case <-time.After(time.Second):
				}
			}
			continue
		}
		if th.migrated {
			th.migrated = false
			th.log.Info("tasks migrated; closing them dirty and rejoining")
			th.closeTasks(false)
			th.resetProducer()
			continue
		}
		if err != nil {
			if errors.Is(err, sarama.ErrClosedConsumerGroup) {
				break
			}
			th.log.Warn("consumer group session failed; retrying", "error", err, "backoff", backoff)
			select {
			case <-th.ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		if th.ctx.Err() == nil {
			th.setState(ThreadRebalancing)
		}
	}
	th.setState(ThreadPendingShutdown)
	th.shutdown()
	th.setState(ThreadDead)
}

// shutdown closes the tasks (committed by the last session's cleanup), leaves the group and
// closes the clients.
func (th *thread) shutdown() {
	th.closeTasks(true)
	for id := range th.standbys {
		th.closeStandby(id, true)
	}
	th.reportTasks()
	if th.group != nil {
		th.group.Close()
	}
	th.closeProducer()
	if th.cluster != nil {
		th.cluster.Close()
	}
	if th.client != nil {
		th.client.Close()
	}
}

// closeTasks closes every task; a dirty close drops what they produce while closing.
func (th *thread) closeTasks(clean bool) {
	th.mu.Lock()
	th.running = map[processor.TaskID]*task.Task{}
	th.mu.Unlock()
	th.discard = !clean
	for id := range th.tasks {
		th.closeTask(id, clean)
	}
	th.discard = false
	th.assignor.setOwned(nil)
	th.reportTasks()
}

func (th *thread) reportTasks() {
	if m := th.rt.cfg.Metrics; m != nil {
		m.tasks.WithLabelValues(th.name).Set(float64(len(th.tasks)))
		m.standbyTasks.WithLabelValues(th.name).Set(float64(len(th.standbys)))
	}
}

// Setup implements sarama.ConsumerGroupHandler: it closes suspended tasks that were not
// reassigned, creates and restores new ones, and starts the processing loop.
func (th *thread) Setup(sess sarama.ConsumerGroupSession) error {
	th.sessMu.Lock()
	if th.joinClosed {
		th.sessMu.Unlock()
		return errJoinInterrupted
	}
	th.inSession, th.memberID = true, sess.MemberID()
	th.sessMu.Unlock()
	th.setState(ThreadRebalancing)
	th.checkShutdownAssignment()
	assigned := map[processor.TaskID]bool{}
	th.parts = map[string]map[int32]*partBuf{}
	for topic, ps := range sess.Claims() {
		sub, ok := th.rt.SubtopologyOf(topic)
		if !ok {
			continue
		}
		th.parts[topic] = map[int32]*partBuf{}
		for _, p := range ps {
			id := processor.TaskID{Subtopology: sub, Partition: int(p)}
			assigned[id] = true
			pb := &partBuf{id: id, ch: make(chan *sarama.ConsumerMessage, th.rt.cfg.MaxBufferedPerPartition)}
			pb.next.Store(-1)
			pb.seenNext = -1
			pb.start.Store(-1)
			pb.pos = -1
			pb.progress.Store(time.Now().UnixMilli())
			th.parts[topic][p] = pb
		}
	}
	for id, t := range th.tasks {
		if !assigned[id] {
			// Revoked: committed at the end of the last session; checkpoint and close.
			th.closeTask(id, true)
		} else {
			t.ClearQueues()
		}
	}
	// Standby tasks: promote the ones now active here, close the ones no longer assigned,
	// create the new ones.
	standby := map[processor.TaskID]bool{}
	for _, s := range th.assignor.lastAssignment().Standby {
		if id, ok := parseTaskID(s); ok {
			standby[id] = true
		}
	}
	for id := range th.standbys {
		if assigned[id] {
			if err := th.promote(sess.Context(), id); err != nil {
				th.log.Warn("promoting standby failed; restoring the task instead", "task", id.String(), "error", err)
				th.closeStandby(id, false)
			}
		} else if !standby[id] {
			th.closeStandby(id, true)
		}
	}
	for id := range standby {
		if th.standbys[id] != nil || assigned[id] {
			continue
		}
		sb, err := th.createStandby(sess.Context(), id)
		if err != nil {
			th.log.Warn("cannot create standby task", "task", id.String(), "error", err)
			continue
		}
		th.standbys[id] = sb
	}
	th.assignor.setOwnedStandby(th.standbyIDs())
	ids := make([]processor.TaskID, 0, len(assigned))
	for id := range assigned {
		ids = append(ids, id)
		if th.tasks[id] != nil {
			continue
		}
		t, err := th.createTask(sess.Context(), id)
		if err != nil {
			if sess.Context().Err() != nil {
				return err
			}
			var ke *KafkaError
			if errors.As(err, &ke) {
				th.log.Warn("restore failed; rejoining", "task", id.String(), "error", err)
				th.migrated = true
			} else {
				th.fatalErr = err
			}
			th.endSess()
			return err
		}
		th.tasks[id] = t
	}
	sortTasks(ids)
	th.declareInputs()
	th.assignor.setOwned(ids)
	th.reportTasks()
	th.mu.Lock()
	th.running = map[processor.TaskID]*task.Task{}
	for id, t := range th.tasks {
		th.running[id] = t
	}
	th.mu.Unlock()
	th.log.Debug("assigned tasks", "tasks", fmt.Sprint(ids), "generation", sess.GenerationID())
	th.loopDone = make(chan error, 1)
	go func() {
		th.loopDone <- th.loop(sess)
	}()
	th.setState(ThreadRunning)
	return nil
}

// createTask builds a task of the sub-topology, initialises it, restores its stores from
// their changelogs and registers it as active.
func (th *thread) createTask(ctx context.Context, id processor.TaskID) (*task.Task, error) {
	t, ts, err := th.newTask(ctx, id)
	if err != nil {
		return nil, err
	}
	th.states[id] = ts
	for _, tp := range ts.Partitions() {
		th.changelogOwner[tp] = id
	}
	return t, nil
}

// newTask builds and initialises a task and restores its stores (from the checkpoint or the
// offset stored with the data, to the end offset; read_committed under exactly-once).
func (th *thread) newTask(ctx context.Context, id processor.TaskID) (*task.Task, *changelog.TaskState, error) {
	r := th.rt
	spec, err := task.SpecFromTopology(r.cfg.Topology, r.cfg.ApplicationID, []int{id.Subtopology})
	if err != nil {
		return nil, nil, err
	}
	if err := r.lockTask(ctx, id, th.idx); err != nil {
		return nil, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			r.unlockTask(id, th.idx)
		}
	}()
	cfg := r.cfg.Task
	cfg.Collector = collector{th}
	cfg.StateDir = r.taskDir(id)
	cfg.Logger = th.log
	cfg.Cache = th.cache
	cfg.PebbleEnv = r.pebble
	if cfg.StateDir != "" {
		if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("task %s: state directory: %w", id, err)
		}
	}
	t, err := task.New(id, spec, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := t.Init(); err != nil {
		t.Close()
		return nil, nil, err
	}
	ts := changelog.NewTaskState(changelog.TaskStateConfig{TaskDir: cfg.StateDir, ExactlyOnce: r.cfg.ExactlyOnce,
		Reader: th.reader, Listener: restoreCounter{th}, Logger: th.log}, t)
	if err := ts.Restore(ctx); err != nil {
		t.Close()
		return nil, nil, kafkaErr(fmt.Sprintf("task %s: restore", id), err)
	}
	ok = true
	return t, ts, nil
}

// closeTask closes a task. A clean close checkpoints its stores (the task was committed);
// a dirty close aborts the stores' open exactly-once transaction and writes no checkpoint, so
// the next owner restores from the last committed state.
func (th *thread) closeTask(id processor.TaskID, clean bool) {
	th.storeMu.Lock()
	defer th.storeMu.Unlock()
	t, ts := th.tasks[id], th.states[id]
	th.mu.Lock()
	if th.running[id] == t {
		delete(th.running, id)
	}
	th.mu.Unlock()
	if ts != nil {
		var err error
		if clean {
			// The final commit left no cache dirty; should the store flush still forward
			// records, they are sent (and committed) before the checkpoint claims them.
			before := th.sent
			if err = th.flushStores(id); err == nil {
				if err = th.sendClosing(id, th.sent-before); err == nil {
					th.writeCheckpoint(id)
				}
			}
		} else if th.rt.cfg.ExactlyOnce {
			err = ts.AbortTransaction()
		}
		if err != nil {
			th.log.Warn("closing task: changelog state", "task", id.String(), "error", err)
		}
		for tp, owner := range th.changelogOwner {
			if owner == id {
				delete(th.changelogOwner, tp)
			}
		}
	}
	if t != nil {
		// Records forwarded by the close itself (a processor's Close, a store's close) come
		// after the checkpoint: the task is gone, so they cannot be sent for it any more.
		discard, dropped := th.discard, th.discarded
		th.discard = true
		if err := t.Close(); err != nil {
			th.log.Warn("closing task", "task", id.String(), "error", err)
		}
		if n := th.discarded - dropped; clean && n > 0 {
			th.log.Error("dropping records forwarded while closing the task", "task", id.String(), "records", n)
		}
		th.discard = discard
	}
	delete(th.tasks, id)
	delete(th.states, id)
	delete(th.checkpointed, id)
	if t != nil && th.standbys[id] == nil {
		th.rt.unlockTask(id, th.idx)
	}
}

// sendClosing waits for the acknowledgements of the n records that closing task id cleanly
// forwarded (its store flush); under exactly-once it commits them in a transaction of their own
// and applies the task's store transaction, so the checkpoint written next covers them.
// Records produced before (none after a final commit) go along.
func (th *thread) sendClosing(id processor.TaskID, n int64) error {
	if n == 0 {
		return nil
	}
	th.log.Debug("sending records forwarded while closing the task", "task", id.String(), "records", n)
	if err := th.flushOutput(); err != nil {
		return err
	}
	if !th.rt.cfg.ExactlyOnce || !th.txnOpen {
		return nil
	}
	if err := th.commitTxn(); err != nil {
		return err
	}
	if ts := th.states[id]; ts != nil {
		if err := ts.CommitTransaction(); err != nil {
			return fmt.Errorf("task %s: commit store transaction: %w", id, err)
		}
	}
	return nil
}

// restoreCounter counts restored records in the metrics.
type restoreCounter struct{ th *thread }

// It forwards every event to the application's restore listener, if any.
func (r restoreCounter) OnRestoreStart(tp changelog.TopicPartition, store string, start, end int64) {
	r.th.log.Debug("restoring", "store", store, "changelog", tp.String(), "from", start, "to", end)
	if l := r.th.rt.cfg.RestoreListener; l != nil {
		l.OnRestoreStart(tp, store, start, end)
	}
}
func (r restoreCounter) OnBatchRestored(tp changelog.TopicPartition, store string, last, n int64) {
	if m := r.th.rt.cfg.Metrics; m != nil {
		m.restored.WithLabelValues(r.th.name).Add(float64(n))
	}
	if l := r.th.rt.cfg.RestoreListener; l != nil {
		l.OnBatchRestored(tp, store, last, n)
	}
}
func (r restoreCounter) OnRestoreEnd(tp changelog.TopicPartition, store string, total int64) {
	r.th.log.Debug("restored", "store", store, "changelog", tp.String(), "records", total)
	if l := r.th.rt.cfg.RestoreListener; l != nil {
		l.OnRestoreEnd(tp, store, total)
	}
}

// Cleanup implements sarama.ConsumerGroupHandler: it waits for the processing loop, which
// commits on its way out.
func (th *thread) Cleanup(sarama.ConsumerGroupSession) error {
	defer func() {
		th.sessMu.Lock()
		th.inSession = false
		th.sessMu.Unlock()
	}()
	if th.loopDone != nil {
		err := <-th.loopDone
		th.loopDone = nil
		return err
	}
	return nil
}

// ConsumeClaim implements sarama.ConsumerGroupHandler: it hands the partition's records to
// the processing loop through the partition's bounded buffer.
func (th *thread) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	pb := th.parts[claim.Topic()][claim.Partition()]
	if pb == nil {
		<-sess.Context().Done()
		return nil
	}
	pb.next.Store(claim.InitialOffset())
	pb.progress.Store(time.Now().UnixMilli())
	th.resolveStart(sess.Context(), claim, pb)
	pb.claim.Store(claim)
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				// sarama gave up on the partition (e.g. after broker errors) while the session
				// goes on: end the session, so the thread rejoins and fetches the partition again
				// from the committed offset instead of leaving it unread.
				if sess.Context().Err() == nil {
					th.log.Warn("partition consumer stopped; rejoining", "topic", claim.Topic(), "partition", claim.Partition())
					th.endSess()
				}
				return nil
			}
			select {
			case pb.ch <- m:
				pb.next.Store(m.Offset + 1)
			case <-sess.Context().Done():
				return nil
			}
			select {
			case th.wake <- struct{}{}:
			default:
			}
		case <-sess.Context().Done():
			return nil
		}
	}
}

// loop processes the session's tasks until the session ends, committing every commit
// interval and once more on the way out.
func (th *thread) loop(sess sarama.ConsumerGroupSession) error {
	ctx := sess.Context()
	lastCommit, lastLags := time.Now(), time.Time{}
	interval := th.rt.cfg.CommitInterval
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if ctx.Err() != nil {
			// The session ends (rebalance or shutdown): commit what was processed. If that
			// fails, the tasks hold uncommitted state and must not be reused.
			if err := th.commit(sess, true); err != nil {
				th.handleLoopError(err)
			}
			return nil
		}
		if th.maybeSendShutdown() {
			continue
		}
		th.fill()
		n, err := th.processOnce()
		if time.Since(lastLags) >= lagReportEvery {
			th.reportLags()
			lastLags = time.Now()
		}
		if err == nil {
			err = th.punctuateWallClock()
		}
		if err == nil {
			err = th.checkSendFailures()
		}
		if err == nil && (time.Since(lastCommit) >= interval || th.commitRequested()) {
			start := time.Now()
			err = th.commit(sess, false)
			lastCommit = time.Now()
			if m := th.rt.cfg.Metrics; m != nil && err == nil {
				m.commitLatency.WithLabelValues(th.name).Observe(time.Since(start).Seconds())
				var dropped int64
				for _, t := range th.tasks {
					dropped += t.DroppedRecords()
				}
				m.dropped.WithLabelValues(th.name).Set(float64(dropped))
			}
		}
		if err != nil {
			th.handleLoopError(err)
			return nil
		}
		if len(th.standbys) > 0 && time.Since(th.lastStandby) >= standbyUpdateInterval {
			th.updateStandbys(ctx)
			th.lastStandby = time.Now()
		}
		if n == 0 && th.checkStall() {
			if err := th.commit(sess, false); err != nil {
				th.handleLoopError(err)
				return nil
			}
			th.stalled = true
			th.endSess()
			return nil
		}
		if n == 0 {
			wait := interval - time.Since(lastCommit)
			wait = max(min(wait, 50*time.Millisecond), time.Millisecond)
			timer.Reset(wait)
			select {
			case <-ctx.Done():
			case <-th.wake:
			case <-timer.C:
			}
		}
	}
}

// handleLoopError ends the session after a failure: a migration (fenced producer, stale
// generation) rejoins with the tasks closed dirty; anything else is fatal for the thread.
func (th *thread) handleLoopError(err error) {
	var ke *KafkaError
	if isMigration(err) || errors.As(err, &ke) {
		th.log.Warn("tasks corrupted or migrated; closing them dirty and rejoining", "error", err)
		th.migrated = true
	} else {
		th.fatalErr = err
	}
	th.endSess()
}

// fill moves buffered records into their tasks while the task's queue of that partition has
// room.
func (th *thread) fill() {
	max := th.rt.cfg.MaxBufferedPerPartition
	for topic, ps := range th.parts {
		for p, pb := range ps {
			t := th.tasks[pb.id]
			if t == nil {
				continue
			}
			for room := max - t.QueueSize(topic, p); room > 0; room-- {
				select {
				case m := <-pb.ch:
					rec := task.RawRecord{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset,
						Timestamp: m.Timestamp.UnixMilli(), Key: m.Key, Value: m.Value}
					for _, h := range m.Headers {
						if h != nil {
							rec.Headers.Add(string(h.Key), h.Value)
						}
					}
					pb.pos = m.Offset + 1
					if err := t.AddRecord(rec); err != nil {
						// Deserialization errors surface again when the record is processed.
						th.log.Debug("add record", "error", err)
					}
				default:
					room = 0
				}
			}
		}
	}
}

// processOnce processes up to a batch of records per task, with stream-time punctuation
// after each record. It returns the number of records processed.
func (th *thread) processOnce() (int, error) {
	th.storeMu.Lock()
	defer th.storeMu.Unlock()
	const batch = 100
	total := 0
	now := time.Now().UnixMilli()
	start := time.Now()
	for id, t := range th.tasks {
		waiting := th.rt.cfg.Task.MaxTaskIdleMs >= 0 && len(th.inputs[id]) > 1
		if waiting && !t.HasRecordsQueued() {
			// As Java's readyToProcess, asked on every pass: a caught-up empty partition's
			// idle deadline starts when it is first seen so, records elsewhere or not.
			th.updateLags(t, th.inputs[id])
			t.IsProcessable(now)
			continue
		}
		for i := 0; i < batch && t.HasRecordsQueued(); i++ {
			if waiting {
				th.updateLags(t, th.inputs[id])
				if !th.isProcessable(id, t, now) {
					break
				}
			}
			ok, err := t.Process(now)
			if err != nil {
				return total, err
			}
			if !ok {
				break
			}
			total++
			if _, err := t.MaybePunctuateStreamTime(); err != nil {
				return total, err
			}
		}
	}
	if m := th.rt.cfg.Metrics; m != nil && total > 0 {
		m.processed.WithLabelValues(th.name).Add(float64(total))
		m.processTime.WithLabelValues(th.name).Observe(time.Since(start).Seconds())
	}
	return total, nil
}

func (th *thread) punctuateWallClock() error {
	th.storeMu.Lock()
	defer th.storeMu.Unlock()
	now := time.Now().UnixMilli()
	for _, t := range th.tasks {
		if _, err := t.MaybePunctuateSystemTime(now); err != nil {
			return err
		}
	}
	return nil
}

func (th *thread) commitRequested() bool {
	for _, t := range th.tasks {
		if t.CommitRequested() {
			return true
		}
	}
	return false
}

// KafkaError is a failure talking to Kafka (producer, transaction, restore) after the
// client's own retries. The thread does not die of it: its tasks are closed dirty (under
// exactly-once the transaction is aborted) and it rejoins the group, reprocessing from the
// last commit. Java: TaskCorruptedException / TaskMigratedException handling.
type KafkaError struct {
	// Op is what failed.
	Op string
	// Err is the client's error.
	Err error
}

// Error implements error.
func (e *KafkaError) Error() string { return e.Op + ": " + e.Err.Error() }

// Unwrap returns the client's error.
func (e *KafkaError) Unwrap() error { return e.Err }

func kafkaErr(op string, err error) error { return &KafkaError{Op: op, Err: err} }

// retriable reports errors a later attempt may not see: network errors, missing leaders,
// timeouts, and Kafka's retriable error codes.
func retriable(err error) bool {
	var ke sarama.KError
	if errors.As(err, &ke) {
		switch ke {
		case sarama.ErrMessageSizeTooLarge, sarama.ErrInvalidMessage, sarama.ErrInvalidMessageSize,
			sarama.ErrTopicAuthorizationFailed, sarama.ErrClusterAuthorizationFailed, sarama.ErrInvalidTopic,
			sarama.ErrInvalidRecord, sarama.ErrUnsupportedVersion:
			return false
		}
		return true
	}
	return true
}

// errJoinInterrupted is what Setup returns for a session whose join completed after
// interruptJoin closed the group client: the runtime is closing, the session must not start.
var errJoinInterrupted = errors.New("group join interrupted: the runtime is closing")

// leaveGroupTimeout bounds interruptJoin's LeaveGroup request (dial, write and read).
const leaveGroupTimeout = time.Second

// interruptJoin closes the consumer-group client of a thread that is between sessions, so a
// JoinGroup or SyncGroup the coordinator holds (until the rebalance completes, up to the
// group's rebalance timeout) ends at once when the runtime closes. Such a thread has nothing
// to commit: its last session committed in Cleanup. The check and the close happen under
// sessMu, which Setup takes to start a session, so a join completing meanwhile finds the
// client closed and starts no session. It then sends a LeaveGroup for the member id of the
// last session on a connection of its own (the client's coordinator connection is closed, and
// the broker answers one request per connection at a time), within leaveGroupTimeout, so the
// other members need not wait a session timeout to rebalance. Java: KafkaConsumer.close
// abandons a pending join and leaves the group. Safe to call from another goroutine.
func (th *thread) interruptJoin() {
	th.sessMu.Lock()
	defer th.sessMu.Unlock()
	if th.inSession {
		return
	}
	th.mu.Lock()
	client := th.client
	th.mu.Unlock()
	if client == nil || client.Closed() {
		return
	}
	th.joinClosed = true
	coordinator := ""
	if th.memberID != "" && th.sconf.Consumer.Group.InstanceId == "" {
		if b, err := client.Coordinator(th.rt.cfg.ApplicationID); err == nil {
			coordinator = b.Addr()
		}
	}
	th.log.Debug("closing: ending a pending group join")
	_ = client.Close()
	if coordinator != "" {
		if err := th.leaveGroup(coordinator, th.memberID); err != nil {
			th.log.Debug("closing: leave group", "error", err)
		}
	}
}

// leaveGroup sends a LeaveGroup for memberID to the coordinator at addr on a new connection.
func (th *thread) leaveGroup(addr, memberID string) error {
	conf := *th.sconf
	conf.Net.DialTimeout, conf.Net.ReadTimeout, conf.Net.WriteTimeout = leaveGroupTimeout, leaveGroupTimeout, leaveGroupTimeout
	b := sarama.NewBroker(addr)
	if err := b.Open(&conf); err != nil {
		return err
	}
	defer b.Close()
	req := &sarama.LeaveGroupRequest{GroupId: th.rt.cfg.ApplicationID, MemberId: memberID}
	switch v := conf.Version; {
	case v.IsAtLeast(sarama.V3_2_0_0):
		req.Version = 5
	case v.IsAtLeast(sarama.V2_4_0_0):
		req.Version = 4
	case v.IsAtLeast(sarama.V2_0_0_0):
		req.Version = 2
	case v.IsAtLeast(sarama.V0_11_0_0):
		req.Version = 1
	}
	if req.Version >= 3 {
		reason := "the stream thread is being closed"
		req.Members = []sarama.MemberIdentity{{MemberId: memberID, Reason: &reason}}
	}
	resp, err := b.LeaveGroup(req)
	if err != nil {
		return err
	}
	if resp.Err != sarama.ErrNoError {
		return resp.Err
	}
	for _, m := range resp.Members {
		if m.Err != sarama.ErrNoError && m.Err != sarama.ErrUnknownMemberId {
			return m.Err
		}
	}
	return nil
}
