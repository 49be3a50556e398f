package testdriver

import (
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	propnames "github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// Port of the papi-cache reference topology (conformance/README.md): Processor API processors
// whose stores have caching enabled and that forward from the record cache's flush listener,
// run with several cache sizes against Java's TopologyTestDriver.

// cacheDescribe renders "new|old|origin" as the Java topology does: origin is
// topic@partition/offset of the current record, "-" when there is none (punctuation).
func cacheDescribe(newValue, oldValue any, ctx processor.ProcessingContext) string {
	origin := "-"
	if md, ok := ctx.RecordMetadata(); ok && md.Topic != "" {
		origin = fmt.Sprintf("%s@%d/%d", md.Topic, md.Partition, md.Offset)
	}
	return javaString(newValue) + "|" + javaString(oldValue) + "|" + origin
}

// javaSplit is Java's String.split(" "): trailing empty strings are dropped.
func javaSplit(s string) []string {
	parts := strings.Split(s, " ")
	if len(parts) > 1 {
		for len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
	}
	return parts
}

// forwardOnFlush registers a flush listener on st that forwards every flushed entry as
// (prefix+key, cacheDescribe(new, old)) with the entry's timestamp and headers, and reports
// whether the store has a cache (Java: TimestampedTupleForwarder + TimestampedCacheFlushListener).
func forwardOnFlush[V any](st storeapi.CachedStateStore[string, V], ctx processor.ProcessorContext[any, any], prefix string, sendOldValues bool) bool {
	return st.SetFlushListener(func(r storeapi.CacheFlushRecord[string, V]) error {
		var nv, ov any
		if r.HasNewValue {
			nv = deref(r.NewValue)
		}
		if r.HasOldValue {
			ov = deref(r.OldValue)
		}
		return ctx.Forward(processor.Record[any, any]{Key: prefix + r.Key, Value: cacheDescribe(nv, ov, ctx),
			Timestamp: r.Timestamp, Headers: r.Headers})
	}, sendOldValues)
}

// deref turns a *int64 into its value (nil stays nil); other values are returned as they are.
func deref(v any) any {
	if p, ok := v.(*int64); ok {
		if p == nil {
			return nil
		}
		return *p
	}
	return v
}

// cacheCountProc counts with a nullable Long store (*int64: nil is Java's null) so that the
// null values Java's iterators can return print as "null".
type cacheCountProc struct {
	ctx     processor.ProcessorContext[any, any]
	counts  store.KeyValueStore[string, *int64]
	caching bool
}

func (p *cacheCountProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	if p.counts, err = processor.GetStateStore[store.KeyValueStore[string, *int64]](ctx, "Counts"); err != nil {
		return err
	}
	p.caching = forwardOnFlush(p.counts.(storeapi.CachedStateStore[string, *int64]), ctx, "", true)
	_, err = ctx.Schedule(10*time.Second, processor.WallClockTime, func(ts int64) error {
		return p.increment("tick", processor.Record[any, any]{Timestamp: ts})
	})
	return err
}

// increment adds one to word's count; without a cache it forwards at once, as rec.
func (p *cacheCountProc) increment(word string, rec processor.Record[any, any]) error {
	old, _, err := p.counts.Get(word)
	if err != nil {
		return err
	}
	now := int64(1)
	if old != nil {
		now = *old + 1
	}
	if err := p.counts.Put(word, &now); err != nil {
		return err
	}
	if p.caching {
		return nil
	}
	rec.Key, rec.Value = word, cacheDescribe(now, deref(old), p.ctx)
	return p.ctx.Forward(rec)
}

func (p *cacheCountProc) Process(r processor.Record[any, any]) error {
	if r.Value == nil {
		return nil
	}
	for _, token := range javaSplit(r.Value.(string)) {
		switch {
		case strings.HasPrefix(token, "-"):
			w := token[1:]
			old, _, err := p.counts.Delete(w)
			if err != nil {
				return err
			}
			if !p.caching {
				if err := p.ctx.Forward(r.WithKey(any(w)).WithValue(any(cacheDescribe(nil, deref(old), p.ctx)))); err != nil {
					return err
				}
			}
		case strings.HasPrefix(token, "?"):
			if _, _, err := p.counts.Get(token[1:]); err != nil {
				return err
			}
		case token == "*" || token == "<":
			it := p.counts.All()
			if token == "<" {
				it = p.counts.ReverseAll()
			}
			all, err := store.Collect(it)
			if err != nil {
				return err
			}
			var parts []string
			for _, kv := range all {
				parts = append(parts, kv.Key+"="+javaString(deref(kv.Value)))
			}
			if err := p.ctx.Forward(r.WithKey(any(token)).WithValue(any(strings.Join(parts, ",")))); err != nil {
				return err
			}
		default:
			if err := p.increment(token, r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *cacheCountProc) Close() error { return nil }

type cacheLastProc struct {
	ctx     processor.ProcessorContext[any, any]
	last    store.KeyValueStore[string, string]
	caching bool
}

func (p *cacheLastProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	if p.last, err = processor.GetStateStore[store.KeyValueStore[string, string]](ctx, "Last"); err != nil {
		return err
	}
	p.caching = forwardOnFlush(p.last.(storeapi.CachedStateStore[string, string]), ctx, "L:", false)
	return nil
}

func (p *cacheLastProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil {
		return nil
	}
	key := r.Key.(string)
	if r.Value == nil {
		if _, _, err := p.last.Delete(key); err != nil {
			return err
		}
	} else {
		if err := p.last.Put(key, r.Value.(string)); err != nil {
			return err
		}
	}
	if p.caching {
		return nil
	}
	return p.ctx.Forward(r.WithKey(any("L:" + key)).WithValue(any(cacheDescribe(r.Value, nil, p.ctx))))
}

func (p *cacheLastProc) Close() error { return nil }

func papiCacheTopology(t *testing.T) *processor.Topology {
	topo := processor.NewTopology()
	str := serde.String()
	must(t, topo.AddSource("Input", []string{"papi-cache-input"}, processor.WithKeyDeserializer[string](str), processor.WithValueDeserializer[string](str)))
	must(t, topo.AddProcessor("Count", untypedSupplier(func() processor.Processor[any, any, any, any] { return &cacheCountProc{} }), "Input"))
	must(t, topo.AddProcessor("Last", untypedSupplier(func() processor.Processor[any, any, any, any] { return &cacheLastProc{} }), "Input"))
	must(t, topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Nullable(serde.Long())).WithCachingEnabled(), "Count"))
	must(t, topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Last"), serde.String(), serde.String()).WithCachingEnabled(), "Last"))
	must(t, topo.AddSink("Output", "papi-cache-output", []string{"Count", "Last"}, processor.WithKeySerializer[string](str), processor.WithValueSerializer[string](str)))
	return topo
}

func papiCacheCase(configs ...string) conformanceCase {
	props := withProps(stringDefaults, propnames.ApplicationIDConfig, "papi-cache")
	for _, c := range configs {
		k, v, _ := strings.Cut(c, "=")
		props[k] = v
	}
	return conformanceCase{
		name:  "papi-cache",
		props: props,
		build: papiCacheTopology,
		types: typesOf(map[string][2]conformance.Kind{
			"papi-cache-Counts-changelog": {conformance.KindString, conformance.KindLong},
			"papi-cache-Last-changelog":   {conformance.KindString, conformance.KindString},
			"papi-cache-output":           {conformance.KindString, conformance.KindString},
		}, nil),
	}
}

// cacheConfigs are the cache settings papi-cache runs with: the default 10 MiB; 0 (caching
// layers stripped: one output per write); sizes that force evictions at different points
// (including evictions caused by reads that load clean entries); and the deprecated
// cache.max.bytes.buffering, which the 4.4 driver only uses to decide whether caching is on.
var cacheConfigs = [][]string{
	nil,
	{"statestore.cache.max.bytes=0"},
	{"statestore.cache.max.bytes=1"},
	{"statestore.cache.max.bytes=150"},
	{"statestore.cache.max.bytes=200"},
	{"statestore.cache.max.bytes=300"},
	{"statestore.cache.max.bytes=450"},
	{"statestore.cache.max.bytes=700"},
	{"statestore.cache.max.bytes=1000"},
	{"statestore.cache.max.bytes=1500"},
	{"cache.max.bytes.buffering=0"},
	{"cache.max.bytes.buffering=200"},
	{"cache.max.bytes.buffering=0", "statestore.cache.max.bytes=300"},
	{"cache.max.bytes.buffering=300", "statestore.cache.max.bytes=0"},
}

// TestConformancePapiCache runs papi-cache with every cache setting in our driver and in Java's
// TopologyTestDriver (with the same --config) and requires identical output: sink records in
// the order the flush listeners and direct forwards produce them, changelog writes (collapsed
// per key between commits, written on flush or eviction), timestamps and headers of the writes
// that put the entries in the cache, and the restored record origin seen by the listener.
func TestConformancePapiCache(t *testing.T) {
	vector := filepath.Join("..", "conformance", "vectors", "papi-cache.jsonl")
	events, err := conformance.ReadEventsFile(vector)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range cacheConfigs {
		name := strings.Join(cfg, ",")
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			c := papiCacheCase(cfg...)
			got := runGo(t, c, events)
			want, describe := conformance.RunJava(t, c.name, vector, cfg...)
			if diff := conformance.DiffOutputs(want, got); diff != "" {
				t.Fatalf("output differs from Java (%d Java records, %d Go records):\n%s", len(want), len(got), diff)
			}
			if gd := c.build(t).Describe().String(); gd != describe {
				t.Fatalf("describe differs:\n--- java\n%s\n--- go\n%s", describe, gd)
			}
		})
	}
}

// TestGoldenPapiCache checks the default-cache run against the committed Java golden file, so
// the check runs without a JVM too.
func TestGoldenPapiCache(t *testing.T) {
	c := papiCacheCase()
	events, err := conformance.ReadEventsFile(filepath.Join("..", "conformance", "vectors", c.name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := conformance.ReadOutputsFile(filepath.Join("..", "conformance", "golden", c.name+".out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := conformance.DiffOutputs(want, runGo(t, c, events)); diff != "" {
		t.Fatalf("output differs from the Java golden file:\n%s", diff)
	}
}

// --- papi-window-cache ---

// cachedWindowStoreBuilder builds Metered(Caching(ChangeLogging(engine))) window stores, as
// Java's WindowStoreBuilder with caching and logging enabled does.
func cachedWindowStoreBuilder(sup store.WindowBytesStoreSupplier) processor.StoreBuilder {
	return store.Stores.WindowStoreBuilder(sup, serde.String(), serde.Nullable(serde.Long())).WithCachingEnabled()
}

type cacheWinProc struct {
	ctx     processor.ProcessorContext[any, any]
	windows store.WindowStore[string, *int64]
	caching bool
}

func (p *cacheWinProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	if p.windows, err = processor.GetStateStore[store.WindowStore[string, *int64]](ctx, "Windows"); err != nil {
		return err
	}
	p.caching = p.windows.(storeapi.CachedStateStore[serde.Windowed[string], *int64]).SetFlushListener(func(r storeapi.CacheFlushRecord[serde.Windowed[string], *int64]) error {
		return ctx.Forward(processor.Record[any, any]{Key: fmt.Sprintf("%s@%d", r.Key.Key, r.Key.Window.Start),
			Value: cacheDescribe(deref(r.NewValue), deref(r.OldValue), ctx), Timestamp: r.Timestamp, Headers: r.Headers})
	}, true)
	return nil
}

func (p *cacheWinProc) Process(r processor.Record[any, any]) error {
	if r.Value == nil {
		return nil
	}
	base := r.Timestamp / 10000 * 10000
	fwd := func(key string, value string) error {
		return p.ctx.Forward(r.WithKey(any(key)).WithValue(any(value)))
	}
	for _, token := range javaSplit(r.Value.(string)) {
		switch {
		case strings.HasPrefix(token, "-"):
			w := token[1:]
			old, _, err := p.windows.Fetch(w, base)
			if err != nil {
				return err
			}
			if err := p.windows.Put(w, nil, base); err != nil {
				return err
			}
			if !p.caching {
				if err := fwd(fmt.Sprintf("%s@%d", w, base), cacheDescribe(nil, deref(old), p.ctx)); err != nil {
					return err
				}
			}
		case strings.HasPrefix(token, "?"):
			if _, _, err := p.windows.Fetch(token[1:], base); err != nil {
				return err
			}
		case token == "*":
			all, err := store.Collect(p.windows.FetchAll(0, math.MaxInt64))
			if err != nil {
				return err
			}
			var parts []string
			for _, kv := range all {
				parts = append(parts, fmt.Sprintf("%s@%d=%s", kv.Key.Key, kv.Key.Window.Start, javaString(deref(kv.Value))))
			}
			if err := fwd("*", strings.Join(parts, ",")); err != nil {
				return err
			}
		case strings.HasPrefix(token, "<"):
			all, err := store.Collect(p.windows.BackwardFetchTimeRange(token[1:], 0, math.MaxInt64))
			if err != nil {
				return err
			}
			var parts []string
			for _, kv := range all {
				parts = append(parts, fmt.Sprintf("%d=%s", kv.Key, javaString(deref(kv.Value))))
			}
			if err := fwd(token, strings.Join(parts, ",")); err != nil {
				return err
			}
		default:
			for start := base; start >= max(0, base-10000); start -= 10000 {
				old, _, err := p.windows.Fetch(token, start)
				if err != nil {
					return err
				}
				now := int64(1)
				if old != nil {
					now = *old + 1
				}
				if err := p.windows.Put(token, &now, start); err != nil {
					return err
				}
				if !p.caching {
					if err := fwd(fmt.Sprintf("%s@%d", token, start), cacheDescribe(now, deref(old), p.ctx)); err != nil {
						return err
					}
				}
				if start == 0 {
					break
				}
			}
		}
	}
	return nil
}

func (p *cacheWinProc) Close() error { return nil }

func papiWindowCacheTopology(t *testing.T) *processor.Topology {
	topo := processor.NewTopology()
	str := serde.String()
	sup, err := store.Stores.PersistentWindowStore("Windows", time.Hour, 10*time.Second, false)
	must(t, err)
	must(t, topo.AddSource("Input", []string{"papi-window-cache-input"}, processor.WithKeyDeserializer[string](str), processor.WithValueDeserializer[string](str)))
	must(t, topo.AddProcessor("Win", untypedSupplier(func() processor.Processor[any, any, any, any] { return &cacheWinProc{} }), "Input"))
	must(t, topo.AddStateStore(cachedWindowStoreBuilder(sup), "Win"))
	must(t, topo.AddSink("Output", "papi-window-cache-output", []string{"Win"}, processor.WithKeySerializer[string](str), processor.WithValueSerializer[string](str)))
	return topo
}

func papiWindowCacheCase(configs ...string) conformanceCase {
	c := papiCacheCase(configs...)
	c.name = "papi-window-cache"
	c.props[propnames.ApplicationIDConfig] = "papi-window-cache"
	c.build = papiWindowCacheTopology
	c.types = typesOf(map[string][2]conformance.Kind{
		"papi-window-cache-output":            {conformance.KindString, conformance.KindString},
		"papi-window-cache-Windows-changelog": {conformance.KindBytes, conformance.KindLong},
	}, nil)
	return c
}

// TestConformancePapiWindowCache runs a Processor API topology over a cached persistent window
// store (Pebble here, RocksDB in Java) with a flush listener against Java with several cache
// sizes: collapsed window updates, window tombstones, point fetches, fetchAll and backward
// fetch merges (including Java's reverse-order tombstone quirk) and evictions.
func TestConformancePapiWindowCache(t *testing.T) {
	vector := filepath.Join("..", "conformance", "vectors", "papi-window-cache.jsonl")
	events, err := conformance.ReadEventsFile(vector)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range [][]string{nil, {"statestore.cache.max.bytes=0"}, {"statestore.cache.max.bytes=1"},
		{"statestore.cache.max.bytes=200"}, {"statestore.cache.max.bytes=500"}} {
		name := strings.Join(cfg, ",")
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			c := papiWindowCacheCase(cfg...)
			got := runGo(t, c, events)
			want, describe := conformance.RunJava(t, c.name, vector, cfg...)
			if diff := conformance.DiffOutputs(want, got); diff != "" {
				t.Fatalf("output differs from Java (%d Java records, %d Go records):\n%s", len(want), len(got), diff)
			}
			if gd := c.build(t).Describe().String(); gd != describe {
				t.Fatalf("describe differs:\n--- java\n%s\n--- go\n%s", describe, gd)
			}
		})
	}
}

// TestGoldenPapiWindowCache checks the default-cache run against the committed Java golden file.
func TestGoldenPapiWindowCache(t *testing.T) {
	c := papiWindowCacheCase()
	events, err := conformance.ReadEventsFile(filepath.Join("..", "conformance", "vectors", c.name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := conformance.ReadOutputsFile(filepath.Join("..", "conformance", "golden", c.name+".out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := conformance.DiffOutputs(want, runGo(t, c, events)); diff != "" {
		t.Fatalf("output differs from the Java golden file:\n%s", diff)
	}
}

// --- papi-session-cache ---

// cachedSessionStoreBuilder builds Metered(Caching(ChangeLogging(engine))) session stores, as
// Java's SessionStoreBuilder with caching and logging enabled does.
func cachedSessionStoreBuilder(sup store.SessionBytesStoreSupplier) processor.StoreBuilder {
	return store.Stores.SessionStoreBuilder(sup, serde.String(), serde.Nullable(serde.Long())).WithCachingEnabled()
}

func sessionName(w serde.Windowed[string]) string {
	return fmt.Sprintf("%s@%d-%d", w.Key, w.Window.Start, w.Window.End)
}

type cacheSessProc struct {
	ctx      processor.ProcessorContext[any, any]
	sessions store.SessionStore[string, *int64]
	caching  bool
}

func (p *cacheSessProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	if p.sessions, err = processor.GetStateStore[store.SessionStore[string, *int64]](ctx, "Sessions"); err != nil {
		return err
	}
	p.caching = p.sessions.(storeapi.CachedStateStore[serde.Windowed[string], *int64]).SetFlushListener(func(r storeapi.CacheFlushRecord[serde.Windowed[string], *int64]) error {
		return ctx.Forward(processor.Record[any, any]{Key: sessionName(r.Key),
			Value: cacheDescribe(deref(r.NewValue), deref(r.OldValue), ctx), Timestamp: r.Timestamp, Headers: r.Headers})
	}, true)
	return nil
}

func (p *cacheSessProc) Process(r processor.Record[any, any]) error {
	if r.Value == nil {
		return nil
	}
	ts := r.Timestamp
	fwd := func(key, value string) error { return p.ctx.Forward(r.WithKey(any(key)).WithValue(any(value))) }
	list := func(it store.KeyValueIterator[serde.Windowed[string], *int64], full bool) (string, error) {
		all, err := store.Collect(it)
		if err != nil {
			return "", err
		}
		var parts []string
		for _, kv := range all {
			name := fmt.Sprintf("%d-%d", kv.Key.Window.Start, kv.Key.Window.End)
			if full {
				name = sessionName(kv.Key)
			}
			parts = append(parts, name+"="+javaString(deref(kv.Value)))
		}
		return strings.Join(parts, ","), nil
	}
	for _, token := range javaSplit(r.Value.(string)) {
		switch {
		case token == "*":
			// Java: findSessions(null, null, 0, Long.MAX_VALUE) on the bytes level.
			s, err := list(p.sessions.FindSessionsRange("", "\xff\xff\xff\xff", 0, math.MaxInt64), true)
			if err != nil {
				return err
			}
			if err := fwd("*", s); err != nil {
				return err
			}
		case strings.HasPrefix(token, "<"):
			s, err := list(p.sessions.BackwardFetch(token[1:]), false)
			if err != nil {
				return err
			}
			if err := fwd(token, s); err != nil {
				return err
			}
		default:
			remove := strings.HasPrefix(token, "-")
			w, from, to := token, ts-5000, ts+5000
			if remove {
				w, from, to = token[1:], ts, ts
			}
			found, err := store.Collect(p.sessions.FindSessions(w, from, to))
			if err != nil {
				return err
			}
			start, end, sum := ts, ts, int64(1)
			for _, kv := range found {
				start, end = min(start, kv.Key.Window.Start), max(end, kv.Key.Window.End)
				if kv.Value != nil {
					sum += *kv.Value
				}
				if err := p.sessions.Remove(kv.Key); err != nil {
					return err
				}
				if !p.caching {
					if err := fwd(sessionName(kv.Key), cacheDescribe(nil, deref(kv.Value), p.ctx)); err != nil {
						return err
					}
				}
			}
			if remove {
				continue
			}
			merged := serde.Windowed[string]{Key: w, Window: serde.Window{Start: start, End: end}}
			if err := p.sessions.Put(merged, &sum); err != nil {
				return err
			}
			if !p.caching {
				if err := fwd(sessionName(merged), cacheDescribe(sum, nil, p.ctx)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (p *cacheSessProc) Close() error { return nil }

func papiSessionCacheTopology(t *testing.T) *processor.Topology {
	topo := processor.NewTopology()
	str := serde.String()
	sup, err := store.Stores.PersistentSessionStore("Sessions", time.Hour)
	must(t, err)
	must(t, topo.AddSource("Input", []string{"papi-session-cache-input"}, processor.WithKeyDeserializer[string](str), processor.WithValueDeserializer[string](str)))
	must(t, topo.AddProcessor("Sess", untypedSupplier(func() processor.Processor[any, any, any, any] { return &cacheSessProc{} }), "Input"))
	must(t, topo.AddStateStore(cachedSessionStoreBuilder(sup), "Sess"))
	must(t, topo.AddSink("Output", "papi-session-cache-output", []string{"Sess"}, processor.WithKeySerializer[string](str), processor.WithValueSerializer[string](str)))
	return topo
}

func papiSessionCacheCase(configs ...string) conformanceCase {
	c := papiCacheCase(configs...)
	c.name = "papi-session-cache"
	c.props[propnames.ApplicationIDConfig] = "papi-session-cache"
	c.build = papiSessionCacheTopology
	c.types = typesOf(map[string][2]conformance.Kind{
		"papi-session-cache-output":             {conformance.KindString, conformance.KindString},
		"papi-session-cache-Sessions-changelog": {conformance.KindBytes, conformance.KindLong},
	}, nil)
	return c
}

// TestConformancePapiSessionCache runs a Processor API topology over a cached persistent session
// store (Pebble here, RocksDB in Java) with a flush listener against Java with several cache
// sizes: session merges (removes + put), removes of absent sessions, finds merging the cache
// with the store, backward fetches and evictions.
func TestConformancePapiSessionCache(t *testing.T) {
	vector := filepath.Join("..", "conformance", "vectors", "papi-session-cache.jsonl")
	events, err := conformance.ReadEventsFile(vector)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range [][]string{nil, {"statestore.cache.max.bytes=0"}, {"statestore.cache.max.bytes=1"},
		{"statestore.cache.max.bytes=200"}, {"statestore.cache.max.bytes=500"}} {
		name := strings.Join(cfg, ",")
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			c := papiSessionCacheCase(cfg...)
			got := runGo(t, c, events)
			want, describe := conformance.RunJava(t, c.name, vector, cfg...)
			if diff := conformance.DiffOutputs(want, got); diff != "" {
				t.Fatalf("output differs from Java (%d Java records, %d Go records):\n%s", len(want), len(got), diff)
			}
			if gd := c.build(t).Describe().String(); gd != describe {
				t.Fatalf("describe differs:\n--- java\n%s\n--- go\n%s", describe, gd)
			}
		})
	}
}

// TestGoldenPapiSessionCache checks the default-cache run against the committed Java golden file.
func TestGoldenPapiSessionCache(t *testing.T) {
	c := papiSessionCacheCase()
	events, err := conformance.ReadEventsFile(filepath.Join("..", "conformance", "vectors", c.name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := conformance.ReadOutputsFile(filepath.Join("..", "conformance", "golden", c.name+".out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := conformance.DiffOutputs(want, runGo(t, c, events)); diff != "" {
		t.Fatalf("output differs from the Java golden file:\n%s", diff)
	}
}
