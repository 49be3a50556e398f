package task

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// asyncProc is an AsyncFixedKeyProcessor built from functions.
type asyncProc struct {
	ctx      processor.FixedKeyProcessorContext[string, string]
	init     func(ctx processor.FixedKeyProcessorContext[string, string]) error
	start    func(rec processor.FixedKeyRecord[string, string]) (func(context.Context) (string, error), error)
	complete func(ctx processor.FixedKeyProcessorContext[string, string], rec processor.FixedKeyRecord[string, string], res string) error
}

func (a *asyncProc) Init(ctx processor.FixedKeyProcessorContext[string, string]) error {
	a.ctx = ctx
	if a.init != nil {
		return a.init(ctx)
	}
	return nil
}
func (a *asyncProc) Start(rec processor.FixedKeyRecord[string, string]) (func(context.Context) (string, error), error) {
	return a.start(rec)
}
func (a *asyncProc) Complete(rec processor.FixedKeyRecord[string, string], res string) error {
	if a.complete != nil {
		return a.complete(a.ctx, rec, res)
	}
	return a.ctx.Forward(rec.WithValue(res))
}
func (a *asyncProc) Close() error { return nil }

// asyncSpec is source "in" -> async step "proc" -> sink "out".
func asyncSpec(opts processor.AsyncOptions, p *asyncProc, stores ...string) Spec {
	topo := processor.NewTopology()
	if err := topo.AddSource("src", []string{"in"}); err != nil {
		panic(err)
	}
	if err := topo.AddFixedKeyProcessor("proc",
		processor.NewAsyncFixedKeySupplier(opts, func() processor.AsyncFixedKeyProcessor[string, string, string, string] { return p }), "src"); err != nil {
		panic(err)
	}
	sup := topology.Of(topo).Node("proc").Supplier.(processor.ProcessorSupplier[any, any, any, any])
	return Spec{Nodes: []NodeSpec{
		{Name: "src", Kind: SourceNode, Topics: []string{"in"}, Children: []string{"proc"}},
		{Name: "proc", Kind: ProcessorNode, Children: []string{"sink"}, Stores: stores,
			NewProcessor: func() (UntypedProcessor, error) { return sup.Get(), nil }},
		{Name: "sink", Kind: SinkNode, Topic: "out"},
	}}
}

// runAsync processes everything queued, waiting for completions while the step holds too much;
// after every Process it checks the step's bound. It ends with a drain.
func runAsync(t *testing.T, tk *Task, bound int) {
	t.Helper()
	for tk.HasRecordsQueued() {
		ok, err := tk.Process(0)
		if err != nil {
			t.Fatal(err)
		}
		if p := tk.AsyncPending(); p > bound {
			t.Fatalf("async step holds %d records, more than %d", p, bound)
		}
		if !ok {
			select { // intake paused: wait for a completion
			case <-tk.async.wake:
			case <-time.After(10 * time.Second):
				t.Fatal("no completion within 10 s")
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tk.DrainAsync(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestAsyncPerKeyOrderRandomLatencies: 4 000 records over 40 keys with random call latencies:
// every key's outputs come in input order, calls of one key never overlap, at most
// MaxInFlight calls run at once, and the step never holds more than 2 x MaxInFlight records.
func TestAsyncPerKeyOrderRandomLatencies(t *testing.T) {
	const records, keys, inFlight = 4000, 40, 8
	var running, maxRunning atomic.Int32
	var perKey sync.Map // key -> *atomic.Int32
	var overlap atomic.Bool
	p := &asyncProc{start: func(rec processor.FixedKeyRecord[string, string]) (func(context.Context) (string, error), error) {
		k, v := rec.Key(), rec.Value()
		return func(ctx context.Context) (string, error) {
			c, _ := perKey.LoadOrStore(k, new(atomic.Int32))
			if c.(*atomic.Int32).Add(1) > 1 {
				overlap.Store(true)
			}
			n := running.Add(1)
			for {
				m := maxRunning.Load()
				if n <= m || maxRunning.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			running.Add(-1)
			c.(*atomic.Int32).Add(-1)
			return v + "!", nil
		}, nil
	}}
	clock := int64(0)
	tk, c := newTask(t, asyncSpec(processor.AsyncOptions{MaxInFlight: inFlight, MaxQueuedPerKey: 4}, p), &clock)
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string][]string{}
	for i := range records {
		k := "k" + strconv.Itoa(rng.IntN(keys))
		v := strconv.Itoa(i)
		want[k] = append(want[k], v+"!")
		if err := tk.AddRecord(raw("in", int64(i), int64(i), k, v)); err != nil {
			t.Fatal(err)
		}
	}
	runAsync(t, tk, 2*inFlight)
	got := map[string][]string{}
	for _, r := range c.out {
		got[string(r.Key)] = append(got[string(r.Key)], string(r.Value))
	}
	if len(c.out) != records {
		t.Fatalf("%d outputs, want %d", len(c.out), records)
	}
	for k, w := range want {
		if strings.Join(got[k], ",") != strings.Join(w, ",") {
			t.Fatalf("key %s: outputs %v, want %v", k, got[k], w)
		}
	}
	if overlap.Load() {
		t.Error("two calls of one key ran at once")
	}
	if m := maxRunning.Load(); m > inFlight {
		t.Errorf("%d calls ran at once, more than MaxInFlight %d", m, inFlight)
	}
	if st, _ := tk.AsyncStats(); st.Calls != records || st.InFlight != 0 || st.Queued != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestAsyncKeysInterleave: a key whose call is held back does not hold back another key, and
// its own later record waits for it.
func TestAsyncKeysInterleave(t *testing.T) {
	release := make(chan struct{})
	p := &asyncProc{start: func(rec processor.FixedKeyRecord[string, string]) (func(context.Context) (string, error), error) {
		v := rec.Value()
		return func(ctx context.Context) (string, error) {
			if v == "a1" {
				<-release
			}
			return v, nil
		}, nil
	}}
	clock := int64(0)
	tk, c := newTask(t, asyncSpec(processor.AsyncOptions{}, p), &clock)
	for i, kv := range [][2]string{{"a", "a1"}, {"b", "b1"}, {"a", "a2"}, {"b", "b2"}} {
		_ = tk.AddRecord(raw("in", int64(i), 1, kv[0], kv[1]))
	}
	for tk.HasRecordsQueued() {
		if _, err := tk.Process(0); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(c.out) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("b's records not out: %s", c.lines())
		}
		<-tk.async.wake
		if _, err := tk.ApplyAsync(); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	if err := tk.DrainAsync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := c.lines(), `out/-1 "b"="b1"@1|out/-1 "b"="b2"@1|out/-1 "a"="a1"@1|out/-1 "a"="a2"@1`; got != want {
		t.Fatalf("outputs\n%s\nwant\n%s", got, want)
	}
}

// TestAsyncPerPartitionOrder: with AsyncPerPartition every output comes in input order, whatever
// the latencies.
func TestAsyncPerPartitionOrder(t *testing.T) {
	var running, maxRunning atomic.Int32
	p := &asyncProc{start: func(rec processor.FixedKeyRecord[string, string]) (func(context.Context) (string, error), error) {
		v := rec.Value()
		return func(ctx context.Context) (string, error) {
			n := running.Add(1)
			if n > maxRunning.Load() {
				maxRunning.Store(n)
			}
			time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
			running.Add(-1)
			return v, nil
		}, nil
	}}
	clock := int64(0)
	tk, c := newTask(t, asyncSpec(processor.AsyncOptions{MaxInFlight: 6, Ordering: processor.AsyncPerPartition}, p), &clock)
	var want []string
	for i := range 1000 {
		v := strconv.Itoa(i)
		want = append(want, v)
		_ = tk.AddRecord(raw("in", int64(i), 1, "same", v))
	}
	runAsync(t, tk, 12)
	var got []string
	for _, r := range c.out {
		got = append(got, string(r.Value))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("outputs out of input order: %v", got)
	}
	if maxRunning.Load() > 6 {
		t.Fatalf("%d calls at once", maxRunning.Load())
	}
}

// TestAsyncStoresPerKey: Start reads the key's count from a store and Complete writes count+1:
// the final counts equal the records per key only if each record's Start saw its key's earlier
// writes (the per-key turn) and the writes ran on the task's goroutine.
func TestAsyncStoresPerKey(t *testing.T) {
	var kv store.KeyValueStore[string, string]
	p := &asyncProc{init: func(ctx processor.FixedKeyProcessorContext[string, string]) error {
		var err error
		kv, err = processor.GetStateStore[store.KeyValueStore[string, string]](ctx, "counts")
		return err
	}}
	p.start = func(rec processor.FixedKeyRecord[string, string]) (func(context.Context) (string, error), error) {
		cur, _, err := kv.Get(rec.Key())
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (string, error) {
			n, _ := strconv.Atoi(cur)
			time.Sleep(time.Duration(rand.IntN(100)) * time.Microsecond)
			return strconv.Itoa(n + 1), nil
		}, nil
	}
	p.complete = func(ctx processor.FixedKeyProcessorContext[string, string], rec processor.FixedKeyRecord[string, string], res string) error {
		if err := kv.Put(rec.Key(), res); err != nil {
			return err
		}
		return ctx.Forward(rec.WithValue(res))
	}
	spec := asyncSpec(processor.AsyncOptions{MaxInFlight: 8}, p, "counts")
	spec.Stores = []StoreSpec{{Builder: store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("counts"), serde.String(), serde.String()).WithLoggingDisabled()}}
	clock := int64(0)
	tk, _ := newTask(t, spec, &clock)
	want := map[string]int{}
	for i := range 2000 {
		k := "k" + strconv.Itoa(i%13)
		want[k]++
		_ = tk.AddRecord(raw("in", int64(i), 1, k, "x"))
	}
	runAsync(t, tk, 16)
	for k, n := range want {
		got, _, _ := kv.Get(k)
		if got != strconv.Itoa(n) {
			t.Errorf("count of %s = %s, want %d", k, got, n)
		}
	}
}

// TestAsyncErrorsToHandlerAndDeadLetter: a call's error and a call's timeout reach the
// processing handler as *processor.AsyncError with key, partition and offset; the handler
// continues, the dead-letter record is the input record; other records go on.
func TestAsyncErrorsToHandlerAndDeadLetter(t *testing.T) {
	boom := errors.New("service said no")
	p := &asyncProc{start: func(rec processor.FixedKeyRecord[string, string]) (func(context.Context) (string, error), error) {
		v := rec.Value()
		return func(ctx context.Context) (string, error) {
			switch v {
			case "fail":
				return "", boom
			case "hang":
				<-ctx.Done()
				return "", ctx.Err()
			}
			return v, nil
		}, nil
	}}
	type seen struct {
		node string
		err  *processor.AsyncError
	}
	var handled []seen
	var letters []RawRecord
	clock := int64(0)
	tk, c := newTask(t, asyncSpec(processor.AsyncOptions{Timeout: 50 * time.Millisecond}, p), &clock, func(cfg *Config) {
		cfg.ProcessingHandler = func(node string, rec processor.Record[any, any], err error) HandlerResponse {
			var ae *processor.AsyncError
			if !errors.As(err, &ae) {
				t.Errorf("handler got %T %v", err, err)
			}
			handled = append(handled, seen{node, ae})
			return Continue
		}
		cfg.DeadLetter = func(rec RawRecord, err error) OutRecord {
			letters = append(letters, rec)
			return OutRecord{Topic: "dlq", Partition: -1, Key: rec.Key, Value: rec.Value}
		}
	})
	for i, v := range []string{"ok1", "fail", "hang", "ok2"} {
		r := raw("in", int64(10+i), 5, "k"+strconv.Itoa(i), v)
		r.Partition = 0
		_ = tk.AddRecord(r)
	}
	runAsync(t, tk, 100)
	if len(handled) != 2 {
		t.Fatalf("handler calls %d: %+v", len(handled), handled)
	}
	byKey := map[any]*processor.AsyncError{}
	for _, h := range handled {
		if h.node != "proc" {
			t.Errorf("node %s", h.node)
		}
		byKey[h.err.Key] = h.err
	}
	if e := byKey["k1"]; e == nil || !errors.Is(e, boom) || e.Offset != 11 || e.Topic != "in" || e.Partition != 0 {
		t.Errorf("error of k1: %+v", e)
	}
	if e := byKey["k2"]; e == nil || !errors.Is(e, context.DeadlineExceeded) || e.Offset != 12 {
		t.Errorf("timeout of k2: %+v", e)
	}
	dl := map[string]int64{}
	for _, l := range letters {
		dl[string(l.Key)+"="+string(l.Value)] = l.Offset
	}
	if len(letters) != 2 || dl["k1=fail"] != 11 || dl["k2=hang"] != 12 {
		t.Errorf("dead letters %+v", letters)
	}
	var outs []string
	for _, r := range c.out {
		if r.Topic == "out" {
			outs = append(outs, string(r.Value))
		}
	}
	if fmt.Sprint(outs) != "[ok1 ok2]" && fmt.Sprint(outs) != "[ok2 ok1]" {
		t.Errorf("outputs %v", outs)
	}
	if tk.DroppedRecords() != 2 {
		t.Errorf("dropped %d", tk.DroppedRecords())
	}
}

// TestAsyncErrorFails: without a handler, a call's error fails the drain with a
// *ProcessingError naming node, topic, partition and offset.
func TestAsyncErrorFails(t *testing.T) {
	p := &asyncProc{start: func(rec processor.FixedKeyRecord[string, string]) (func(context.Context) (string, error), error) {
		return func(ctx context.Context) (string, error) { return "", errors.New("down") }, nil
	}}
	clock := int64(0)
	tk, _ := newTask(t, asyncSpec(processor.AsyncOptions{}, p), &clock)
	_ = tk.AddRecord(raw("in", 4, 1, "k", "v"))
	if _, err := tk.Process(0); err != nil {
		t.Fatal(err)
	}
	err := tk.DrainAsync(context.Background())
	var pe *ProcessingError
	var ae *processor.AsyncError
	if !errors.As(err, &pe) || pe.Node != "proc" || pe.Offset != 4 || !errors.As(err, &ae) || ae.Key != "k" {
		t.Fatalf("err %v", err)
	}
}

// TestAsyncCloseCancelsCalls: closing a task cancels its calls in flight; their results are
// never applied.
func TestAsyncCloseCancelsCalls(t *testing.T) {
	started := make(chan struct{}, 4)
	cancelled := make(chan struct{}, 4)
	p := &asyncProc{start: func(rec processor.FixedKeyRecord[string, string]) (func(context.Context) (string, error), error) {
		return func(ctx context.Context) (string, error) {
			started <- struct{}{}
			<-ctx.Done()
			cancelled <- struct{}{}
			return "late", nil
		}, nil
	}}
	clock := int64(0)
	tk, c := newTask(t, asyncSpec(processor.AsyncOptions{Timeout: -1}, p), &clock)
	for i := range 3 {
		_ = tk.AddRecord(raw("in", int64(i), 1, "k"+strconv.Itoa(i), "v"))
	}
	for tk.HasRecordsQueued() {
		if _, err := tk.Process(0); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		<-started
	}
	if tk.AsyncPending() != 3 {
		t.Fatalf("pending %d", tk.AsyncPending())
	}
	if err := tk.Close(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case <-cancelled:
		case <-time.After(10 * time.Second):
			t.Fatal("a call was not cancelled")
		}
	}
	if n, _ := tk.ApplyAsync(); n != 0 || len(c.out) != 0 {
		t.Fatalf("applied %d after close, outputs %s", n, c.lines())
	}
}

// TestAsyncBackpressureHotKey: while a key has MaxQueuedPerKey records waiting, Process takes
// no input; it resumes when the key's call completes.
func TestAsyncBackpressureHotKey(t *testing.T) {
	release := make(chan struct{})
	p := &asyncProc{start: func(rec processor.FixedKeyRecord[string, string]) (func(context.Context) (string, error), error) {
		v := rec.Value()
		return func(ctx context.Context) (string, error) {
			<-release
			return v, nil
		}, nil
	}}
	clock := int64(0)
	tk, c := newTask(t, asyncSpec(processor.AsyncOptions{MaxQueuedPerKey: 2}, p), &clock)
	for i := range 10 {
		_ = tk.AddRecord(raw("in", int64(i), 1, "hot", strconv.Itoa(i)))
	}
	taken := 0
	for {
		ok, err := tk.Process(0)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		taken++
	}
	// One running, two waiting: the third waiting record would exceed the cap.
	if taken != 3 || !tk.AsyncIntakePaused() || tk.QueueSize("in", 0) != 7 {
		t.Fatalf("took %d records, paused %v, queued %d", taken, tk.AsyncIntakePaused(), tk.QueueSize("in", 0))
	}
	close(release)
	runAsync(t, tk, 3)
	if len(c.out) != 10 {
		t.Fatalf("outputs %d", len(c.out))
	}
	if st, _ := tk.AsyncStats(); st.Paused <= 0 {
		t.Errorf("paused time not counted: %+v", st)
	}
}

// TestAsyncCommitBound: the bound of a partition is the offset of the oldest record an async
// step holds; none once everything is applied.
func TestAsyncCommitBound(t *testing.T) {
	release := make(chan struct{})
	p := &asyncProc{start: func(rec processor.FixedKeyRecord[string, string]) (func(context.Context) (string, error), error) {
		v := rec.Value()
		return func(ctx context.Context) (string, error) {
			if v == "held" {
				<-release
			}
			return v, nil
		}, nil
	}}
	clock := int64(0)
	tk, _ := newTask(t, asyncSpec(processor.AsyncOptions{}, p), &clock)
	for i, v := range []string{"x", "held", "y", "z"} {
		_ = tk.AddRecord(raw("in", int64(20+i), 1, "k"+strconv.Itoa(i), v))
	}
	for tk.HasRecordsQueued() {
		if _, err := tk.Process(0); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for tk.AsyncPending() > 1 && time.Now().Before(deadline) {
		<-tk.async.wake
		_, _ = tk.ApplyAsync()
	}
	if b, ok := tk.AsyncCommitBound("in", 0); !ok || b != 21 {
		t.Fatalf("bound %d %v, want 21", b, ok)
	}
	if _, ok := tk.AsyncCommitBound("in", 1); ok {
		t.Fatal("bound for a partition without records")
	}
	close(release)
	if err := tk.DrainAsync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := tk.AsyncCommitBound("in", 0); ok {
		t.Fatal("bound after the drain")
	}
}
