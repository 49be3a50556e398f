package changelog

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// The Java side is conformance/java's io.kstreams.conformance.changelog.ChangelogApp: a Java
// Kafka Streams 4.4 application with a key-value ("kv"), a timestamped key-value ("tskv"), a window ("win": retention 1 h, size
// 10 s), a session ("sess": retention 1 h) and a versioned key-value ("ver": history retention
// 10 s, versions written out of order) store, all persistent and logged.

const javaChangelogApp = "io.kstreams.conformance.changelog.ChangelogApp"

type crossInput struct {
	key, value string
	ts         int64
}

// crossBase is the first cross input's timestamp, the same for every call in a test process
// (the dumps probe the versioned store at times derived from it).
var crossBase = sync.OnceValue(func() int64 { return time.Now().Add(-10*time.Minute).UnixMilli() / 1000 * 1000 })

// crossInputs are the records both sides write into their stores.
func crossInputs() []crossInput {
	// Timestamps near now: Java creates window and session changelogs with
	// cleanup.policy=compact,delete and retention.ms = store retention + 24 h, so older
	// records would be deleted by the broker.
	base := crossBase()
	var out []crossInput
	for i := 0; i < 60; i++ {
		v := strconv.Itoa(i * 7)
		if i%9 == 8 {
			v = "del"
		}
		out = append(out, crossInput{key: fmt.Sprintf("key-%d", i%11), value: v, ts: base + int64(i)*1500})
	}
	return out
}

// crossStores builds the Go counterparts of the Java app's stores.
func crossStores(t *testing.T) []processor.StoreBuilder {
	ws, err := store.Stores.PersistentWindowStore("win", time.Hour, 10*time.Second, false)
	must(t, err)
	ss, err := store.Stores.PersistentSessionStore("sess", time.Hour)
	must(t, err)
	vs, err := store.Stores.PersistentVersionedKeyValueStore("ver", 10*time.Second)
	must(t, err)
	return []processor.StoreBuilder{
		store.Stores.KeyValueStoreBuilder(store.Stores.PersistentKeyValueStore("kv"), serde.String(), serde.String()),
		store.Stores.TimestampedKeyValueStoreBuilder(store.Stores.PersistentTimestampedKeyValueStore("tskv"), serde.String(), serde.String()),
		store.Stores.WindowStoreBuilder(ws, serde.String(), serde.Long()),
		store.Stores.SessionStoreBuilder(ss, serde.String(), serde.Long()),
		store.Stores.VersionedKeyValueStoreBuilder(vs, serde.String(), serde.String()),
	}
}

// crossStoreNames are the names of the stores of crossStores.
var crossStoreNames = []string{"kv", "tskv", "win", "sess", "ver"}

// verTimestamp is the version timestamp the writers give the "ver" store for a record at ts:
// out of order by up to 18 s, so that some puts are beyond its 10 s history retention.
func verTimestamp(ts int64) int64 { return ts - ((ts/1000)%7)*3000 }

// verProbes are the asOf timestamps at which the dumps query the "ver" store (every second
// around the cross inputs' timestamps).
func verProbes() []int64 {
	ins := crossInputs()
	var out []int64
	for p := ins[0].ts - 20_000; p <= ins[len(ins)-1].ts+2_000; p += 1000 {
		out = append(out, p)
	}
	return out
}

func verProbesArg() string {
	var s []string
	for _, p := range verProbes() {
		s = append(s, strconv.FormatInt(p, 10))
	}
	return strings.Join(s, ",")
}

// crossWrite applies the Java app's Writer logic to the Go stores.
func crossWrite(t *testing.T, tk *task.Task, in crossInput) {
	kv := tk.Store("kv").(store.KeyValueStore[string, string])
	tskv := tk.Store("tskv").(store.TimestampedKeyValueStore[string, string])
	win := tk.Store("win").(store.WindowStore[string, int64])
	sess := tk.Store("sess").(store.SessionStore[string, int64])
	ver := tk.Store("ver").(store.VersionedKeyValueStore[string, string])
	del := in.value == "del"
	var n int64
	if !del {
		n, _ = strconv.ParseInt(in.value, 10, 64)
	}
	if del {
		_, _, err := kv.Delete(in.key)
		must(t, err)
		_, _, err = tskv.Delete(in.key)
		must(t, err)
	} else {
		must(t, kv.Put(in.key, in.value))
		must(t, tskv.Put(in.key, store.MakeValueAndTimestamp(in.value, in.ts)))
	}
	must(t, win.Put(in.key, n, in.ts-in.ts%10_000))
	s := serde.Windowed[string]{Key: in.key, Window: serde.Window{Start: in.ts, End: in.ts + 1000}}
	if del {
		must(t, sess.Remove(s))
	} else {
		must(t, sess.Put(s, n))
	}
	if del {
		_, err := ver.Delete(in.key, verTimestamp(in.ts))
		must(t, err)
	} else {
		_, err := ver.Put(in.key, in.value, verTimestamp(in.ts))
		must(t, err)
	}
}

type verLine struct {
	Store     string `json:"store"`
	Key       string `json:"key"`
	AsOf      int64  `json:"asOf"`
	Value     string `json:"value"`
	Timestamp int64  `json:"timestamp"`
}

type kvLine struct {
	Store string `json:"store"`
	Key   string `json:"key"`
	Value string `json:"value"`
}

type tsLine struct {
	Store     string `json:"store"`
	Key       string `json:"key"`
	Value     string `json:"value"`
	Timestamp int64  `json:"timestamp"`
}

type windowedLine struct {
	Store string `json:"store"`
	Key   string `json:"key"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Value int64  `json:"value"`
}

// goDump lists the Go stores in the Java app's dump format (JSON lines, store order kv, win, sess).
func goDump(t *testing.T, tk *task.Task) []string {
	var out []string
	add := func(v any) {
		b, err := json.Marshal(v)
		must(t, err)
		out = append(out, string(b))
	}
	for k, v := range store.All(tk.Store("kv").(store.KeyValueStore[string, string]).All()) {
		add(kvLine{"kv", k, v})
	}
	for k, v := range store.All(tk.Store("tskv").(store.TimestampedKeyValueStore[string, string]).All()) {
		add(tsLine{"tskv", k, v.Value, v.Timestamp})
	}
	for k, v := range store.All(tk.Store("win").(store.WindowStore[string, int64]).All()) {
		add(windowedLine{"win", k.Key, k.Window.Start, k.Window.End, v})
	}
	for k, v := range store.All(tk.Store("sess").(store.SessionStore[string, int64]).FetchRange("", "\uffff")) {
		add(windowedLine{"sess", k.Key, k.Window.Start, k.Window.End, v})
	}
	ver := tk.Store("ver").(store.VersionedKeyValueStore[string, string])
	for k := 0; k <= 10; k++ {
		key := fmt.Sprintf("key-%d", k)
		for _, asOf := range append([]int64{-1}, verProbes()...) {
			var r *store.VersionedRecord[string]
			var err error
			if asOf < 0 {
				r, err = ver.Get(key)
			} else {
				r, err = ver.GetAsOf(key, asOf)
			}
			must(t, err)
			if r != nil {
				add(verLine{"ver", key, asOf, r.Value, r.Timestamp})
			}
		}
	}
	return out
}

func runJavaChangelogApp(t *testing.T, args ...string) {
	t.Helper()
	j := conformance.JavaFromEnv(t)
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, append([]string{"-cp", j.Classpath, javaChangelogApp}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", javaChangelogApp, args, err, out)
	}
}

// hasAllStores fails t unless lines has entries of every store.
func hasAllStores(t *testing.T, lines []string) {
	t.Helper()
	for _, s := range crossStoreNames {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, `{"store":"`+s+`"`) }) {
			t.Fatalf("no %s entries in %q", s, lines)
		}
	}
}

func readLines(t *testing.T, path string) []string {
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	must(t, sc.Err())
	return out
}

// openCrossTask opens a Go task with the cross stores of application app, writing its
// changelog to log, and restores it from the changelogs.
func openCrossTask(t *testing.T, app string, log *kafkaLog, dir string) (*task.Task, *TaskState, *countingListener) {
	for _, s := range crossStoreNames {
		log.ensureTopic(app + "-" + s + "-changelog")
	}
	coll := &logCollector{log: log}
	var specs []task.StoreSpec
	for _, b := range crossStores(t) {
		specs = append(specs, task.StoreSpec{Builder: b})
	}
	tk, err := task.New(processor.TaskID{}, task.Spec{Stores: specs}, task.Config{ApplicationID: app, StateDir: dir, Collector: coll})
	must(t, err)
	must(t, tk.Init())
	lis := newListener()
	ts := NewTaskState(TaskStateConfig{TaskDir: dir, Reader: log, Listener: lis}, tk)
	coll.ts = ts
	must(t, ts.Restore(context.Background()))
	return tk, ts, lis
}

// TestIntegrationJavaChangelogToGo: a Java Kafka Streams app fills its stores (its changelogs
// are Java's bytes); a Go task restores them; the Go stores hold exactly what the Java app
// restored from the same changelogs (Java's interactive-query dump, in the same order).
func TestIntegrationJavaChangelogToGo(t *testing.T) {
	b := kafkatest.Real(t)
	conformance.JavaFromEnv(t)
	app := kafkatest.Name(t, "javafill")
	input := app + "-input"
	kafkatest.CreateTopics(t, b, 1, nil, input)
	log := newKafkaLog(t, b, false)
	ins := crossInputs()
	for _, in := range ins {
		log.Append(TopicPartition{Topic: input, Partition: 0}, Record{Key: []byte(in.key), Value: []byte(in.value), Timestamp: in.ts})
	}
	runJavaChangelogApp(t, "fill", "--bootstrap", b.Addrs[0], "--app-id", app, "--input", input,
		"--state-dir", t.TempDir(), "--expect", strconv.Itoa(len(ins)))
	dumpPath := filepath.Join(t.TempDir(), "java.jsonl")
	runJavaChangelogApp(t, "dump", "--bootstrap", b.Addrs[0], "--app-id", app, "--input", input,
		"--state-dir", t.TempDir(), "--output", dumpPath, "--ver-probes", verProbesArg())
	want := readLines(t, dumpPath)
	hasAllStores(t, want)

	tk, _, lis := openCrossTask(t, app, log, t.TempDir())
	defer tk.Close()
	got := goDump(t, tk)
	if !slices.Equal(got, want) {
		t.Fatalf("Go stores restored from Java's changelogs differ from Java's own restore\n%s", lineDiff(got, want))
	}
	for _, s := range crossStoreNames {
		if lis.restored[s] == 0 {
			t.Errorf("%s: nothing restored", s)
		}
	}
	// The Go writer logic agrees with Java's on the same input (sanity check of the fixture).
	tk2, _, _ := openCrossTask(t, kafkatest.Name(t, "gocheck"), newKafkaLog(t, b, false), t.TempDir())
	defer tk2.Close()
	for _, in := range ins {
		crossWrite(t, tk2, in)
	}
	if got := goDump(t, tk2); !slices.Equal(got, want) {
		t.Fatalf("Go writer disagrees with Java's\n%s", lineDiff(got, want))
	}
}

// TestIntegrationGoChangelogToJava: a Go task fills its stores (its changelogs are Go's bytes);
// a Java Kafka Streams app restores them and its interactive-query dump equals the Go stores.
func TestIntegrationGoChangelogToJava(t *testing.T) {
	b := kafkatest.Real(t)
	conformance.JavaFromEnv(t)
	app := kafkatest.Name(t, "gofill")
	input := app + "-input"
	kafkatest.CreateTopics(t, b, 1, nil, input)
	log := newKafkaLog(t, b, false)
	tk, ts, _ := openCrossTask(t, app, log, t.TempDir())
	for _, in := range crossInputs() {
		crossWrite(t, tk, in)
	}
	must(t, tk.Commit())
	must(t, ts.Checkpoint())
	want := goDump(t, tk)
	hasAllStores(t, want)
	must(t, tk.Close())

	dumpPath := filepath.Join(t.TempDir(), "java.jsonl")
	runJavaChangelogApp(t, "dump", "--bootstrap", b.Addrs[0], "--app-id", app, "--input", input,
		"--state-dir", t.TempDir(), "--output", dumpPath, "--ver-probes", verProbesArg())
	got := readLines(t, dumpPath)
	if !slices.Equal(got, want) {
		t.Fatalf("Java stores restored from Go's changelogs differ from the Go stores (got: Java's)\n%s", lineDiff(got, want))
	}
}

// lineDiff lists the lines only in got and only in want.
func lineDiff(got, want []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d lines, want %d\n", len(got), len(want))
	for _, l := range got {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	return b.String()
}
