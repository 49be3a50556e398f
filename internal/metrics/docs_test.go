package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams/processor"
)

// Every family the registry exports (at TRACE, with a thread, a task and a store) is in Docs,
// its help names a Java metric or says there is none, and docs/metrics.md has a table row
// naming it with its Java metrics and level.
func TestDocsCoverEveryFamily(t *testing.T) {
	r := New("docs", Trace)
	th := r.Thread("t-StreamThread-1")
	th.Process.Record(3, time.Millisecond)
	th.PublishTasks([]TaskStats{{ID: processor.TaskID{}, Kind: "active", Lag: 2, Async: true, AsyncInFlight: 1}})
	r.AsyncCall(20 * time.Millisecond)
	r.Store(processor.TaskID{}, "s", "pebble").Op(Put).Record(1, time.Microsecond)
	r.Store(processor.TaskID{}, "s", "pebble").CacheGet(true)
	node := r.Node(processor.TaskID{}, "n", true)
	node.Processed(10, 7)
	node.Publish()
	reg := prometheus.NewRegistry()
	reg.MustRegister(r)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]FamilyDoc{}
	for _, d := range Docs() {
		documented[d.Name] = d
	}
	table, err := os.ReadFile(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(string(table), "\n") {
		if f := strings.Split(l, "|"); len(f) > 4 {
			rows[strings.Trim(strings.TrimSpace(f[1]), "`")] = l
		}
	}
	for _, mf := range mfs {
		d, ok := documented[mf.GetName()]
		if !ok {
			t.Errorf("family %s is not in Docs", mf.GetName())
			continue
		}
		if !strings.Contains(mf.GetHelp(), "Java") {
			t.Errorf("%s: help %q names no Java metric", mf.GetName(), mf.GetHelp())
		}
		row := rows[d.Name]
		if !strings.Contains(row, d.Java) || !strings.Contains(row, d.Level.String()) {
			t.Errorf("docs/metrics.md row for %s is %q, want Java %q and level %s", d.Name, row, d.Java, d.Level)
		}
	}
	if len(mfs) != len(Docs()) {
		t.Errorf("%d families exported at TRACE, %d documented", len(mfs), len(Docs()))
	}
}

// At INFO only the INFO families are exported, and store calls are not timed.
func TestInfoLevelExportsInfoFamilies(t *testing.T) {
	r := New("docs", Info)
	r.Thread("t").PublishTasks([]TaskStats{{Kind: "active"}})
	if s := r.Store(processor.TaskID{}, "s", "pebble"); s != nil {
		t.Fatal("a store sensor at INFO")
	}
	if n := r.Node(processor.TaskID{}, "inner", false); n != nil {
		t.Fatal("an inner node's sensor at INFO")
	}
	node := r.Node(processor.TaskID{}, "sink", true)
	node.Processed(10, 7)
	node.Publish()
	reg := prometheus.NewRegistry()
	reg.MustRegister(r)
	mfs, _ := reg.Gather()
	level := map[string]Level{}
	for _, d := range Docs() {
		level[d.Name] = d.Level
	}
	for _, mf := range mfs {
		if level[mf.GetName()] != Info {
			t.Errorf("%s exported at INFO", mf.GetName())
		}
	}
}
