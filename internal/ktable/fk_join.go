package ktable

import (
	"bytes"
	"fmt"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// Foreign-key join processors (KIP-213). The primary table (key K, value V) sends a
// subscription (keyed by the foreign key) for each row change; the foreign side stores it in a
// subscription store keyed by the combined key (foreign key, primary key), answers it with the
// current foreign value, and answers every subscriber again when a foreign row changes (prefix
// scan of the store); the primary side joins each response with its current row, dropping
// responses whose hash does not match the row any more. Java counterpart: the classes of
// org.apache.kafka.streams.kstream.internals.foreignkeyjoin.

// ForeignKeyExtractor returns the foreign key of a (non-null) primary row; nil means no foreign
// key (the row does not join; a left join emits it with a null foreign value). Java:
// ForeignKeyExtractor (Function<V, KO> or BiFunction<K, V, KO>).
type ForeignKeyExtractor func(key, value any) (any, error)

// CombinedKey is the key of the records between the subscription receive and join processors.
// Java: CombinedKey.
type CombinedKey struct {
	// ForeignKey is the subscription's foreign key (nil for a left join's null foreign key).
	ForeignKey any
	// PrimaryKey is the subscriber's key.
	PrimaryKey any
}

// ---------------------------------------------------------------------------------------------
// Primary side: subscription send

// SubscriptionSend is the supplier of the processor under the primary table that turns its
// Changes into subscription records keyed by foreign key. It needs old values from the primary
// table. Java: SubscriptionSendProcessorSupplier.
type SubscriptionSend struct {
	extract  ForeignKeyExtractor
	serdes   *FKSerdes
	leftJoin bool
}

// NewSubscriptionSend returns the supplier.
func NewSubscriptionSend(extract ForeignKeyExtractor, serdes *FKSerdes, leftJoin bool) *SubscriptionSend {
	return &SubscriptionSend{extract: extract, serdes: serdes, leftJoin: leftJoin}
}

// Get returns a new processor.
func (s *SubscriptionSend) Get() processor.Processor[any, any, any, any] {
	return &subscriptionSendProc{s: s}
}

type subscriptionSendProc struct {
	base
	s *SubscriptionSend
	// per record: the hash of the new value, computed once
	hash     *ValueHash
	hashDone bool
}

func (p *subscriptionSendProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	return p.s.serdes.bind(ctx)
}

func (p *subscriptionSendProc) Process(r processor.Record[any, any]) error {
	p.hash, p.hashDone = nil, false
	c := r.Value.(Change)
	if p.s.leftJoin {
		return p.leftJoin(r, c)
	}
	return p.innerJoin(r, c)
}

func (p *subscriptionSendProc) fk(key, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	return p.s.extract(key, v)
}

// changed reports whether two foreign keys serialize differently (nil = null).
func (p *subscriptionSendProc) changed(a, b any) (bool, error) {
	ab, err := p.s.serdes.serializeFK(a)
	if err != nil {
		return false, err
	}
	bb, err := p.s.serdes.serializeFK(b)
	if err != nil {
		return false, err
	}
	if (ab == nil) != (bb == nil) {
		return true, nil
	}
	return !bytes.Equal(ab, bb), nil
}

func (p *subscriptionSendProc) leftJoin(r processor.Record[any, any], c Change) error {
	if c.Old == nil && c.New == nil {
		return nil
	}
	oldFK, err := p.fk(r.Key, c.Old)
	if err != nil {
		return err
	}
	newFK, err := p.fk(r.Key, c.New)
	if err != nil {
		return err
	}
	if oldFK != nil {
		ch, err := p.changed(newFK, oldFK)
		if err != nil {
			return err
		}
		if ch {
			if err := p.send(r, c, oldFK, DeleteKeyNoPropagate); err != nil {
				return err
			}
		}
	}
	// always a new subscription (for a delete or a null foreign key too): the response
	// produces the left-join result
	return p.send(r, c, newFK, PropagateNullIfNoFKValAvailable)
}

func (p *subscriptionSendProc) innerJoin(r processor.Record[any, any], c Change) error {
	oldFK, err := p.fk(r.Key, c.Old)
	if err != nil {
		return err
	}
	unsubscribe := oldFK != nil
	if c.New == nil {
		if unsubscribe {
			return p.send(r, c, oldFK, DeleteKeyAndPropagate)
		}
		return nil
	}
	newFK, err := p.s.extract(r.Key, c.New)
	if err != nil {
		return err
	}
	if newFK == nil { // Java logs "Skipping record due to null foreign key" and counts a drop
		if unsubscribe {
			return p.send(r, c, oldFK, DeleteKeyAndPropagate)
		}
		return nil
	}
	if !unsubscribe {
		return p.send(r, c, newFK, PropagateOnlyIfFKValAvailable)
	}
	ch, err := p.changed(newFK, oldFK)
	if err != nil {
		return err
	}
	if !ch {
		return p.send(r, c, newFK, PropagateOnlyIfFKValAvailable)
	}
	if err := p.send(r, c, oldFK, DeleteKeyNoPropagate); err != nil {
		return err
	}
	return p.send(r, c, newFK, PropagateNullIfNoFKValAvailable)
}

func (p *subscriptionSendProc) send(r processor.Record[any, any], c Change, fk any, inst SubscriptionInstruction) error {
	if !p.hashDone {
		h, err := p.s.serdes.hashValue(c.New)
		if err != nil {
			return err
		}
		p.hash, p.hashDone = h, true
	}
	var part int32
	if md, ok := p.ctx.RecordMetadata(); ok {
		part = md.Partition
	}
	w := &SubscriptionWrapper{Hash: p.hash, Instruction: inst, PrimaryKey: r.Key, Version: subscriptionVersion, PrimaryPartition: part}
	return p.ctx.Forward(r.WithKey(fk).WithValue[any](w))
}

// ---------------------------------------------------------------------------------------------
// Foreign side: subscription receive, subscription join, foreign table join

// SubscriptionReceive is the supplier of the processor reading the subscription topic: it
// updates the subscription store (put, or delete for the delete instructions) and forwards the
// subscription with its combined key. Null foreign keys are dropped unless the instruction is
// PropagateNullIfNoFKValAvailable (a left join's null foreign key), which skips the store.
// Java: SubscriptionReceiveProcessorSupplier.
type SubscriptionReceive struct {
	storeName string
	serdes    *FKSerdes
}

// NewSubscriptionReceive returns the supplier writing store storeName.
func NewSubscriptionReceive(storeName string, serdes *FKSerdes) *SubscriptionReceive {
	return &SubscriptionReceive{storeName: storeName, serdes: serdes}
}

// Get returns a new processor.
func (s *SubscriptionReceive) Get() processor.Processor[any, any, any, any] {
	return &subscriptionReceiveProc{s: s}
}

type subscriptionReceiveProc struct {
	base
	s  *SubscriptionReceive
	st Store
}

func (p *subscriptionReceiveProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	if err := p.s.serdes.bind(ctx); err != nil {
		return err
	}
	st, err := GetStore(ctx, p.s.storeName)
	p.st = st
	return err
}

func (p *subscriptionReceiveProc) Process(r processor.Record[any, any]) error {
	sw, ok := r.Value.(*SubscriptionWrapper)
	if !ok {
		return fmt.Errorf("%w: subscription value %T", ErrBadSubscription, r.Value)
	}
	if r.Key == nil && sw.Instruction != PropagateNullIfNoFKValAvailable {
		return nil // Java: "Skipping record due to null foreign key", dropped-records
	}
	if sw.Version > subscriptionVersion {
		return fmt.Errorf("%w: subscription version %d", ErrBadSubscription, sw.Version)
	}
	nv := store.MakeValueAndTimestamp[any](sw, r.Timestamp)
	var ov *ValueAndTimestamp
	if r.Key != nil {
		k, err := p.s.serdes.combinedKey(r.Key, sw.PrimaryKey)
		if err != nil {
			return err
		}
		if ov, err = get(p.st, k); err != nil {
			return err
		}
		if sw.Instruction == DeleteKeyAndPropagate || sw.Instruction == DeleteKeyNoPropagate {
			if _, _, err := p.st.Delete(k); err != nil {
				return err
			}
		} else if err := p.st.Put(k, nv); err != nil {
			return err
		}
	}
	return p.ctx.Forward(r.WithKey[any](CombinedKey{ForeignKey: r.Key, PrimaryKey: sw.PrimaryKey}).WithValue[any](Change{New: nv, Old: ov}))
}

// SubscriptionJoin is the supplier of the processor answering a received subscription with the
// foreign value, as its instruction says, keyed by the primary key. Java:
// SubscriptionJoinProcessorSupplier.
//
// Unlike Java, the foreign value is read as the foreign table has forwarded it so far: the
// table's stores are read below their record caches (GetBelowCache of the typed layer the store builders make),
// never from an entry still dirty in a cache. Every change after that value then reaches the
// subscriber through ForeignTableJoin, which sees the table's changes only when the cache
// flushes them. Read through the cache (as Java does), a foreign row created and deleted again
// between two flushes could answer a subscription and then vanish without a trace: the cache
// flushes a delete of a key absent below as nothing, so the subscriber never learns of the
// delete and keeps the stale join result for good. With caching off, and in the test driver
// (which flushes after every record), the answers are the same as Java's.
type SubscriptionJoin struct {
	foreign ValueGetterSupplier
}

// NewSubscriptionJoin returns the supplier reading the foreign table through foreign.
func NewSubscriptionJoin(foreign ValueGetterSupplier) *SubscriptionJoin {
	return &SubscriptionJoin{foreign: foreign}
}

// Get returns a new processor.
func (s *SubscriptionJoin) Get() processor.Processor[any, any, any, any] {
	return &subscriptionJoinProc{getter: s.foreign.Get()}
}

type subscriptionJoinProc struct {
	base
	getter ValueGetter
}

func (p *subscriptionJoinProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	return p.getter.Init(flushedStores{ctx})
}

// flushedStores hands a value getter the key-value stores of ctx as their record caches last
// flushed them (see SubscriptionJoin); other stores are handed over as they are.
type flushedStores struct{ processor.ProcessingContext }

// belowCacheReader is the read of a typed store below its record cache.
type belowCacheReader interface {
	GetBelowCache(key any) (*ValueAndTimestamp, bool, error)
}

func (c flushedStores) StateStore(name string) (processor.StateStore, error) {
	st, err := c.ProcessingContext.StateStore(name)
	if err != nil {
		return nil, err
	}
	if s, ok := st.(Store); ok {
		if r, ok := st.(belowCacheReader); ok {
			return flushedStore{Store: s, below: r}, nil
		}
	}
	return st, nil
}

// flushedStore is a store whose Get reads below the record cache.
type flushedStore struct {
	Store
	below belowCacheReader
}

func (s flushedStore) Get(key any) (*ValueAndTimestamp, bool, error) {
	return s.below.GetBelowCache(key)
}

func (p *subscriptionJoinProc) Close() error { p.getter.Close(); return nil }

func (p *subscriptionJoinProc) Process(r processor.Record[any, any]) error {
	ck := r.Key.(CombinedKey)
	nv := r.Value.(Change).New.(*ValueAndTimestamp)
	sw := nv.Value.(*SubscriptionWrapper)
	var fv *ValueAndTimestamp
	if ck.ForeignKey != nil {
		var err error
		if fv, err = p.getter.Get(ck.ForeignKey); err != nil {
			return err
		}
	}
	ts := nv.Timestamp
	if fv != nil {
		ts = max(nv.Timestamp, fv.Timestamp)
	}
	resp := func(v any) error {
		return p.ctx.Forward(r.WithKey(ck.PrimaryKey).WithValue[any](&SubscriptionResponseWrapper{Hash: sw.Hash, ForeignValue: v,
			PrimaryPartition: sw.PrimaryPartition, HasPartition: sw.Version > 0}).WithTimestamp(ts))
	}
	switch sw.Instruction {
	case DeleteKeyAndPropagate:
		return resp(nil)
	case PropagateNullIfNoFKValAvailable:
		return resp(valueOf(fv))
	case PropagateOnlyIfFKValAvailable:
		if fv != nil {
			return resp(fv.Value)
		}
	}
	return nil
}

// ForeignTableJoin is the supplier of the processor under the foreign table: each change of a
// foreign row is sent to every subscriber of its key (prefix scan of the subscription store),
// with the subscriber's hash and partition and the record's timestamp. Java:
// ForeignTableJoinProcessorSupplier.
type ForeignTableJoin struct {
	storeName string
	serdes    *FKSerdes
}

// NewForeignTableJoin returns the supplier reading store storeName.
func NewForeignTableJoin(storeName string, serdes *FKSerdes) *ForeignTableJoin {
	return &ForeignTableJoin{storeName: storeName, serdes: serdes}
}

// Get returns a new processor.
func (s *ForeignTableJoin) Get() processor.Processor[any, any, any, any] {
	return &foreignTableJoinProc{s: s}
}

type foreignTableJoinProc struct {
	base
	s  *ForeignTableJoin
	st Store
}

func (p *foreignTableJoinProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	if err := p.s.serdes.bind(ctx); err != nil {
		return err
	}
	st, err := GetStore(ctx, p.s.storeName)
	p.st = st
	return err
}

func (p *foreignTableJoinProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil {
		return nil // Java: "Skipping record due to null key", dropped-records
	}
	c := r.Value.(Change)
	prefix, err := p.s.serdes.prefix(r.Key)
	if err != nil {
		return err
	}
	type sub struct {
		pk any
		sw *SubscriptionWrapper
	}
	var subs []sub
	it := p.st.PrefixScan(prefix)
	for it.Next() {
		kb, ok := it.Key().([]byte)
		if !ok || !bytes.HasPrefix(kb, prefix) {
			continue
		}
		pk, err := p.s.serdes.primaryKeyOf(kb)
		if err != nil {
			_ = it.Close()
			return err
		}
		subs = append(subs, sub{pk: pk, sw: it.Value().Value.(*SubscriptionWrapper)})
	}
	if err := it.Err(); err != nil {
		_ = it.Close()
		return err
	}
	if err := it.Close(); err != nil {
		return err
	}
	for _, s := range subs {
		if err := p.ctx.Forward(r.WithKey(s.pk).WithValue[any](&SubscriptionResponseWrapper{Hash: s.sw.Hash, ForeignValue: c.New,
			PrimaryPartition: s.sw.PrimaryPartition, HasPartition: s.sw.Version > 0})); err != nil {
			return err
		}
	}
	return nil
}

// ---------------------------------------------------------------------------------------------
// Primary side: response join

// ResponseJoin is the supplier of the processor reading the response topic: a response whose
// hash equals the hash of the primary row's current value is joined with it (a null foreign
// value gives a delete, except in a left join with a current row); stale responses are dropped.
// It forwards plain values (the result table's source turns them into Changes). Java:
// ResponseJoinProcessorSupplier.
type ResponseJoin struct {
	primary  ValueGetterSupplier
	serdes   *FKSerdes
	joiner   ValueJoiner
	leftJoin bool
}

// NewResponseJoin returns the supplier reading the primary table through primary.
func NewResponseJoin(primary ValueGetterSupplier, serdes *FKSerdes, joiner ValueJoiner, leftJoin bool) *ResponseJoin {
	return &ResponseJoin{primary: primary, serdes: serdes, joiner: joiner, leftJoin: leftJoin}
}

// Get returns a new processor.
func (s *ResponseJoin) Get() processor.Processor[any, any, any, any] {
	return &responseJoinProc{s: s, getter: s.primary.Get()}
}

type responseJoinProc struct {
	base
	s      *ResponseJoin
	getter ValueGetter
}

func (p *responseJoinProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	if err := p.s.serdes.bind(ctx); err != nil {
		return err
	}
	return p.getter.Init(ctx)
}

func (p *responseJoinProc) Close() error { p.getter.Close(); return nil }

func (p *responseJoinProc) Process(r processor.Record[any, any]) error {
	rw, ok := r.Value.(*SubscriptionResponseWrapper)
	if !ok {
		return fmt.Errorf("%w: response value %T", ErrBadSubscription, r.Value)
	}
	if rw.Version != 0 {
		return fmt.Errorf("%w: response version %d", ErrBadSubscription, rw.Version)
	}
	cur, err := p.getter.Get(r.Key)
	if err != nil {
		return err
	}
	curHash, err := p.s.serdes.hashValue(valueOf(cur))
	if err != nil {
		return err
	}
	if (curHash == nil) != (rw.Hash == nil) || (curHash != nil && *curHash != *rw.Hash) {
		return nil // stale response (Java: trace log + dropped-records)
	}
	var result any
	if rw.ForeignValue != nil || (p.s.leftJoin && cur != nil) {
		if result, err = p.s.joiner(r.Key, valueOf(cur), rw.ForeignValue); err != nil {
			return err
		}
	}
	r.Value = result
	return p.ctx.Forward(r)
}
