package testdriver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	propnames "github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// max.task.idle.ms: with an input topic empty, records wait until the other topic has data or
// the mocked wall clock passes the idle deadline. Java 4.4.0 prints (testdata/IdleCheck.java):
//
//	idle=0 after a1:[a1] after a2:[a2] after 999:[] after 1000:[] after b1:[b1] after a3:[a3]
//	idle=1000 after a1:[] after a2:[] after 999:[] after 1000:[a1, a2] after b1:[] after a3:[b1]
//	idle=-1 after a1:[a1] after a2:[a2] after 999:[] after 1000:[] after b1:[b1] after a3:[a3]
func TestMaxTaskIdleMatchesJava(t *testing.T) {
	java := map[string]string{
		"0":    "after a1:[a1] after a2:[a2] after 999:[] after 1000:[] after b1:[b1] after a3:[a3]",
		"1000": "after a1:[] after a2:[] after 999:[] after 1000:[a1, a2] after b1:[] after a3:[b1]",
		"-1":   "after a1:[a1] after a2:[a2] after 999:[] after 1000:[] after b1:[b1] after a3:[a3]",
	}
	for _, idle := range []string{"0", "1000", "-1"} {
		topo := processor.NewTopology()
		must(t, topo.AddSource("a", []string{"a"}))
		must(t, topo.AddSource("b", []string{"b"}))
		must(t, topo.AddSink("out", "out", []string{"a", "b"}))
		d, err := New(topo, withProps(stringProps, propnames.MaxTaskIdleMsConfig, idle), 0)
		must(t, err)
		a := CreateInputTopic(d, "a", serde.String(), serde.String())
		b := CreateInputTopic(d, "b", serde.String(), serde.String())
		out := CreateOutputTopic(d, "out", serde.String(), serde.String())
		var log []string
		read := func(step string) {
			vals, err := out.ReadValuesToList()
			must(t, err)
			log = append(log, fmt.Sprintf("after %s:[%s]", step, strings.Join(vals, ", ")))
		}
		must(t, a.PipeKeyValueAt("k", "a1", 10))
		read("a1")
		must(t, a.PipeKeyValueAt("k", "a2", 5))
		read("a2")
		must(t, d.AdvanceWallClockTime(999*time.Millisecond))
		read("999")
		must(t, d.AdvanceWallClockTime(time.Millisecond))
		read("1000")
		must(t, b.PipeKeyValueAt("k", "b1", 7))
		read("b1")
		must(t, a.PipeKeyValueAt("k", "a3", 8))
		read("a3")
		if got := strings.Join(log, " "); got != java[idle] {
			t.Fatalf("idle=%s\n got  %s\n java %s", idle, got, java[idle])
		}
		must(t, d.Close())
	}
}
