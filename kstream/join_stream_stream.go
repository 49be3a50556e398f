package kstream

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// timeTracker is the stream time and the smallest held-back timestamp shared by the two join
// processors of one task. Java: KStreamImplJoin.TimeTracker.
type timeTracker struct {
	emitIntervalMs int64
	streamTime     int64
	minTime        int64
	nextTimeToEmit int64
}

type timeTrackers struct {
	mu sync.Mutex
	m  map[processor.TaskID]*timeTracker
}

func (t *timeTrackers) get(id processor.TaskID) *timeTracker {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[processor.TaskID]*timeTracker{}
	}
	tr := t.m[id]
	if tr == nil {
		tr = &timeTracker{emitIntervalMs: 1000, streamTime: -1, minTime: math.MaxInt64}
		t.m[id] = tr
	}
	return tr
}

func (t *timeTrackers) remove(id processor.TaskID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, id)
}

// streamStreamJoin is one side's processor supplier. Java: KStreamKStreamJoinLeftSide /
// KStreamKStreamJoinRightSide.
type streamStreamJoin struct {
	otherWindow          string
	outerStore           string // "" when there is none (inner join)
	beforeMs, afterMs    int64  // this side's look-back and look-ahead
	windowBefore         int64  // the JoinWindows' before/after (for the shared store)
	windowAfter, graceMs int64
	joiner               untypedJoiner // (key, thisValue, otherValue)
	outer                bool
	leftSide             bool
	trackers             *timeTrackers
}

func (j *streamStreamJoin) Get() processor.Processor[any, any, any, any] {
	return &streamStreamJoinProc{j: j}
}

type streamStreamJoinProc struct {
	j     *streamStreamJoin
	ctx   processor.ProcessorContext[any, any]
	other store.WindowStore[any, any]
	outer *outerJoinStore
	tr    *timeTracker
}

func (p *streamStreamJoinProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	st, err := processor.GetStateStore[store.WindowStore[any, any]](ctx, p.j.otherWindow)
	if err != nil {
		return err
	}
	p.other = st
	p.tr = p.j.trackers.get(ctx.TaskID())
	if p.j.outerStore != "" {
		os, err := processor.GetStateStore[*outerJoinStore](ctx, p.j.outerStore)
		if err != nil {
			return err
		}
		p.outer = os
		if v, ok := ctx.AppConfigs()[EmitIntervalOuterJoinConfig]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				p.tr.emitIntervalMs = n
			}
		}
	}
	return nil
}

func (p *streamStreamJoinProc) Close() error {
	if p.ctx != nil {
		p.j.trackers.remove(p.ctx.TaskID())
	}
	return nil
}

func (p *streamStreamJoinProc) Process(r processor.Record[any, any]) error {
	j, tr := p.j, p.tr
	ts := r.Timestamp
	tr.streamTime = max(tr.streamTime, ts)
	if j.outer && r.Key == nil && r.Value != nil {
		out, err := j.joiner(nil, r.Value, nil)
		if err != nil {
			return err
		}
		r.Value = out
		return p.ctx.Forward(r)
	}
	if r.Key == nil || r.Value == nil {
		return nil // Java: skipRecord (dropped-records metric)
	}
	if ts == tr.streamTime && p.outer != nil {
		if err := p.emitNonJoined(r); err != nil {
			return err
		}
	}
	from := max(0, ts-j.beforeMs)
	to := max(0, ts+j.afterMs)
	it := p.other.FetchTimeRange(r.Key, from, to)
	type match struct {
		ts    int64
		value any
	}
	var matches []match
	for it.Next() {
		matches = append(matches, match{it.Key(), it.Value()})
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return err
	}
	for _, m := range matches {
		if p.outer != nil {
			if err := p.outer.removeIfPresent(m.ts, !j.leftSide, r.Key); err != nil {
				return err
			}
		}
		out, err := j.joiner(r.Key, r.Value, m.value)
		if err != nil {
			return err
		}
		rec := r
		rec.Value, rec.Timestamp = out, max(ts, m.ts)
		if err := p.ctx.Forward(rec); err != nil {
			return err
		}
	}
	if j.outer && len(matches) == 0 {
		if p.outer == nil || to < tr.streamTime {
			out, err := j.joiner(r.Key, r.Value, nil)
			if err != nil {
				return err
			}
			r.Value = out
			return p.ctx.Forward(r)
		}
		tr.minTime = min(tr.minTime, ts)
		return p.outer.add(ts, j.leftSide, r.Key, r.Value)
	}
	return nil
}

// emitNonJoined forwards the held-back records whose window has closed, with their own key and
// timestamp (and the current record's headers), and deletes them. Java:
// KStreamKStreamJoin.emitNonJoinedOuterRecords.
func (p *streamStreamJoinProc) emitNonJoined(r processor.Record[any, any]) error {
	j, tr := p.j, p.tr
	if tr.minTime+j.afterMs+j.graceMs >= tr.streamTime {
		return nil
	}
	now := p.ctx.CurrentSystemTimeMs()
	if now < tr.nextTimeToEmit {
		return nil
	}
	tr.nextTimeToEmit = now + tr.emitIntervalMs
	tr.minTime = math.MaxInt64
	entries, err := p.outer.entries()
	if err != nil {
		return err
	}
	var prev []byte
	leftOpen, rightOpen := false, false
	for _, e := range entries {
		tr.minTime = e.ts
		if leftOpen && rightOpen {
			break
		}
		lookBack := j.windowBefore
		if e.left {
			lookBack = j.windowAfter
		}
		if tr.minTime+lookBack+j.graceMs >= tr.streamTime {
			if e.left {
				leftOpen = true
			} else {
				rightOpen = true
			}
			continue
		}
		// The joiner is called as (key, thisValue, otherValue) from this side's view.
		var thisV, otherV any
		if e.left == j.leftSide {
			thisV = e.value
		} else {
			otherV = e.value
		}
		out, err := j.joiner(e.key, thisV, otherV)
		if err != nil {
			return err
		}
		rec := r
		rec.Key, rec.Value, rec.Timestamp = e.key, out, e.ts
		if err := p.ctx.Forward(rec); err != nil {
			return err
		}
		if prev != nil && string(prev) != string(e.rawKey) {
			if err := p.outer.remove(prev); err != nil {
				return err
			}
		}
		prev = e.rawKey
	}
	if prev != nil {
		return p.outer.remove(prev)
	}
	return nil
}

// joinWindowProc writes each record with a key into its side's window store and forwards it.
// Java: KStreamJoinWindow.
type joinWindowProc struct {
	storeName string
	ctx       processor.ProcessorContext[any, any]
	st        store.WindowStore[any, any]
}

func (p *joinWindowProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	st, err := processor.GetStateStore[store.WindowStore[any, any]](ctx, p.storeName)
	p.st = st
	return err
}

func (p *joinWindowProc) Process(r processor.Record[any, any]) error {
	if err := p.ctx.Forward(r); err != nil {
		return err
	}
	if r.Key != nil {
		return p.st.Put(r.Key, r.Value, r.Timestamp)
	}
	return nil
}

func (p *joinWindowProc) Close() error { return nil }

type joinWindowSupplier struct{ storeName string }

func (s joinWindowSupplier) Get() processor.Processor[any, any, any, any] {
	return &joinWindowProc{storeName: s.storeName}
}

// JoinStream joins this stream with other over windows: each pair of records with the same key
// and timestamps at most the window apart (this record at t joins other records in
// [t-before, t+after]) gives one record joiner(value, otherValue) with the larger timestamp.
// Records with a null key or value are dropped. Both streams are repartitioned first when their
// key changed ("<name>-left-repartition" / "<name>-right-repartition", or generated names) and
// must be co-partitioned. Each side is kept in a window store ("<gen>-store", retention =
// size + grace, retaining duplicates, changelog cleanup.policy=delete). Generated names as
// Java: KSTREAM-WINDOWED-<n> (both sides), KSTREAM-JOINTHIS-<n>, KSTREAM-JOINOTHER-<n>,
// KSTREAM-MERGE-<n>. Java: KStream.join(KStream, ValueJoiner, JoinWindows, StreamJoined).
func (s KStream[K, V]) JoinStream[VO, VR any](other KStream[K, VO], joiner func(value V, otherValue VO) VR, windows JoinWindows, streamJoined ...StreamJoined[K, V, VO]) KStream[K, VR] {
	return streamStreamJoinOp(s, other, joiner, windows, lastStreamJoined(streamJoined), false, false)
}

// LeftJoinStream is JoinStream that also emits each record of this stream that found no
// partner, joined with null (the zero VO), once its window has closed (stream time > t + after
// + grace; KIP-633), with its own timestamp. The unmatched records wait in a shared store
// "KSTREAM-OUTERSHARED-<n>-store" (or "<storeName>-left-shared-join-store"). Processors
// KSTREAM-JOINTHIS-<n> and KSTREAM-OUTEROTHER-<n>. Java: KStream.leftJoin(KStream, ...).
func (s KStream[K, V]) LeftJoinStream[VO, VR any](other KStream[K, VO], joiner func(value V, otherValue VO) VR, windows JoinWindows, streamJoined ...StreamJoined[K, V, VO]) KStream[K, VR] {
	return streamStreamJoinOp(s, other, joiner, windows, lastStreamJoined(streamJoined), true, false)
}

// OuterJoinStream is LeftJoinStream that also emits unmatched records of the other stream,
// joined as joiner(null, otherValue) (the zero V). Processors KSTREAM-OUTERTHIS-<n> and
// KSTREAM-OUTEROTHER-<n>; shared store "<storeName>-outer-shared-join-store" when named.
// Java: KStream.outerJoin(KStream, ...).
func (s KStream[K, V]) OuterJoinStream[VO, VR any](other KStream[K, VO], joiner func(value V, otherValue VO) VR, windows JoinWindows, streamJoined ...StreamJoined[K, V, VO]) KStream[K, VR] {
	return streamStreamJoinOp(s, other, joiner, windows, lastStreamJoined(streamJoined), true, true)
}

func streamStreamJoinOp[K, V, VO, VR any](s KStream[K, V], other KStream[K, VO], joiner func(V, VO) VR, windows JoinWindows, sj StreamJoined[K, V, VO], leftOuter, rightOuter bool) KStream[K, VR] {
	b := s.s.b
	if other.s == nil || !s.s.checkSameBuilder(other.s.b, "stream-stream join") {
		return KStream[K, VR]{s: s.derive("", s.s.node, nil, nil, false)}
	}
	keySerde, thisSerde, otherSerde := untyped(sj.keySerde), untyped(sj.valueSerde), untyped(sj.otherValueSerde)
	this, that := s.s, other.s
	if this.repartitionRequired {
		name := this.name
		if sj.name != "" {
			name = sj.name + "-left"
		}
		this = this.repartitionForJoin(name, keySerde, thisSerde)
	}
	if that.repartitionRequired {
		name := that.name
		if sj.name != "" {
			name = sj.name + "-right"
		}
		that = that.repartitionForJoin(name, keySerde, otherSerde)
	}

	joinThisSuffix, joinOtherSuffix := "-this-join", "-other-join"
	if rightOuter {
		joinThisSuffix = "-outer-this-join"
	}
	if leftOuter {
		joinOtherSuffix = "-outer-other-join"
	}
	thisWindowed := b.suffixOrElseGenerate(sj.name, "-this-windowed", windowedName)
	otherWindowed := b.suffixOrElseGenerate(sj.name, "-other-windowed", windowedName)
	thisGen := b.newProcessorName(map[bool]string{true: outerThisName, false: joinThisName}[rightOuter])
	otherGen := b.newProcessorName(map[bool]string{true: outerOtherName, false: joinOtherName}[leftOuter])
	thisJoin, otherJoin := thisGen, otherGen
	if sj.name != "" {
		thisJoin, otherJoin = sj.name+joinThisSuffix, sj.name+joinOtherSuffix
		b.checkName(thisJoin)
		b.checkName(otherJoin)
	}
	mergeN := b.suffixOrElseGenerate(sj.name, "-merge", mergeName)
	if windows.err != nil {
		b.fail(dslErr(mergeN, ErrInvalidWindows, "%s: %v", mergeN, windows.err))
	}
	if joiner == nil {
		b.fail(dslErr(mergeN, nil, "%s: joiner must not be nil", mergeN))
	}

	size, grace := windows.Size(), windows.GracePeriodMs()
	retention := size + grace
	if sj.thisStoreSupplier != nil && sj.otherStoreSupplier != nil && sj.thisStoreSupplier.Name() == sj.otherStoreSupplier.Name() {
		b.fail(dslErr(mergeN, nil, "%s: both StoreSuppliers have the same name %q; StoreSuppliers must provide unique names", mergeN, sj.thisStoreSupplier.Name()))
	}
	logCfg := map[string]string{}
	for k, v := range sj.logConfig {
		logCfg[k] = v
	}
	logCfg["cleanup.policy"] = "delete"
	// A window store without a user supplier gets its engine when the topology is built:
	// Pebble, as Java's default RocksDB (DslStoreSuppliers.windowStore with retainDuplicates),
	// or in-memory with default.dsl.store=in_memory. Java: StreamJoinedStoreFactory.
	type joinStore struct {
		name  string
		build func() processor.StoreBuilder
	}
	windowStore := func(sup store.WindowBytesStoreSupplier, gen, suffix string, valueSerde serde.Serde[any]) *joinStore {
		given := sup != nil
		name := gen + "-store"
		if sj.storeName != "" {
			name = sj.storeName + suffix + "-store"
		}
		if !given {
			if _, err := store.Stores.PersistentWindowStore(name, time.Duration(retention)*time.Millisecond, time.Duration(size)*time.Millisecond, true); err != nil {
				b.fail(dslErr(mergeN, ErrInvalidWindows, "%s: %v", mergeN, err))
				return nil
			}
		} else {
			name = sup.Name()
			if !sup.RetainDuplicates() || sup.RetentionPeriod() != retention || sup.WindowSize() != size {
				b.fail(dslErr(mergeN, nil, "%s: store supplier %s must retain duplicates and have window size %d ms and retention %d ms (JoinWindows size and size+grace)",
					mergeN, sup.Name(), size, retention))
			}
		}
		return &joinStore{name: name, build: func() processor.StoreBuilder {
			sup := sup
			if !given {
				var err error
				if sup, err = b.dslWindowStore(name, retention, size, true); err != nil {
					return nil
				}
			}
			wb := store.Stores.WindowStoreBuilder[any, any](sup, keySerde, valueSerde)
			switch {
			case given:
				// Java: a user supplier gets Stores.windowStoreBuilder's defaults (logging on, no
				// extra topic configs).
			case sj.noLogging:
				wb.WithLoggingDisabled()
			default:
				wb.WithLoggingEnabled(logCfg)
			}
			return wb
		}}
	}
	thisStore := windowStore(sj.thisStoreSupplier, thisGen, joinThisSuffix, thisSerde)
	otherStore := windowStore(sj.otherStoreSupplier, otherGen, joinOtherSuffix, otherSerde)
	if thisStore == nil || otherStore == nil {
		return KStream[K, VR]{s: s.derive(mergeN, s.s.node, nil, nil, false)}
	}

	var outerBuilder *outerJoinStoreBuilder
	if leftOuter {
		suffix := "-left-shared-join"
		genPrefix := joinThisName
		if rightOuter {
			suffix, genPrefix = "-outer-shared-join", outerThisName
		}
		name := outerSharedName + thisGen[len(genPrefix):]
		switch {
		case sj.thisStoreSupplier != nil && sj.thisStoreSupplier.Name() != "":
			name = sj.thisStoreSupplier.Name() + suffix
		case sj.storeName != "":
			name = sj.storeName + suffix
		}
		outerBuilder = &outerJoinStoreBuilder{name: name + "-store", keySerde: keySerde, leftSerde: thisSerde, rightSerde: otherSerde,
			logging: !sj.noLogging, logConfig: sj.logConfig}
	}
	outerName := ""
	if outerBuilder != nil {
		outerName = outerBuilder.name
	}
	trackers := &timeTrackers{}
	var jf untypedJoiner
	if joiner != nil {
		jf = joinerOf(func(_ K, v V, o VO) VR { return joiner(v, o) })
	}
	thisProc := &streamStreamJoin{otherWindow: otherStore.name, outerStore: outerName, beforeMs: windows.beforeMs, afterMs: windows.afterMs,
		windowBefore: windows.beforeMs, windowAfter: windows.afterMs, graceMs: grace, joiner: jf, outer: leftOuter, leftSide: true, trackers: trackers}
	otherProc := &streamStreamJoin{otherWindow: thisStore.name, outerStore: outerName, beforeMs: windows.afterMs, afterMs: windows.beforeMs,
		windowBefore: windows.beforeMs, windowAfter: windows.afterMs, graceMs: grace, outer: rightOuter, leftSide: false, trackers: trackers}
	if jf != nil {
		otherProc.joiner = jf.reverse()
	}

	thisW := b.addNode(processorNode(thisWindowed, joinWindowSupplier{storeName: thisStore.name}, nil, nil), this.node)
	otherW := b.addNode(processorNode(otherWindowed, joinWindowSupplier{storeName: otherStore.name}, nil, nil), that.node)
	n := b.addNode(&graphNode{name: mergeN, write: func(t *processor.Topology, parents []string) error {
		if err := copartition(t, mergeN, parents[0], parents[1]); err != nil {
			return err
		}
		if err := t.AddProcessor(thisJoin, processor.ProcessorSupplier[any, any, any, any](thisProc), thisWindowed); err != nil {
			return err
		}
		if err := t.AddProcessor(otherJoin, processor.ProcessorSupplier[any, any, any, any](otherProc), otherWindowed); err != nil {
			return err
		}
		pass := funcSupplier{f: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
			return ctx.Forward(r)
		}}
		if err := t.AddProcessor(mergeN, processor.ProcessorSupplier[any, any, any, any](pass), thisJoin, otherJoin); err != nil {
			return err
		}
		if err := t.AddStateStore(thisStore.build(), thisWindowed, otherJoin); err != nil {
			return err
		}
		if err := t.AddStateStore(otherStore.build(), otherWindowed, thisJoin); err != nil {
			return err
		}
		if outerBuilder != nil {
			ob := *outerBuilder
			ob.supplier = outerJoinSupplier(b, ob.name, sj.thisStoreSupplier)
			return t.AddStateStore(&ob, thisJoin, otherJoin)
		}
		return nil
	}}, thisW, otherW)
	n.nullKeyRelaxedJoin = leftOuter || rightOuter // KIP-962: keeps null keys at upstream repartitions
	if this.node == that.node && jf != nil {
		// A join of a stream with itself: single.store.self.join (KIP-862) may rewrite it at
		// Build to one window store and one processor, named as the merge processor.
		self := &selfJoin{window: thisStore.name, beforeMs: windows.beforeMs, afterMs: windows.afterMs, retentionMs: retention, joiner: jf}
		n.selfJoin = &selfJoinRewrite{other: otherW, write: func(t *processor.Topology, _ []string) error {
			if err := t.AddProcessor(mergeN, processor.ProcessorSupplier[any, any, any, any](self), thisWindowed); err != nil {
				return err
			}
			return t.AddStateStore(thisStore.build(), thisWindowed, mergeN)
		}}
	}
	srcs := append(append([]string(nil), this.sourceNodes...), that.sourceNodes...)
	return KStream[K, VR]{s: &streamImpl{b: b, name: mergeN, node: n, keySerde: keySerde, sourceNodes: srcs}}
}

// selfJoinRewrite is how Build rewrites a stream-stream join of a stream with itself under
// single.store.self.join: other is the second windowed node (removed), write the join's
// single-processor form. Java: InternalStreamsBuilder.rewriteSingleStoreSelfJoin and
// StreamStreamJoinNode's self-join branch.
type selfJoinRewrite struct {
	other *graphNode
	write func(t *processor.Topology, parents []string) error
}

// rewriteSelfJoins applies single.store.self.join to every self-join (inner, left and outer
// alike, as Java does: every record of a self-join finds itself, so only records a left or
// outer join would emit unmatched, with a null key or late, are lost).
func (b *StreamsBuilder) rewriteSelfJoins() {
	for _, n := range b.nodes {
		if n.selfJoin == nil || n.removed {
			continue
		}
		o := n.selfJoin.other
		for _, p := range slices.Clone(o.parents) {
			p.removeChild(o)
		}
		o.removeChild(n)
		o.removed = true
		n.write = n.selfJoin.write
		n.selfJoin = nil
	}
}

// selfJoin is the processor supplier of a rewritten self-join: one window store holds the
// stream (written by the windowed processor after the record passed), and each record joins
// the records before and after it, and itself. Java: KStreamKStreamSelfJoin.
type selfJoin struct {
	window            string
	beforeMs, afterMs int64
	retentionMs       int64
	joiner            untypedJoiner
}

func (s *selfJoin) Get() processor.Processor[any, any, any, any] {
	return &selfJoinProc{s: s, streamTime: -1}
}

type selfJoinProc struct {
	s          *selfJoin
	ctx        processor.ProcessorContext[any, any]
	st         store.WindowStore[any, any]
	streamTime int64
}

func (p *selfJoinProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	st, err := processor.GetStateStore[store.WindowStore[any, any]](ctx, p.s.window)
	p.st = st
	return err
}

func (p *selfJoinProc) Close() error { return nil }

// fetch returns the stored records of key in [from, to] (clamped at 0), in time order.
func (p *selfJoinProc) fetch(key any, from, to int64) ([]store.KeyValue[int64, any], error) {
	it := p.st.FetchTimeRange(key, max(0, from), max(0, to))
	defer it.Close()
	var out []store.KeyValue[int64, any]
	for it.Next() {
		out = append(out, store.KeyValue[int64, any]{Key: it.Key(), Value: it.Value()})
	}
	return out, it.Err()
}

func (p *selfJoinProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil || r.Value == nil {
		if d, ok := p.ctx.(ktable.DroppedRecordsSensor); ok {
			d.RecordDropped(1) // Java: StreamStreamJoinUtil.skipRecord
		}
		return nil
	}
	s, ts := p.s, r.Timestamp
	self, err := s.joiner(r.Key, r.Value, r.Value)
	if err != nil {
		return err
	}
	p.streamTime = max(p.streamTime, ts)
	emitSelf := ts > p.streamTime-s.retentionMs+1
	emitted := false
	forward := func(v any, t int64) error {
		rec := r
		rec.Value, rec.Timestamp = v, t
		return p.ctx.Forward(rec)
	}
	// this record as the left side, stored records as the right side
	others, err := p.fetch(r.Key, ts-s.beforeMs, ts+s.afterMs)
	if err != nil {
		return err
	}
	for _, o := range others {
		v, err := s.joiner(r.Key, r.Value, o.Value)
		if err != nil {
			return err
		}
		if err := forward(v, max(ts, o.Key)); err != nil {
			return err
		}
	}
	// stored records as the left side; the self pair comes in timestamp order among them
	if others, err = p.fetch(r.Key, ts-s.afterMs, ts+s.beforeMs); err != nil {
		return err
	}
	for _, o := range others {
		if ts < max(ts, o.Key) && !emitted && emitSelf {
			emitted = true
			if err := forward(self, ts); err != nil {
				return err
			}
		}
		v, err := s.joiner(r.Key, o.Value, r.Value)
		if err != nil {
			return err
		}
		if err := forward(v, max(ts, o.Key)); err != nil {
			return err
		}
	}
	if !emitted && emitSelf {
		return forward(self, ts)
	}
	return nil
}
