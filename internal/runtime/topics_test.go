package runtime

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

type nopProc struct{}

func (nopProc) Init(processor.ProcessorContext[any, any]) error { return nil }
func (nopProc) Process(processor.Record[any, any]) error        { return nil }
func (nopProc) Close() error                                    { return nil }

func layoutTopology(t *testing.T) *topology.Builder {
	topo := processor.NewTopology()
	sup := processor.ProcessorSupplierFunc[any, any, any, any](func() processor.Processor[any, any, any, any] { return nopProc{} })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(topo.AddSource("src", []string{"in"}))
	must(topo.AddProcessor("p", sup, "src"))
	topology.Of(topo).AddInternalTopic("rep", topology.InternalTopicProperties{})
	must(topo.AddSink("sink", "rep", []string{"p"}))
	must(topo.AddSource("src2", []string{"rep"}))
	must(topo.AddProcessor("agg", sup, "src2"))
	must(topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("S"), serde.String(), serde.Long()), "agg"))
	return topology.Of(topo)
}

func TestComputeLayout(t *testing.T) {
	b := layoutTopology(t)
	l, err := ComputeLayout(b, "app", map[string]int32{"in": 4})
	if err != nil {
		t.Fatal(err)
	}
	if l.Partitions["app-rep"] != 4 || l.Tasks[0] != 4 || l.Tasks[1] != 4 || len(l.Internal) != 2 {
		t.Fatalf("layout %+v", l)
	}
	ch, rep := l.Internal[0], l.Internal[1]
	if ch.Name != "app-S-changelog" || !ch.Changelog || ch.Partitions != 4 || ch.Configs["cleanup.policy"] != "compact" ||
		ch.Configs["message.timestamp.type"] != "CreateTime" {
		t.Fatalf("changelog %+v", ch)
	}
	if rep.Name != "app-rep" || rep.Configs["cleanup.policy"] != "delete" || rep.Configs["retention.ms"] != "-1" ||
		rep.Configs["segment.bytes"] != "52428800" {
		t.Fatalf("repartition %+v", rep)
	}
	_, err = ComputeLayout(b, "app", map[string]int32{"other": 1})
	var me *MissingSourceTopicsError
	if !errors.As(err, &me) || len(me.Topics) != 1 || me.Topics[0] != "in" || !errors.Is(err, ErrMissingSourceTopics) {
		t.Fatalf("missing: %v", err)
	}
}

func TestComputeLayoutCopartition(t *testing.T) {
	topo := processor.NewTopology()
	sup := processor.ProcessorSupplierFunc[any, any, any, any](func() processor.Processor[any, any, any, any] { return nopProc{} })
	if err := topo.AddSource("a", []string{"ta"}); err != nil {
		t.Fatal(err)
	}
	if err := topo.AddSource("b", []string{"tb"}); err != nil {
		t.Fatal(err)
	}
	if err := topo.AddProcessor("j", sup, "a", "b"); err != nil {
		t.Fatal(err)
	}
	topology.Of(topo).CopartitionSources("a", "b")
	_, err := ComputeLayout(topology.Of(topo), "app", map[string]int32{"ta": 2, "tb": 3})
	var ce *CopartitionError
	if !errors.As(err, &ce) || ce.Topics["ta"] != 2 || ce.Topics["tb"] != 3 {
		t.Fatalf("copartition: %v", err)
	}
	if _, err := ComputeLayout(topology.Of(topo), "app", map[string]int32{"ta": 3, "tb": 3}); err != nil {
		t.Fatal(err)
	}
}

// TestWindowedChangelogConfigs checks the changelog configs of window and session stores
// against Java's WindowedChangelogTopicConfig: cleanup.policy=compact,delete and retention.ms =
// the store's retention + windowstore.changelog.additional.retention.ms (86400000 by default),
// unless the store's log config sets retention.ms; key-value changelogs stay compact only.
func TestWindowedChangelogConfigs(t *testing.T) {
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	topo := processor.NewTopology()
	sup := processor.ProcessorSupplierFunc[any, any, any, any](func() processor.Processor[any, any, any, any] { return nopProc{} })
	must(topo.AddSource("src", []string{"in"}))
	must(topo.AddProcessor("p", sup, "src"))
	tw, err := store.Stores.PersistentTimestampedWindowStore("tw", time.Minute, 10*time.Second, false)
	must(err)
	must(topo.AddStateStore(store.Stores.TimestampedWindowStoreBuilder(tw, serde.String(), serde.Long()), "p"))
	w, err := store.Stores.InMemoryWindowStore("w", 2*time.Minute, 10*time.Second, false)
	must(err)
	must(topo.AddStateStore(store.Stores.WindowStoreBuilder(w, serde.String(), serde.Long()).
		WithLoggingEnabled(map[string]string{"retention.ms": "1000"}), "p"))
	ss, err := store.Stores.PersistentSessionStore("ss", 30*time.Second)
	must(err)
	must(topo.AddStateStore(store.Stores.SessionStoreBuilder(ss, serde.String(), serde.Long()), "p"))
	must(topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("kv"), serde.String(), serde.Long()), "p"))
	vs, err := store.Stores.PersistentVersionedKeyValueStore("ver", time.Minute)
	must(err)
	must(topo.AddStateStore(store.Stores.VersionedKeyValueStoreBuilder(vs, serde.String(), serde.Long()), "p"))
	vs2, err := store.Stores.InMemoryVersionedKeyValueStore("ver2", time.Minute)
	must(err)
	must(topo.AddStateStore(store.Stores.VersionedKeyValueStoreBuilder(vs2, serde.String(), serde.Long()).
		WithLoggingEnabled(map[string]string{"min.compaction.lag.ms": "5"}), "p"))

	// Versioned stores (Java's VersionedChangelogTopicConfig): compact, min.compaction.lag.ms =
	// history retention + 24 h (fixed) unless the log config sets it.
	want := map[string]map[string]string{
		"app-ver-changelog":  {"cleanup.policy": "compact", "min.compaction.lag.ms": "86460000"},
		"app-ver2-changelog": {"cleanup.policy": "compact", "min.compaction.lag.ms": "5"},
		"app-tw-changelog":   {"cleanup.policy": "compact,delete", "retention.ms": "86460000"},
		"app-w-changelog":    {"cleanup.policy": "compact,delete", "retention.ms": "1000"},
		"app-ss-changelog":   {"cleanup.policy": "compact,delete", "retention.ms": "86430000"},
		"app-kv-changelog":   {"cleanup.policy": "compact"},
	}
	check := func(l *Layout, want map[string]map[string]string) {
		t.Helper()
		got := map[string]map[string]string{}
		for _, it := range l.Internal {
			got[it.Name] = it.Configs
		}
		for name, w := range want {
			c, ok := got[name]
			if !ok {
				t.Errorf("%s: not in the layout (have %v)", name, got)
				continue
			}
			for k, v := range w {
				if c[k] != v {
					t.Errorf("%s: %s=%q, want %q", name, k, c[k], v)
				}
			}
			if _, has := c["retention.ms"]; has && w["retention.ms"] == "" {
				t.Errorf("%s: retention.ms=%q, want none", name, c["retention.ms"])
			}
		}
	}
	l, err := ComputeLayout(topology.Of(topo), "app", map[string]int32{"in": 2})
	must(err)
	check(l, want)

	// windowstore.changelog.additional.retention.ms=0.
	l, err = computeLayout(topology.Of(topo), "app", map[string]int32{"in": 2}, 0)
	must(err)
	want["app-tw-changelog"]["retention.ms"] = "60000"
	want["app-ss-changelog"]["retention.ms"] = "30000"
	check(l, want)

	if got := windowedRetentionMs(math.MaxInt64-5, WindowedChangelogAdditionalRetentionMs); got != math.MaxInt64 {
		t.Errorf("overflowing retention: %d, want %d", got, int64(math.MaxInt64))
	}
}
