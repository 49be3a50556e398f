package testdriver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Records written to two topics the topology reads back (as repartition topics are) are
// re-processed by head timestamp with Java's PriorityQueue tie order, with offsets per topic,
// from processing and from a wall-clock punctuator. Expected: Java 4.4.0's TopologyTestDriver
// output for the same topology (testdata/LoopOrder.java).

type loopP struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *loopP) Init(c processor.ProcessorContext[string, string]) error {
	p.ctx = c
	_, err := c.Schedule(100*time.Millisecond, processor.WallClockTime, func(int64) error {
		for _, f := range []struct{ v, to string }{{"wa", "SA"}, {"wb", "SB"}, {"wa2", "SA"}} {
			if err := c.ForwardTo(processor.NewRecord("w", f.v, 5), f.to); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

func (p *loopP) Process(r processor.Record[string, string]) error {
	ts := r.Timestamp
	for _, f := range []struct {
		suffix, to string
		ts         int64
	}{{"-a1", "SA", ts}, {"-b1", "SB", ts}, {"-a2", "SA", ts - 1}, {"-b2", "SB", ts + 1}, {"-b3", "SB", ts}} {
		if err := p.ctx.ForwardTo(r.WithValue(r.Value+f.suffix).WithTimestamp(f.ts), f.to); err != nil {
			return err
		}
	}
	return nil
}

func (p *loopP) Close() error { return nil }

type loopQ struct {
	ctx processor.ProcessorContext[string, string]
}

func (q *loopQ) Init(c processor.ProcessorContext[string, string]) error { q.ctx = c; return nil }
func (q *loopQ) Process(r processor.Record[string, string]) error {
	md, _ := q.ctx.RecordMetadata()
	return q.ctx.Forward(r.WithValue(fmt.Sprintf("%s@%d:%s/st%d", md.Topic, md.Offset, r.Value, q.ctx.CurrentStreamTimeMs())))
}
func (q *loopQ) Close() error { return nil }

func TestLoopbackOrderMatchesJava(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSource("in", []string{"in"}))
	must(t, topo.AddProcessor("P", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &loopP{} }), "in"))
	must(t, topo.AddSink("SA", "la", []string{"P"}))
	must(t, topo.AddSink("SB", "lb", []string{"P"}))
	must(t, topo.AddSource("la", []string{"la"}))
	must(t, topo.AddSource("lb", []string{"lb"}))
	must(t, topo.AddProcessor("Q", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &loopQ{} }), "la", "lb"))
	must(t, topo.AddSink("out", "out", []string{"Q"}))
	d, err := New(topo, stringProps, 0)
	must(t, err)
	defer d.Close()
	in := CreateInputTopic(d, "in", serde.String(), serde.String())
	out := CreateOutputTopic(d, "out", serde.String(), serde.String())
	var lines []string
	read := func() {
		vals, err := out.ReadValuesToList()
		must(t, err)
		lines = append(lines, strings.Join(vals, "|"))
	}
	must(t, in.PipeKeyValueAt("k", "x", 10))
	read()
	must(t, in.PipeKeyValueAt("k", "y", 3))
	read()
	must(t, d.AdvanceWallClockTime(100*time.Millisecond))
	read()
	want := []string{
		"la@0:x-a1/st10|la@1:x-a2/st10|lb@0:x-b1/st10|lb@1:x-b2/st11|lb@2:x-b3/st11",
		"la@2:y-a1/st11|la@3:y-a2/st11|lb@3:y-b1/st11|lb@4:y-b2/st11|lb@5:y-b3/st11",
		"la@4:wa/st11|lb@6:wb/st11|la@5:wa2/st11",
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Fatalf("line %d:\n got  %s\n java %s", i, lines[i], want[i])
		}
	}
}
