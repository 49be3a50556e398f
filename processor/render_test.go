package processor_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// The expected pictures below are written out by hand from the description's facts (the
// text form is printed beside each), not captured from the renderer.

func TestRenderMermaidAndDOT(t *testing.T) {
	d := base(t).Describe()
	// Sub-topology 0: src (topics [in]) --> proc (stores [st]) --> sink (topic out);
	// global store 1: gsrc (topics [gt]) --> gproc (stores [g]).
	wantMermaid := `flowchart TB
  subgraph g0["Sub-topology: 0"]
    n0(["src"])
    n1["proc"]
    n2(["sink"])
  end
  subgraph g1["Global store: 1"]
    n3(["gsrc"])
    n4["gproc"]
  end
  t0[/"in"/]
  t1[/"out"/]
  t2[/"gt"/]
  s0[("st")]
  s1[("g")]
  t0 --> n0
  n0 --> n1
  n1 -.- s0
  n1 --> n2
  n2 --> t1
  t2 --> n3
  n3 --> n4
  n4 -.- s1
`
	if got := d.Mermaid(); got != wantMermaid {
		t.Errorf("Mermaid:\n%s\nwant:\n%s", got, wantMermaid)
	}
	wantDOT := `digraph topology {
  rankdir=TB;
  subgraph cluster_0 {
    label="Sub-topology: 0";
    n0 [label="src", shape=box, style=rounded];
    n1 [label="proc", shape=box];
    n2 [label="sink", shape=box, style=rounded];
  }
  subgraph cluster_1 {
    label="Global store: 1";
    n3 [label="gsrc", shape=box, style=rounded];
    n4 [label="gproc", shape=box];
  }
  t0 [label="in", shape=parallelogram];
  t1 [label="out", shape=parallelogram];
  t2 [label="gt", shape=parallelogram];
  s0 [label="st", shape=cylinder];
  s1 [label="g", shape=cylinder];
  t0 -> n0;
  n0 -> n1;
  n1 -> s0 [style=dashed, arrowhead=none];
  n1 -> n2;
  n2 -> t1;
  t2 -> n3;
  n3 -> n4;
  n4 -> s1 [style=dashed, arrowhead=none];
}
`
	if got := d.DOT(); got != wantDOT {
		t.Errorf("DOT:\n%s\nwant:\n%s", got, wantDOT)
	}
}

type quotedExtractor struct{}

func (quotedExtractor) Extract(string, string, processor.RecordContext) (string, error) {
	return "x", nil
}
func (quotedExtractor) String() string { return `say "hi"` }

// Pattern sources, dynamic sinks and names needing escapes.
func TestRenderPatternDynamicSinkAndEscaping(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSourcePattern(`src"1`, `in-\d+`))
	must(t, topo.AddProcessor("p<1>", nop[string, string, string, string](), `src"1`))
	must(t, topo.AddDynamicSink("dyn", processor.TopicNameExtractor[string, string](quotedExtractor{}), []string{"p<1>"}))
	d := topo.Describe()
	wantMermaid := `flowchart TB
  subgraph g0["Sub-topology: 0"]
    n0(["src#quot;1"])
    n1["p#lt;1#gt;"]
    n2(["dyn"])
  end
  t0[/"pattern: in-\d+"/]
  t1[/"topic from: say #quot;hi#quot;"/]
  t0 --> n0
  n0 --> n1
  n1 --> n2
  n2 --> t1
`
	if got := d.Mermaid(); got != wantMermaid {
		t.Errorf("Mermaid:\n%s\nwant:\n%s", got, wantMermaid)
	}
	wantDOT := `digraph topology {
  rankdir=TB;
  subgraph cluster_0 {
    label="Sub-topology: 0";
    n0 [label="src\"1", shape=box, style=rounded];
    n1 [label="p<1>", shape=box];
    n2 [label="dyn", shape=box, style=rounded];
  }
  t0 [label="pattern: in-\\d+", shape=parallelogram];
  t1 [label="topic from: say \"hi\"", shape=parallelogram];
  t0 -> n0;
  n0 -> n1;
  n1 -> n2;
  n2 -> t1;
}
`
	if got := d.DOT(); got != wantDOT {
		t.Errorf("DOT:\n%s\nwant:\n%s", got, wantDOT)
	}
}

// For a DSL topology with a repartition topic, every node of the description is drawn once,
// every edge joins declared ids, and the repartition topic links the two sub-topologies.
func TestRenderWordCountIsWellFormed(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	kstream.Stream(b, "streams-plaintext-input", kstream.ConsumedWith(serde.String(), serde.String())).
		FlatMapValues(strings.Fields).
		GroupBy(func(_, w string) string { return w }, kstream.GroupedWith(serde.String(), serde.String())).
		Count(kstream.MaterializedAs[string, int64]("counts-store")).
		ToStream().To("streams-wordcount-output", kstream.ProducedWith(serde.String(), serde.Long()))
	topo, err := b.Build()
	must(t, err)
	d := topo.Describe()
	var names []string
	for _, st := range d.Subtopologies {
		for _, n := range st.Nodes {
			names = append(names, n.Name())
		}
	}
	m := d.Mermaid()
	decl := regexp.MustCompile(`(?m)^\s+([nts]\d+)[\[(/]+"([^"]*)"`)
	declared := map[string]string{}
	for _, x := range decl.FindAllStringSubmatch(m, -1) {
		if _, dup := declared[x[1]]; dup {
			t.Errorf("id %s declared twice", x[1])
		}
		declared[x[1]] = x[2]
	}
	labels := map[string]int{}
	for _, l := range declared {
		labels[l]++
	}
	for _, n := range names {
		if labels[n] != 1 {
			t.Errorf("node %s drawn %d times, want once", n, labels[n])
		}
	}
	edge := regexp.MustCompile(`(?m)^  ([nts]\d+) (-->|-\.-) ([nts]\d+)$`)
	edges := edge.FindAllStringSubmatch(m, -1)
	for _, e := range edges {
		if declared[e[1]] == "" || declared[e[3]] == "" {
			t.Errorf("edge %s %s %s joins an undeclared id", e[1], e[2], e[3])
		}
	}
	// topic --> source, successors, store line, sink --> topic: two sub-topologies of
	// 4+3 nodes: in->src, src->flatmap, flatmap->keyselect, keyselect->filter, filter->sink,
	// sink->repartition, repartition->source, source->aggregate, aggregate-.-store,
	// aggregate->toStream, toStream->sink, sink->out.
	if len(edges) != 12 {
		t.Errorf("%d edges, want 12:\n%s", len(edges), m)
	}
	var rep string
	for id, l := range declared {
		if strings.HasSuffix(l, "-repartition") {
			rep = id
		}
	}
	if rep == "" || !strings.Contains(m, " --> "+rep+"\n") || !strings.Contains(m, "  "+rep+" --> ") {
		t.Errorf("repartition topic not drawn between the sub-topologies:\n%s", m)
	}
	if dot := d.DOT(); strings.Count(dot, " -> ") != 12 {
		t.Errorf("DOT has %d edges, want 12:\n%s", strings.Count(dot, " -> "), dot)
	}
}
