package processor_test

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// The situations below are those in which Java's Topology/InternalTopologyBuilder 4.4.0
// throws (confirmed with Java in internal/topology/testdata/describe/err-*.spec); each must
// return an error wrapping ErrInvalidTopology and the specific sentinel, and leave the
// topology unchanged.

func kvBuilder(name string) processor.StoreBuilder {
	return store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore(name), serde.String(), serde.String())
}

// base returns a topology with source "src" (topic "in"), processor "proc", sink "sink",
// store "st" connected to "proc", and global store "g" (source "gsrc", topic "gt", processor
// "gproc").
func base(t *testing.T) *processor.Topology {
	t.Helper()
	topo := processor.NewTopology()
	must(t, topo.AddSource("src", []string{"in"}))
	must(t, topo.AddProcessor("proc", nop[string, string, string, string](), "src"))
	must(t, topo.AddSink("sink", "out", []string{"proc"}))
	must(t, topo.AddStateStore(kvBuilder("st"), "proc"))
	must(t, topo.AddGlobalStore(kvBuilder("g"), "gsrc", serde.String(), serde.String(), "gt", "gproc",
		nop[string, string, struct{}, struct{}]()))
	return topo
}

// sameInstance is a supplier that returns the same processor every time (Java:
// "generates single reference").
type sameInstance struct{ p *countingProcessor }

type countingProcessor struct{ n int }

func (*countingProcessor) Init(processor.ProcessorContext[string, string]) error { return nil }
func (c *countingProcessor) Process(processor.Record[string, string]) error      { c.n++; return nil }
func (*countingProcessor) Close() error                                          { return nil }

func (s sameInstance) Get() processor.Processor[string, string, string, string] { return s.p }

func TestTopologyErrors(t *testing.T) {
	cases := []struct {
		name string
		want any // the kind matched with errors.Is, or a pointer to the cause's type (errors.As)
		add  func(*processor.Topology) error
	}{
		{"source without topics", topology.ErrNoTopics, func(tp *processor.Topology) error {
			return tp.AddSource("s2", nil)
		}},
		{"duplicate source name", topology.ErrDuplicateName, func(tp *processor.Topology) error {
			return tp.AddSource("proc", []string{"other"})
		}},
		{"duplicate processor name", topology.ErrDuplicateName, func(tp *processor.Topology) error {
			return tp.AddProcessor("sink", nop[string, string, string, string](), "src")
		}},
		{"duplicate sink name", topology.ErrDuplicateName, func(tp *processor.Topology) error {
			return tp.AddSink("src", "out2", []string{"proc"})
		}},
		{"topic read by two sources", topology.ErrTopicAlreadyRegistered, func(tp *processor.Topology) error {
			return tp.AddSource("s2", []string{"x", "in"})
		}},
		{"topic given twice to one source", topology.ErrTopicAlreadyRegistered, func(tp *processor.Topology) error {
			return tp.AddSource("s2", []string{"x", "x"})
		}},
		{"topic of a global store", topology.ErrTopicAlreadyRegistered, func(tp *processor.Topology) error {
			return tp.AddSource("s2", []string{"gt"})
		}},
		{"pattern matching a registered topic", topology.ErrTopicAlreadyRegistered, func(tp *processor.Topology) error {
			return tp.AddSourcePattern("s2", "i.")
		}},
		{"invalid pattern", new(*syntax.Error), func(tp *processor.Topology) error {
			return tp.AddSourcePattern("s2", "a(")
		}},
		{"processor without parent", topology.ErrNoParent, func(tp *processor.Topology) error {
			return tp.AddProcessor("p2", nop[string, string, string, string]())
		}},
		{"sink without parent", topology.ErrNoParent, func(tp *processor.Topology) error {
			return tp.AddSink("k2", "out", nil)
		}},
		{"processor is its own parent", topology.ErrSelfParent, func(tp *processor.Topology) error {
			return tp.AddProcessor("p2", nop[string, string, string, string](), "src", "p2")
		}},
		{"unknown parent", topology.ErrUnknownParent, func(tp *processor.Topology) error {
			return tp.AddProcessor("p2", nop[string, string, string, string](), "nope")
		}},
		{"unknown sink parent", topology.ErrUnknownParent, func(tp *processor.Topology) error {
			return tp.AddSink("k2", "out", []string{"nope"})
		}},
		{"sink as parent of a sink", topology.ErrSinkAsParent, func(tp *processor.Topology) error {
			return tp.AddSink("k2", "out", []string{"sink"})
		}},
		{"sink as parent of a processor", topology.ErrSinkAsParent, func(tp *processor.Topology) error {
			return tp.AddProcessor("p2", nop[string, string, string, string](), "sink")
		}},
		{"nil supplier", topology.ErrNilArgument, func(tp *processor.Topology) error {
			return tp.AddProcessor("p2", processor.ProcessorSupplier[string, string, string, string](nil), "src")
		}},
		{"supplier returning nil", topology.ErrNilArgument, func(tp *processor.Topology) error {
			return tp.AddProcessor("p2", processor.ProcessorSupplierFunc[string, string, string, string](
				func() processor.Processor[string, string, string, string] { return nil }), "src")
		}},
		{"supplier returning one instance", processor.ErrInvalidTopology, func(tp *processor.Topology) error {
			return tp.AddProcessor("p2", sameInstance{&countingProcessor{}}, "src")
		}},
		{"nil topic name extractor", topology.ErrNilArgument, func(tp *processor.Topology) error {
			return tp.AddDynamicSink("k2", processor.TopicNameExtractor[string, string](nil), []string{"proc"})
		}},
		{"different store with the same name", topology.ErrDuplicateStore, func(tp *processor.Topology) error {
			return tp.AddStateStore(kvBuilder("st"))
		}},
		{"store named as a global store", topology.ErrDuplicateStore, func(tp *processor.Topology) error {
			return tp.AddStateStore(kvBuilder("g"))
		}},
		{"nil store builder", topology.ErrNilArgument, func(tp *processor.Topology) error {
			return tp.AddStateStore(nil, "proc")
		}},
		{"store connected to an unknown processor", topology.ErrUnknownProcessor, func(tp *processor.Topology) error {
			return tp.AddStateStore(kvBuilder("st2"), "proc", "nope")
		}},
		{"connect an unknown store", processor.ErrUnknownStore, func(tp *processor.Topology) error {
			return tp.ConnectProcessorAndStateStores("proc", "nope")
		}},
		{"connect to an unknown processor", topology.ErrUnknownProcessor, func(tp *processor.Topology) error {
			return tp.ConnectProcessorAndStateStores("nope", "st")
		}},
		{"connect without store names", topology.ErrNoStoreNames, func(tp *processor.Topology) error {
			return tp.ConnectProcessorAndStateStores("proc")
		}},
		{"connect a global store", topology.ErrGlobalStoreConnected, func(tp *processor.Topology) error {
			return tp.ConnectProcessorAndStateStores("proc", "g")
		}},
		{"store on a source", topology.ErrStoreOnSourceOrSink, func(tp *processor.Topology) error {
			return tp.ConnectProcessorAndStateStores("src", "st")
		}},
		{"store on a sink", topology.ErrStoreOnSourceOrSink, func(tp *processor.Topology) error {
			return tp.AddStateStore(kvBuilder("st2"), "sink")
		}},
		{"global store with a used store name", topology.ErrDuplicateStore, func(tp *processor.Topology) error {
			return tp.AddGlobalStore(kvBuilder("st"), "gs2", serde.String(), serde.String(), "gt2", "gp2", nop[string, string, struct{}, struct{}]())
		}},
		{"global store twice", topology.ErrDuplicateStore, func(tp *processor.Topology) error {
			return tp.AddGlobalStore(kvBuilder("g"), "gs2", serde.String(), serde.String(), "gt2", "gp2", nop[string, string, struct{}, struct{}]())
		}},
		{"global store source name used", topology.ErrDuplicateName, func(tp *processor.Topology) error {
			return tp.AddGlobalStore(kvBuilder("g2"), "src", serde.String(), serde.String(), "gt2", "gp2", nop[string, string, struct{}, struct{}]())
		}},
		{"global store processor name used", topology.ErrDuplicateName, func(tp *processor.Topology) error {
			return tp.AddGlobalStore(kvBuilder("g2"), "gs2", serde.String(), serde.String(), "gt2", "proc", nop[string, string, struct{}, struct{}]())
		}},
		{"global store with equal source and processor names", topology.ErrSameSourceAndProcessorName, func(tp *processor.Topology) error {
			return tp.AddGlobalStore(kvBuilder("g2"), "gx", serde.String(), serde.String(), "gt2", "gx", nop[string, string, struct{}, struct{}]())
		}},
		{"global store on a registered topic", topology.ErrTopicAlreadyRegistered, func(tp *processor.Topology) error {
			return tp.AddGlobalStore(kvBuilder("g2"), "gs2", serde.String(), serde.String(), "in", "gp2", nop[string, string, struct{}, struct{}]())
		}},
		{"global store without topic", topology.ErrNoTopics, func(tp *processor.Topology) error {
			return tp.AddGlobalStore(kvBuilder("g2"), "gs2", serde.String(), serde.String(), "", "gp2", nop[string, string, struct{}, struct{}]())
		}},
		{"global store with nil supplier", topology.ErrNilArgument, func(tp *processor.Topology) error {
			return tp.AddGlobalStore(kvBuilder("g2"), "gs2", serde.String(), serde.String(), "gt2", "gp2",
				processor.ProcessorSupplier[string, string, struct{}, struct{}](nil))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topo := base(t)
			before := topo.Describe().String()
			err := c.add(topo)
			if err == nil {
				t.Fatal("no error")
			}
			if want, ok := c.want.(error); ok && !errors.Is(err, want) || !ok && !errors.As(err, c.want) {
				t.Fatalf("error %q does not wrap %v", err, c.want)
			}
			if !errors.Is(err, processor.ErrInvalidTopology) {
				t.Fatalf("error %q does not wrap ErrInvalidTopology", err)
			}
			var te *processor.TopologyError
			if !errors.As(err, &te) || te.Error() != "invalid topology: "+te.Reason || !strings.Contains(te.Reason, te.Name) {
				t.Fatalf("error %q (%T) is not a *TopologyError naming %q in its reason", err, err, te.Name)
			}
			if after := topo.Describe().String(); after != before {
				t.Fatalf("topology changed by a failed call:\n%s", after)
			}
		})
	}
}

func TestTopologyErrorIsTyped(t *testing.T) {
	topo := base(t)
	err := topo.AddProcessor("p2", nop[string, string, string, string](), "nope")
	var te *processor.TopologyError
	if !errors.As(err, &te) || te.Name != "p2" || !errors.Is(err, topology.ErrUnknownParent) {
		t.Fatalf("errors.As(%v) = %+v", err, te)
	}
	if got, want := err.Error(), "invalid topology: parent node nope is unknown (for processor p2); add parents before their children"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}

// A TopologyError is processor's own type (not an alias of an internal one): %T names it,
// errors.Unwrap returns its cause, and ErrInvalidTopology is matched by Is without being the
// cause; DSL errors are the same type.
func TestTopologyErrorIsProcessorsType(t *testing.T) {
	topo := base(t)
	err := topo.AddProcessor("p2", nop[string, string, string, string](), "nope")
	if got := fmt.Sprintf("%T", err); got != "*processor.TopologyError" {
		t.Fatalf("%%T = %s, want *processor.TopologyError", got)
	}
	if got := errors.Unwrap(err); got != topology.ErrUnknownParent {
		t.Fatalf("errors.Unwrap = %v, want the unknown-parent cause", got)
	}
	err = topo.ConnectProcessorAndStateStores("proc", "missing")
	if !errors.Is(err, processor.ErrUnknownStore) || !errors.Is(err, processor.ErrInvalidTopology) || errors.Unwrap(err) != processor.ErrUnknownStore {
		t.Fatalf("connecting a missing store: %v (cause %v), want ErrUnknownStore and ErrInvalidTopology", err, errors.Unwrap(err))
	}
	err = topo.AddSourcePattern("bad", "x(")
	var se *syntax.Error
	var te *processor.TopologyError
	if !errors.As(err, &se) || !errors.As(err, &te) || te.Name != "bad" || !errors.Is(err, processor.ErrInvalidTopology) {
		t.Fatalf("bad pattern: %v, want a *TopologyError named bad with a *syntax.Error cause", err)
	}
}

// Adding the same builder again only connects it (Java: StoreBuilderWrapper.isCompatibleWith).
func TestAddSameStoreBuilderTwice(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSource("s", []string{"a"}))
	must(t, topo.AddProcessor("p1", nop[string, string, string, string](), "s"))
	must(t, topo.AddSource("s2", []string{"b"}))
	must(t, topo.AddProcessor("p2", nop[string, string, string, string](), "s2"))
	b := kvBuilder("st")
	must(t, topo.AddStateStore(b, "p1"))
	must(t, topo.AddStateStore(b, "p2"))
	st := topology.Of(topo).Store("st")
	if len(st.Processors) != 2 || st.Processors[0] != "p1" || st.Processors[1] != "p2" {
		t.Fatalf("store processors %v", st.Processors)
	}
	if d := topo.Describe(); len(d.Subtopologies) != 1 {
		t.Fatalf("a shared store joins the sub-topologies; got %d", len(d.Subtopologies))
	}
}

// storeSupplier brings its own store (ConnectedStoreProvider), as Java's ProcessorSupplier.stores().
type storeSupplier struct{ b processor.StoreBuilder }

func (s storeSupplier) Get() processor.Processor[string, string, string, string] {
	return &countingProcessor{}
}
func (s storeSupplier) Stores() []processor.StoreBuilder { return []processor.StoreBuilder{s.b} }

func TestConnectedStoreProvider(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSource("s", []string{"a"}))
	b := kvBuilder("counts")
	must(t, topo.AddProcessor("p1", storeSupplier{b}, "s"))
	must(t, topo.AddProcessor("p2", storeSupplier{b}, "p1"))
	if got := topology.Of(topo).Node("p2").Stores; len(got) != 1 || got[0] != "counts" {
		t.Fatalf("p2 stores %v", got)
	}
	p1 := topo.Describe().Subtopologies[0].Nodes[1].(*processor.ProcessorDescription)
	if p1.Name() != "p1" || len(p1.Stores()) != 1 || p1.Stores()[0] != "counts" {
		t.Fatalf("p1 = %v", p1)
	}
}

func TestAddReadOnlyStateStore(t *testing.T) {
	topo := base(t)
	must(t, topo.AddReadOnlyStateStore(kvBuilder("ro"), "rsrc", serde.String(), serde.String(), "rtopic", "rproc",
		nop[string, string, struct{}, struct{}]()))
	b := topology.Of(topo)
	st := b.Store("ro")
	if st == nil || st.SourceTopic != "rtopic" || st.Global || len(st.Processors) != 1 || st.Processors[0] != "rproc" {
		t.Fatalf("store %+v", st)
	}
	// Java (subtopologyToTopicsInfo, internal/topology/testdata/describe/readonly.topics.txt):
	// the source topic is the changelog of a read-only store.
	if got := b.ChangelogTopic("app", "ro"); got != "rtopic" {
		t.Fatalf("changelog %q", got)
	}
	if got := b.ChangelogTopic("app", "st"); got != "app-st-changelog" {
		t.Fatalf("changelog %q", got)
	}
	must(t, topo.ConnectProcessorAndStateStores("proc", "ro"))

	before := topo.Describe().String()
	for _, c := range []struct {
		want error
		err  error
	}{
		{topology.ErrDuplicateName, topo.AddReadOnlyStateStore(kvBuilder("ro2"), "src", serde.String(), serde.String(), "t9", "rp2", nop[string, string, struct{}, struct{}]())},
		{topology.ErrTopicAlreadyRegistered, topo.AddReadOnlyStateStore(kvBuilder("ro2"), "rs2", serde.String(), serde.String(), "rtopic", "rp2", nop[string, string, struct{}, struct{}]())},
		{topology.ErrDuplicateStore, topo.AddReadOnlyStateStore(kvBuilder("st"), "rs2", serde.String(), serde.String(), "t9", "rp2", nop[string, string, struct{}, struct{}]())},
		{topology.ErrSelfParent, topo.AddReadOnlyStateStore(kvBuilder("ro2"), "rs2", serde.String(), serde.String(), "t9", "rs2", nop[string, string, struct{}, struct{}]())},
		{topology.ErrNoTopics, topo.AddReadOnlyStateStore(kvBuilder("ro2"), "rs2", serde.String(), serde.String(), "", "rp2", nop[string, string, struct{}, struct{}]())},
	} {
		if !errors.Is(c.err, c.want) || !errors.Is(c.err, processor.ErrInvalidTopology) {
			t.Errorf("got %v, want %v", c.err, c.want)
		}
	}
	if after := topo.Describe().String(); after != before {
		t.Fatalf("failed calls changed the topology:\n%s", after)
	}
}

func TestSourceOffsetReset(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSource("e", []string{"a"}, processor.WithOffsetReset(processor.OffsetResetEarliest())))
	must(t, topo.AddSource("d", []string{"b"}, processor.WithOffsetReset(processor.OffsetResetByDuration(90*time.Second))))
	must(t, topo.AddSourcePattern("n", "c.*", processor.WithOffsetReset(processor.OffsetResetNone())))
	must(t, topo.AddSource("z", []string{"z"}))
	b := topology.Of(topo)
	if b.Node("e").OffsetReset != topology.ResetEarliest || b.Node("n").OffsetReset != topology.ResetNone ||
		b.Node("z").OffsetReset != topology.ResetDefault {
		t.Fatal("reset policies")
	}
	if n := b.Node("d"); n.OffsetReset != topology.ResetByDuration || n.OffsetResetDuration != 90*time.Second {
		t.Fatalf("by duration: %+v", n)
	}
	if s := processor.OffsetResetByDuration(90 * time.Second).String(); s != "by_duration:90000" {
		t.Fatal(s)
	}
	err := topo.AddSource("neg", []string{"x"}, processor.WithOffsetReset(processor.OffsetResetByDuration(-time.Second)))
	var te *processor.TopologyError
	if !errors.As(err, &te) || te.Name != "neg" || !strings.Contains(err.Error(), "offset reset duration -1s is negative") || topology.Of(topo).Node("neg") != nil {
		t.Fatalf("negative duration: %v", err)
	}
}
