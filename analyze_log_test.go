package kstreams

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Start logs Topology.Analyze's warnings at WARN (here a sink writing to the topic its source
// reads), whether or not the start then succeeds (no broker answers here).
func TestStartLogsTopologyWarnings(t *testing.T) {
	topo := processor.NewTopology()
	for _, err := range []error{
		topo.AddSource("Source", []string{"loop"}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())),
		topo.AddSink("Sink", "loop", []string{"Source"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.String())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := topo.Analyze()
	if len(want) != 1 || want[0].Kind != processor.WarningSinkIsSource {
		t.Fatalf("Analyze: %v", want)
	}
	var buf bytes.Buffer
	app, err := New(topo, Config{ApplicationID: "analyze-log", BootstrapServers: []string{"127.0.0.1:1"}, StateDir: t.TempDir(),
		Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = app.Start(ctx) // fails: nothing listens on port 1
	closeCtx, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	_ = app.Close(closeCtx)
	var got []map[string]string
	for _, l := range strings.Split(buf.String(), "\n") {
		var rec map[string]string
		if json.Unmarshal([]byte(l), &rec) == nil && strings.Contains(rec["msg"], "topology warning") {
			got = append(got, rec)
		}
	}
	if len(got) != 1 || got[0]["level"] != "WARN" || got[0]["kind"] != want[0].Kind || got[0]["node"] != "Sink" ||
		got[0]["msg"] != "kstreams: topology warning: "+want[0].Message {
		t.Fatalf("logged %v, want one WARN record for %v", got, want[0])
	}
}
