package interop

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/internal/resetter"
)

// The application reset tool (cmd/kstreams-application-reset) on a Java word count and on
// ours: each runs until its counts are exact and stops; the tool (refused while the Java
// instance still runs) resets the input offsets to the beginning, deletes the internal topics
// and the local state; more input is written; the restarted application reprocesses all
// input from the start: the values it writes after the reset are exactly an independent count
// of all input (not doubled: state and changelogs are gone; not partial: it read from offset 0).
func TestIntegrationApplicationReset(t *testing.T) {
	b := kafkatest.Real(t)
	conformance.JavaFromEnv(t)
	for _, side := range []string{"java", "go"} {
		t.Run(side, func(t *testing.T) {
			a := newAppTopics(t, b, "reset")
			dir := t.TempDir()
			e := newExpected()
			e.produce(t, b, a.input, 1500)
			out := readLatest(t, b, sarama.ReadUncommitted, a.output, a.windowed)
			if side == "java" {
				j := startJava(t, b, a, dir, kstreams.AtLeastOnce)
				out.waitExact(t, a, e, "java", j.alive)
				var stdout, stderr bytes.Buffer
				code := resetter.Run([]string{"--bootstrap-server", b.Addrs[0], "--application-id", a.app,
					"--input-topics", a.input, "--state-dir", dir}, &stdout, &stderr)
				if code != resetter.ExitError || !strings.Contains(stderr.String(), "ERROR: Consumer group '"+
					a.app+"' is still active and has following members: [(memberId=") {
					t.Fatalf("reset while Java runs: exit %d, stderr %q, want 1 and the group's members", code, stderr.String())
				}
				j.stop()
			} else {
				runGo(t, b, a, dir, kstreams.AtLeastOnce, out, e)
			}
			out.stop()

			internal := internalTopicsOf(t, b, a.app)
			if !slices.Contains(internal, a.app+"-counts-store-changelog") || !slices.Contains(internal, a.app+"-windowed-counts-changelog") ||
				!slices.ContainsFunc(internal, func(s string) bool { return strings.HasSuffix(s, "-repartition") }) {
				t.Fatalf("internal topics before the reset: %v, want both changelogs and the repartition topics", internal)
			}
			mark := endOffsets(t, b, a.output, a.windowed)

			var stdout, stderr bytes.Buffer
			args := []string{"--bootstrap-server", b.Addrs[0], "--application-id", a.app, "--input-topics", a.input, "--state-dir", dir}
			// A dry run first: it changes nothing.
			if code := resetter.Run(append(args, "--dry-run"), &stdout, &stderr); code != 0 {
				t.Fatalf("dry run: exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
			if got := internalTopicsOf(t, b, a.app); !slices.Equal(got, internal) {
				t.Fatalf("internal topics after a dry run: %v, want %v", got, internal)
			}
			if n := committed(t, b, a.app, a.input); n == 0 {
				t.Fatalf("a dry run reset the committed offsets")
			}
			stdout.Reset()
			start := time.Now()
			if code := resetter.Run(args, &stdout, &stderr); code != 0 {
				t.Fatalf("reset: exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
			t.Logf("reset in %v:\n%s", time.Since(start).Round(time.Millisecond), stdout.String())
			if !strings.Contains(stdout.String(), "Deleting inferred internal topics ["+strings.Join(internal, ", ")+"]\n") ||
				!strings.Contains(stdout.String(), "Topic: "+a.input+" Partition: 1 Offset: 0\n") {
				t.Errorf("reset output lacks the internal topics %v or the input offsets", internal)
			}
			if n := committed(t, b, a.app, a.input); n != 0 {
				t.Fatalf("committed input offsets after the reset sum to %d, want 0", n)
			}
			waitGone(t, b, a.app)
			left, _ := os.ReadDir(filepath.Join(dir, a.app))
			for _, f := range left {
				if f.Name() != ".lock" && f.Name() != "kafka-streams-process-metadata" {
					t.Errorf("local state left after the reset: %s", f.Name())
				}
			}

			e.produce(t, b, a.input, 500)
			again := readLatestFrom(t, b, sarama.ReadUncommitted, mark, a.output, a.windowed)
			if side == "java" {
				runJava(t, b, a, dir, kstreams.AtLeastOnce, again, e)
			} else {
				runGo(t, b, a, dir, kstreams.AtLeastOnce, again, e)
			}
			t.Logf("%s: after the reset, exact counts of all %d lines from the records written after it", side, e.lines)
		})
	}
}

// internalTopicsOf returns, sorted, the topics whose names start with "<app>-" and that the
// application did not get from the test (its internal topics).
func internalTopicsOf(t *testing.T, b kafkatest.Broker, app string) []string {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ts, err := admin.ListTopics()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for name := range ts {
		if strings.HasPrefix(name, app+"-") && name != app+"-lines" && name != app+"-counts" && name != app+"-windowed" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// waitGone waits until the cluster's metadata lists none of app's internal topics (deletion is
// asynchronous on the brokers), so the restarted application creates them anew.
func waitGone(t *testing.T, b kafkatest.Broker, app string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		left := internalTopicsOf(t, b, app)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("internal topics %v still listed a minute after the reset deleted them", left)
		}
		time.Sleep(100 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// endOffsets returns the end offsets of the topics' partitions.
func endOffsets(t *testing.T, b kafkatest.Broker, topics ...string) map[string]map[int32]int64 {
	t.Helper()
	c, err := sarama.NewClient(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := map[string]map[int32]int64{}
	for _, topic := range topics {
		out[topic] = map[int32]int64{}
		ps, err := c.Partitions(topic)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if out[topic][p], err = c.GetOffset(topic, p, sarama.OffsetNewest); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// committed returns the sum of group's committed offsets on topic's partitions.
func committed(t *testing.T, b kafkatest.Broker, group, topic string) int64 {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	resp, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: {0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for p := int32(0); p < 2; p++ {
		if blk := resp.GetBlock(topic, p); blk != nil && blk.Offset > 0 {
			n += blk.Offset
		}
	}
	return n
}
