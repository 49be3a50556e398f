package testdriver

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// A mix of stream-time and wall-clock punctuators on two processors (equal due times, a
// schedule added while processing, a punctuator cancelling itself, late records, missed
// intervals). The expected output is what Java 4.4.0's TopologyTestDriver printed for the same
// topology and events (testdata/PunctMix.java; run it with javac/java on the classpath of the
// conformance harness: conformance/java/target/lib/*).

type punctP1 struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *punctP1) Init(c processor.ProcessorContext[string, string]) error {
	p.ctx = c
	if _, err := c.Schedule(10*time.Millisecond, processor.StreamTime, func(ts int64) error {
		return c.Forward(processor.NewRecord("P1-st", fmt.Sprintf("%d/%d", ts, c.CurrentStreamTimeMs()), ts))
	}); err != nil {
		return err
	}
	_, err := c.Schedule(7*time.Millisecond, processor.WallClockTime, func(ts int64) error {
		return c.Forward(processor.NewRecord("P1-wc", fmt.Sprintf("%d/%d", ts, c.CurrentSystemTimeMs()), ts))
	})
	return err
}
func (p *punctP1) Process(r processor.Record[string, string]) error {
	return p.ctx.Forward(processor.NewRecord("P1", fmt.Sprintf("%s@%d", r.Value, p.ctx.CurrentStreamTimeMs()), r.Timestamp))
}
func (p *punctP1) Close() error { return nil }

type punctP2 struct {
	ctx   processor.ProcessorContext[string, string]
	fired int
	c2    processor.Cancellable
}

func (p *punctP2) Init(c processor.ProcessorContext[string, string]) error {
	p.ctx = c
	var err error
	p.c2, err = c.Schedule(15*time.Millisecond, processor.StreamTime, func(ts int64) error {
		p.fired++
		err := c.Forward(processor.NewRecord("P2-st", fmt.Sprintf("%d#%d", ts, p.fired), ts))
		if p.fired == 3 {
			p.c2.Cancel()
		}
		return err
	})
	return err
}
func (p *punctP2) Process(r processor.Record[string, string]) error {
	if r.Value == "sched" {
		if _, err := p.ctx.Schedule(5*time.Millisecond, processor.StreamTime, func(ts int64) error {
			return p.ctx.Forward(processor.NewRecord("P2-new", strconv.FormatInt(ts, 10), ts))
		}); err != nil {
			return err
		}
	}
	return p.ctx.Forward(processor.NewRecord("P2", r.Value, r.Timestamp))
}
func (p *punctP2) Close() error { return nil }

func TestPunctuationMixMatchesJava(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSource("in", []string{"in"}))
	must(t, topo.AddProcessor("P1", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &punctP1{} }), "in"))
	must(t, topo.AddProcessor("P2", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &punctP2{} }), "in"))
	must(t, topo.AddSink("out", "out", []string{"P1", "P2"}))
	d, err := New(topo, stringProps, 1000)
	must(t, err)
	defer d.Close()
	in := CreateInputTopic(d, "in", serde.String(), serde.String())
	out := CreateOutputTopic(d, "out", serde.String(), serde.String())
	events := []any{int64(0), "a", int64(3), "b", "w5", int64(12), "sched", int64(12), "c", "w3", int64(31), "d", int64(29), "late",
		"w20", int64(45), "e", int64(46), "f", "w0", int64(61), "g"}
	var got []string
	for i := 0; i < len(events); {
		if s, ok := events[i].(string); ok && strings.HasPrefix(s, "w") {
			ms, _ := strconv.Atoi(s[1:])
			must(t, d.AdvanceWallClockTime(time.Duration(ms)*time.Millisecond))
			i++
		} else {
			must(t, in.PipeValueAt(events[i+1].(string), events[i].(int64)))
			i += 2
		}
		recs, err := out.ReadRecordsToList()
		must(t, err)
		for _, r := range recs {
			got = append(got, fmt.Sprintf("%s %s %d", r.Key, r.Value, r.Timestamp))
		}
		got = append(got, "--")
	}
	if g := strings.Join(got, "|"); g != javaPunctMix {
		t.Fatalf("got  %s\njava %s", g, javaPunctMix)
	}
}

// javaPunctMix is the output of Java's TopologyTestDriver (Kafka Streams 4.4.0) for the
// topology and events above, one line per record ("--" after each event).
const javaPunctMix = "P1 a@0 0|P2 a 0|P1-st 0/0 0|P2-st 0#1 0|--|P1 b@3 3|P2 b 3|--|--|" +
	"P1 sched@12 12|P2 sched 12|P2-new 12 12|P1-st 12/12 12|--|P1 c@12 12|P2 c 12|--|P1-wc 1008/1008 1008|--|" +
	"P1 d@31 31|P2 d 31|P2-new 31 31|P2-st 31#2 31|P1-st 31/31 31|--|P1 late@31 29|P2 late 29|--|P1-wc 1028/1028 1028|--|" +
	"P1 e@45 45|P2 e 45|P2-new 45 45|P1-st 45/45 45|P2-st 45#3 45|--|P1 f@46 46|P2 f 46|--|--|" +
	"P1 g@61 61|P2 g 61|P1-st 61/61 61|P2-new 61 61|--"

type failingTicker struct {
	ctx processor.ProcessorContext[string, string]
	n   int
	log *[]string
}

func (p *failingTicker) Init(c processor.ProcessorContext[string, string]) error {
	p.ctx = c
	_, err := c.Schedule(10*time.Millisecond, processor.WallClockTime, func(ts int64) error {
		p.n++
		*p.log = append(*p.log, fmt.Sprintf("fire%d@%d", p.n, ts))
		if p.n == 2 {
			return fmt.Errorf("boom")
		}
		return c.Forward(processor.NewRecord("p", fmt.Sprintf("fired%d", p.n), ts))
	})
	return err
}
func (p *failingTicker) Process(r processor.Record[string, string]) error { return p.ctx.Forward(r) }
func (p *failingTicker) Close() error                                     { return nil }

// A punctuator that fails is reported by AdvanceWallClockTime and is not scheduled again; the
// driver keeps working. Java 4.4.0 prints
// "fire1@10,ok,fire2@20,error:StreamsException,ok,ok,[fired1, v]" (testdata/PunctFail.java).
func TestFailingPunctuatorMatchesJava(t *testing.T) {
	var log []string
	topo := processor.NewTopology()
	must(t, topo.AddSource("in", []string{"in"}))
	must(t, topo.AddProcessor("p", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &failingTicker{log: &log} }), "in"))
	must(t, topo.AddSink("out", "out", []string{"p"}))
	d, err := New(topo, stringProps, 0)
	must(t, err)
	defer d.Close()
	for range 4 {
		if err := d.AdvanceWallClockTime(10 * time.Millisecond); err != nil {
			log = append(log, "error")
		} else {
			log = append(log, "ok")
		}
	}
	must(t, CreateInputTopic(d, "in", serde.String(), serde.String()).PipeKeyValueAt("k", "v", 1))
	vals, err := CreateOutputTopic(d, "out", serde.String(), serde.String()).ReadValuesToList()
	must(t, err)
	log = append(log, "["+strings.Join(vals, ", ")+"]")
	if got := strings.Join(log, ","); got != "fire1@10,ok,fire2@20,error,ok,ok,[fired1, v]" {
		t.Fatalf("got %s", got)
	}
}
