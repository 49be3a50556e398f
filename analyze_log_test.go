package kstreams

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/kstreams-go/kstreams/kstream"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// startedWarnings starts and closes an instance of topo whose broker does not answer, logging
// from level up as JSON, and returns the records of its topology warnings.
func startedWarnings(t *testing.T, topo *processor.Topology, appID string, level slog.Level) []map[string]string {
	t.Helper()
	var buf bytes.Buffer
	app, err := New(topo, Config{ApplicationID: appID, BootstrapServers: []string{"127.0.0.1:1"}, StateDir: t.TempDir(),
		Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level}))})
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
	return got
}

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
	got := startedWarnings(t, topo, "analyze-log", slog.LevelWarn)
	if len(got) != 1 || got[0]["level"] != "WARN" || got[0]["kind"] != want[0].Kind || got[0]["node"] != "Sink" ||
		got[0]["msg"] != "kstreams: topology warning: "+want[0].Message {
		t.Fatalf("logged %v, want one WARN record for %v", got, want[0])
	}
}

// A join of two user topics (processor.WarningNotCopartitioned) is logged at INFO, not WARN:
// the advice holds for every such join, the correct ones included.
func TestStartLogsNotCopartitionedAtInfo(t *testing.T) {
	S := serde.String()
	b := kstream.NewStreamsBuilder()
	clicks := kstream.Stream(b, "clicks", kstream.ConsumedWith(S, S))
	views := kstream.Stream(b, "views", kstream.ConsumedWith(S, S))
	clicks.JoinStream(views, func(c, v string) string { return c + v }, kstream.OfTimeDifferenceAndGrace(time.Minute, time.Second)).To("pairs")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := topo.Analyze()
	if len(want) != 1 || want[0].Kind != processor.WarningNotCopartitioned {
		t.Fatalf("Analyze: %v", want)
	}
	got := startedWarnings(t, topo, "analyze-log-join", slog.LevelInfo)
	if len(got) != 1 || got[0]["level"] != "INFO" || got[0]["kind"] != processor.WarningNotCopartitioned || got[0]["node"] != want[0].Node {
		t.Fatalf("logged %v, want one INFO record for %v", got, want[0])
	}
}
