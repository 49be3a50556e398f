package kstream

import (
	"fmt"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

const dedupeName = "KSTREAM-DEDUPLICATE-"

// Deduplicated configures a deduplication ([KStream.DeduplicateByKey], [KStream.Deduplicate]):
// the processor and store names, the serde of the ids (they are the store's keys) and the
// store's changelog. The zero value means generated names, the stream's key serde (by key) or
// the default key serde (extracted ids), and a changelog. This operator has no Java
// counterpart yet (KIP-655 plans one); the option follows Grouped/Materialized.
type Deduplicated[ID any] struct {
	name      string
	idSerde   serde.Serde[ID]
	noLogging bool
	logConfig map[string]string
}

// DeduplicatedAs names the processor name and its store "<name>-store" (changelog
// "<application.id>-<name>-store-changelog").
func DeduplicatedAs[ID any](name string) Deduplicated[ID] { return Deduplicated[ID]{name: name} }

// DeduplicatedWith sets the id serde.
func DeduplicatedWith[ID any](idSerde serde.Serde[ID]) Deduplicated[ID] {
	return Deduplicated[ID]{idSerde: idSerde}
}

// WithName returns a copy with the processor name (store "<name>-store").
func (d Deduplicated[ID]) WithName(name string) Deduplicated[ID] { d.name = name; return d }

// WithIDSerde returns a copy with the id serde.
func (d Deduplicated[ID]) WithIDSerde(s serde.Serde[ID]) Deduplicated[ID] { d.idSerde = s; return d }

// WithLoggingDisabled returns a copy whose store has no changelog: the seen ids are then lost
// when the task moves or the application restarts (duplicates across a restart pass).
func (d Deduplicated[ID]) WithLoggingDisabled() Deduplicated[ID] { d.noLogging = true; return d }

// WithLoggingEnabled returns a copy with a changelog (the default) and extra topic configs.
func (d Deduplicated[ID]) WithLoggingEnabled(config map[string]string) Deduplicated[ID] {
	d.noLogging, d.logConfig = false, config
	return d
}

// DeduplicateByKey drops every record whose key was already forwarded within window of it: a
// record with timestamp t is forwarded only if no forwarded record with the same key has a
// timestamp in [max(0, t-window), t+window]; a forwarded record starts a new window for its key, a
// dropped one does not (so a key repeated forever comes out about once per window). Records
// with a null key are forwarded. See [KStream.Deduplicate] for the store, names and
// guarantees; the ids are the keys, serialized with the stream's key serde (or d's).
// Build fails with ErrInvalidWindows for a window <= 0.
func (s KStream[K, V]) DeduplicateByKey(window time.Duration, d ...Deduplicated[K]) KStream[K, V] {
	opt := lastDeduplicated(d)
	if opt.idSerde == nil && s.s.keySerde != nil {
		return deduplicate(s, nil, window, opt, s.s.keySerde, false)
	}
	return deduplicate(s, nil, window, opt, nil, false)
}

// Deduplicate drops every record whose id (idOf(key, value)) was already forwarded within
// window of it, as DeduplicateByKey does with keys; a nil id (a nil pointer, slice, map or
// interface) forwards the record. Records with the same id must be in the same partition (the
// id derived from the key, or the stream re-keyed by id first): each task deduplicates its own
// records only.
//
// The seen ids live in a window store (Pebble by default, in memory with
// default.dsl.store=in_memory) named "KSTREAM-DEDUPLICATE-STATE-STORE-<n>" (or "<name>-store"),
// key = id, value = the forwarded record's timestamp (Long), window start = that timestamp,
// retention 2 x window, backed by the changelog "<application.id>-<store>-changelog": a restart
// or a task move restores it, and under exactly-once the store's changes commit with the
// output, so each id is forwarded once per window across crashes. The lookup is exact for
// records at most one window behind stream time; an id older than that may already have
// expired. The processor is "KSTREAM-DEDUPLICATE-<n>" (or d's name). A stream that needs
// repartitioning (after a key change) is repartitioned through "<store>-repartition" first, as
// aggregations are.
//
// Java has no such operator yet (KIP-655 plans deduplicateByKey / deduplicate): Java users write
// it by hand as a Processor over a WindowStore<ID, Long> with the same fetch(id, t-window,
// t+window) test and put(id, t, t).
// Build fails (a *processor.TopologyError) for a window <= 0 (also matching ErrInvalidWindows)
// and for a nil idOf.
func (s KStream[K, V]) Deduplicate[ID any](idOf func(K, V) ID, window time.Duration, d ...Deduplicated[ID]) KStream[K, V] {
	opt := lastDeduplicated(d)
	if idOf == nil {
		return deduplicate(s, nil, window, opt, nil, true)
	}
	f := func(key, value any) (any, error) {
		k, v, err := cast2[K, V](key, value)
		if err != nil {
			return nil, err
		}
		return box(idOf(k, v)), nil
	}
	return deduplicate(s, f, window, opt, nil, false)
}

func lastDeduplicated[ID any](d []Deduplicated[ID]) Deduplicated[ID] {
	if len(d) == 0 {
		return Deduplicated[ID]{}
	}
	return d[len(d)-1]
}

// deduplicate adds the deduplication; a nil idOf deduplicates by key, and nilIDOf reports that
// Deduplicate got a nil id extractor (the build fails once the processor's name is known).
func deduplicate[K, V, ID any](s KStream[K, V], idOf func(key, value any) (any, error), window time.Duration, d Deduplicated[ID], idSerde serde.Serde[any], nilIDOf bool) KStream[K, V] {
	b := s.s.b
	w := max(window.Milliseconds(), 1) // an invalid window fails below, once the name is known
	if d.idSerde != nil {
		idSerde = untyped(d.idSerde)
	}
	var storeName, name string
	if d.name != "" {
		b.checkName(d.name)
		storeName = d.name + "-store"
	} else {
		storeName = b.newStoreName(dedupeName)
	}
	parent, sources := s.s.node, s.s.sourceNodes
	if s.s.repartitionRequired {
		prefix := d.name
		if prefix == "" {
			prefix = storeName
		}
		rp := b.newRepartition(prefix, s.s.keySerde, s.s.valueSerde, nil)
		parent, sources = b.addNode(rp.node(), parent), []string{rp.source}
	}
	name = b.orElseGenerate(d.name, dedupeName)
	if nilIDOf {
		b.fail(dslErr(name, nil, "%s: id extractor must not be nil", name))
	}
	if window.Milliseconds() <= 0 {
		b.fail(dslErr(name, ErrInvalidWindows, "%s: window must be at least 1 ms, got %v", name, window))
	}
	retention := 2 * w
	sb := func() processor.StoreBuilder {
		sup, err := b.dslWindowStore(storeName, retention, w, false)
		if err != nil {
			b.fail(err)
			return nil
		}
		wb := store.Stores.WindowStoreBuilder[any, any](sup, idSerde, serde.Untyped(serde.Long()))
		if d.noLogging {
			wb.WithLoggingDisabled()
		} else {
			wb.WithLoggingEnabled(d.logConfig)
		}
		return wb
	}
	sup := &dedupeSupplier{store: storeName, windowMs: w, idOf: idOf}
	n := b.addNode(processorNode(name, sup, nil, sb), parent)
	return KStream[K, V]{s: &streamImpl{b: b, name: name, node: n, keySerde: s.s.keySerde, valueSerde: s.s.valueSerde, sourceNodes: sources}}
}

type dedupeSupplier struct {
	store    string
	windowMs int64
	idOf     func(key, value any) (any, error) // nil: the key
}

func (d *dedupeSupplier) Get() processor.Processor[any, any, any, any] { return &dedupeProc{d: d} }

type dedupeProc struct {
	d     *dedupeSupplier
	ctx   processor.ProcessorContext[any, any]
	store store.WindowStore[any, any]
}

func (p *dedupeProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	p.store, err = processor.GetStateStore[store.WindowStore[any, any]](ctx, p.d.store)
	return err
}

func (p *dedupeProc) Process(r processor.Record[any, any]) error {
	id := r.Key
	if p.d.idOf != nil {
		var err error
		if id, err = p.d.idOf(r.Key, r.Value); err != nil {
			return err
		}
	}
	if id == nil {
		return p.ctx.Forward(r)
	}
	t := r.Timestamp
	it := p.store.FetchTimeRange(id, max(0, t-p.d.windowMs), t+p.d.windowMs)
	seen := it.Next()
	err := it.Err()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("deduplicate %s: %w", p.d.store, err)
	}
	if seen {
		return nil
	}
	if err := p.store.Put(id, t, t); err != nil {
		return err
	}
	return p.ctx.Forward(r)
}

func (p *dedupeProc) Close() error { return nil }
