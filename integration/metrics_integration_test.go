package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// storeProcessor drops values ending in 3 (an error its handler continues past), keeps the
// others in the "Latest" store (a Get and a Put each) and forwards them.
type storeProcessor struct {
	ctx processor.ProcessorContext[string, int64]
	kv  store.KeyValueStore[string, int64]
}

func (p *storeProcessor) Init(ctx processor.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	kv, err := processor.GetStateStore[store.KeyValueStore[string, int64]](ctx, "Latest")
	p.kv = kv
	return err
}

func (p *storeProcessor) Process(r processor.Record[string, int64]) error {
	if r.Value%10 == 3 {
		return errors.New("poison: ends in 3")
	}
	old, _, err := p.kv.Get(r.Key)
	if err != nil {
		return err
	}
	if err := p.kv.Put(r.Key, old+r.Value); err != nil {
		return err
	}
	return p.ctx.Forward(r)
}

func (p *storeProcessor) Close() error { return nil }

func metricsTopology(t *testing.T, input, output string) *processor.Topology {
	topo := processor.NewTopology()
	windows, err := store.Stores.InMemoryWindowStore("Windows", time.Hour, time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		topo.AddSource("Source", []string{input}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.Long())),
		topo.AddProcessor("P", processor.ProcessorSupplierFunc[string, int64, string, int64](
			func() processor.Processor[string, int64, string, int64] { return &storeProcessor{} }), "Source"),
		topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.PersistentKeyValueStore("Latest"), serde.String(), serde.Long()), "P"),
		topo.AddStateStore(store.Stores.WindowStoreBuilder(windows, serde.String(), serde.Long()), "P"), // unused: the live page's lookup refuses it
		topo.AddSink("Sink", output, []string{"P"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return topo
}

// waitMetrics polls app.Metrics() until ok holds, or fails at the deadline with the last
// snapshot.
func waitMetrics(t *testing.T, app *kstreams.KafkaStreams, what string, ok func(kstreams.Metrics) bool) kstreams.Metrics {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		m := app.Metrics()
		if ok(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached in a minute; last metrics %+v (err %v)", what, m, app.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func oneTask(m kstreams.Metrics) (kstreams.ThreadMetrics, kstreams.TaskMetrics, bool) {
	if len(m.Threads) != 1 || len(m.Threads[0].Tasks) != 1 {
		return kstreams.ThreadMetrics{}, kstreams.TaskMetrics{}, false
	}
	return m.Threads[0], m.Threads[0].Tasks[0], true
}

// checkMetrics: after a run, each metric group read through Metrics() and through the
// Prometheus registry agrees with an independent count: the records produced, those the
// processor drops (values ending in 3), the dead letters, the output records read back, one
// task, the store calls the processor makes; a second instance on an empty state directory
// restores as many records as the changelog topic holds (its end offset, asked of the broker).
func checkMetrics(t *testing.T, b kafkatest.Broker) {
	input, output, dlq := kafkatest.Name(t, "in"), kafkatest.Name(t, "out"), kafkatest.Name(t, "dlq")
	appID := kafkatest.Name(t, "metrics")
	createTopics(t, b, 1, input, output, dlq)
	const n = 100
	producePoisoned(t, b, input, n, -1) // k<i> = i, i < n
	wantDropped := 0
	for i := 0; i < n; i++ {
		if i%10 == 3 {
			wantDropped++
		}
	}
	reg := prometheus.NewRegistry()
	newApp := func(dir string) *kstreams.KafkaStreams {
		app, err := kstreams.New(metricsTopology(t, input, output), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: 100 * time.Millisecond,
			StateDir: dir, Sarama: fastSarama, Consumer: fastConsumer, DeadLetterQueueTopic: dlq,
			MetricsRecordingLevel: "debug", Registry: reg,
			ProcessingHandler: func(string, error) kstreams.HandlerResponse { return kstreams.Continue },
		})
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	app := newApp(t.TempDir())
	if m := app.Metrics(); m.State != kstreams.StateCreated || len(m.Threads) != 0 || m.RecordingLevel != "DEBUG" {
		t.Fatalf("before Start: %+v", m)
	}
	lookupStatus(t, app, "store=Latest&key=k1", http.StatusServiceUnavailable, "not available")
	started := time.Now().UnixMilli()
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := waitMetrics(t, app, "all records processed and committed", func(m kstreams.Metrics) bool {
		th, task, ok := oneTask(m)
		return ok && task.ProcessedRecords == n && th.Commit.Total > 0 && m.State == kstreams.StateRunning
	})
	checkNodeMetrics(t, m, n, wantDropped, started, time.Now().UnixMilli())
	out := readRaw(t, b, output, n-wantDropped, time.Minute)
	th, task, _ := oneTask(m)
	if m.AliveStreamThreads != 1 || m.FailedStreamThreads != 0 || th.State != "RUNNING" {
		t.Errorf("client: %d alive, %d failed, thread %s", m.AliveStreamThreads, m.FailedStreamThreads, th.State)
	}
	if th.Process.Total != n || th.Process.Rate <= 0 || th.Process.LatencyAvg <= 0 || th.Poll.Total == 0 || th.TasksCreated != 1 {
		t.Errorf("thread: process %+v poll %+v created %d", th.Process, th.Poll, th.TasksCreated)
	}
	if task.TaskID != (processor.TaskID{Subtopology: 0, Partition: 0}) || task.Kind != "active" ||
		len(task.Partitions) != 1 || task.Partitions[0] != (kstreams.TopicPartition{Topic: input, Partition: 0}) {
		t.Errorf("task: %+v", task)
	}
	if task.DroppedRecords != int64(wantDropped) || task.DeadLetters != int64(wantDropped) || task.BufferedRecords != 0 {
		t.Errorf("task: dropped %d, dead letters %d, buffered %d; want %d, %d, 0", task.DroppedRecords, task.DeadLetters,
			task.BufferedRecords, wantDropped, wantDropped)
	}
	if len(out) != n-wantDropped {
		t.Errorf("%d output records, want %d", len(out), n-wantDropped)
	}
	var latest *kstreams.StoreMetrics
	for i := range m.Stores {
		if m.Stores[i].Store == "Latest" {
			latest = &m.Stores[i]
		}
	}
	if latest == nil || latest.Type != "pebble" || latest.Operations["put"].Total != int64(n-wantDropped) ||
		latest.Operations["get"].Total != int64(n-wantDropped) || latest.Operations["put"].LatencyMax <= 0 {
		t.Errorf("store metrics %+v, want %d timed puts and gets", latest, n-wantDropped)
	}
	if len(m.Threads[0].Tasks) != 1 {
		t.Errorf("tasks %+v", m.Threads[0].Tasks)
	}

	// The same figures under their Prometheus names.
	fams := gather(t, reg)
	thread := th.Name
	checkValue(t, fams, "kstreams_client_state", map[string]string{"state": "RUNNING"}, 1)
	checkValue(t, fams, "kstreams_client_alive_stream_threads", nil, 1)
	checkValue(t, fams, "kstreams_thread_process_total", map[string]string{"thread": thread}, n)
	checkValue(t, fams, "kstreams_thread_task_created_total", map[string]string{"thread": thread}, 1)
	checkValue(t, fams, "kstreams_task_dropped_records_total", map[string]string{"task": "0_0"}, float64(wantDropped))
	checkValue(t, fams, "kstreams_task_dead_letters_total", map[string]string{"task": "0_0"}, float64(wantDropped))
	checkValue(t, fams, "kstreams_task_process_total", map[string]string{"task": "0_0"}, n)
	checkValue(t, fams, "kstreams_state_store_latency_seconds", map[string]string{"store": "Latest", "op": "put"}, float64(n-wantDropped))
	checkValue(t, fams, "kstreams_node_process_total", map[string]string{"task": "0_0", "node": "P"}, n)
	checkValue(t, fams, "kstreams_node_process_total", map[string]string{"task": "0_0", "node": "Sink"}, float64(n-wantDropped))
	checkLivePage(t, app, wantDropped)
	closeApp(t, app)

	// A second instance with an empty state directory restores the store from its changelog.
	changelog := appID + "-Latest-changelog"
	end := endOffset(t, b, changelog)
	if end != int64(n-wantDropped) {
		t.Fatalf("changelog %s ends at %d, want %d (one record per distinct key)", changelog, end, n-wantDropped)
	}
	reg = prometheus.NewRegistry()
	app = newApp(t.TempDir())
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer closeApp(t, app)
	m = waitMetrics(t, app, "restored", func(m kstreams.Metrics) bool {
		_, task, ok := oneTask(m)
		return ok && task.Kind == "active" && task.RestoredRecords == end && m.State == kstreams.StateRunning
	})
	th, task, _ = oneTask(m)
	if th.RestoredRecords != end || task.RestoreRemainingRecords != 0 || task.ProcessedRecords != 0 {
		t.Errorf("after restore: thread restored %d, task %+v; want %d restored, 0 remaining, 0 processed", th.RestoredRecords, task, end)
	}
	fams = gather(t, reg)
	checkValue(t, fams, "kstreams_thread_restored_records_total", map[string]string{"thread": th.Name}, float64(end))
	checkValue(t, fams, "kstreams_task_restore_total", map[string]string{"task": "0_0"}, float64(end))
	checkValue(t, fams, "kstreams_task_restore_remaining_records", map[string]string{"task": "0_0"}, 0)
}

func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// checkValue finds the metric of family name whose labels include labels and compares its
// value (a summary's count) with want.
func checkValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string, want float64) {
	t.Helper()
	mf := fams[name]
	if mf == nil {
		t.Errorf("no family %s", name)
		return
	}
	for _, m := range mf.GetMetric() {
		match := true
		for k, v := range labels {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			match = match && found
		}
		if !match {
			continue
		}
		var got float64
		switch {
		case m.Counter != nil:
			got = m.Counter.GetValue()
		case m.Gauge != nil:
			got = m.Gauge.GetValue()
		case m.Summary != nil:
			got = float64(m.Summary.GetSampleCount())
		}
		if got != want {
			t.Errorf("%s%v = %v, want %v", name, labels, got, want)
		}
		return
	}
	t.Errorf("%s: no metric with labels %v", name, labels)
}

// endOffset asks the broker for the end offset of partition 0 of topic.
func endOffset(t *testing.T, b kafkatest.Broker, topic string) int64 {
	c, err := sarama.NewClient(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	off, err := c.GetOffset(topic, 0, sarama.OffsetNewest)
	if err != nil {
		t.Fatal(err)
	}
	return off
}

func TestEmbeddedMetrics(t *testing.T)    { checkMetrics(t, kafkatest.Embedded(t)) }
func TestIntegrationMetrics(t *testing.T) { checkMetrics(t, kafkatest.Real(t)) }

// checkLivePage reads the live page's three resources: the page embeds everything (no
// absolute URL but the SVG namespace), the state it polls has the task and the handler's
// decisions, the drawing has every node.
func checkLivePage(t *testing.T, app *kstreams.KafkaStreams, wantDropped int) {
	t.Helper()
	srv := httptest.NewServer(http.StripPrefix("/x", app.LivePage()))
	defer srv.Close()
	get := func(path string) string {
		resp, err := http.Get(srv.URL + "/x/kstreams/" + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %s", path, resp.Status)
		}
		return string(b)
	}
	page := get("")
	if !strings.Contains(page, `fetch("state.json"`) || !strings.Contains(page, `"topology.svg"`) ||
		strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Errorf("page does not poll state.json and embed the topology, or fetches from the network")
	}
	var st struct {
		State   string
		Metrics kstreams.Metrics
		Errors  []struct{ Kind, Where, Response string }
	}
	if err := json.Unmarshal([]byte(get("state.json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.State != "RUNNING" || len(st.Metrics.Threads) != 1 || len(st.Metrics.Threads[0].Tasks) != 1 ||
		st.Metrics.Threads[0].Tasks[0].DroppedRecords != int64(wantDropped) {
		t.Errorf("state.json: %+v", st)
	}
	handled := 0
	for _, e := range st.Errors {
		if e.Kind == "processing" && e.Where == "P" && e.Response == "CONTINUE" {
			handled++
		}
	}
	if handled != wantDropped {
		t.Errorf("state.json: %d processing errors continued, want %d (%+v)", handled, wantDropped, st.Errors)
	}
	svg := get("topology.svg")
	for _, node := range []string{"Source", ">P<", "Sink", "Sub-topology 0"} {
		if !strings.Contains(svg, node) {
			t.Errorf("topology.svg lacks %s", node)
		}
	}
	// The key lookup: k<i> holds i (its one record), but for the dropped values ending in 3.
	for _, c := range []struct {
		key   string
		found bool
		value string
	}{{"k7", true, "7"}, {"k42", true, "42"}, {"k13", false, ""}, {"k<1>", false, ""}} {
		var res struct {
			Store, Key, Error string
			Answers           []struct {
				Task      string
				Partition int32
				Found     bool
				Type      string
				JSON      json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(get("lookup.json?store=Latest&key="+url.QueryEscape(c.key))), &res); err != nil {
			t.Fatal(err)
		}
		if res.Store != "Latest" || res.Key != c.key || res.Error != "" || len(res.Answers) != 1 || res.Answers[0].Task != "0_0" ||
			res.Answers[0].Found != c.found || c.found && (string(res.Answers[0].JSON) != c.value || res.Answers[0].Type != "int64") {
			t.Errorf("lookup of %q: %+v, want found %v with %s", c.key, res, c.found, c.value)
		}
	}
	lookupStatus(t, app, "store=Nope&key=a", http.StatusNotFound, `unknown store "Nope"`)
	lookupStatus(t, app, "store=Latest", http.StatusBadRequest, "give the store and the key")
	lookupStatus(t, app, "store=Windows&key=a", http.StatusBadRequest, `store "Windows" is not a key-value store`)
	resp, err := http.Post(srv.URL+"/x/kstreams/state.json", "text/plain", nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST: %s, want read-only", resp.Status)
		}
	}
}

// lookupStatus asks the live page's lookup.json with query and checks the status and that the
// error names the cause.
func lookupStatus(t *testing.T, app *kstreams.KafkaStreams, query string, status int, cause string) {
	t.Helper()
	rec := httptest.NewRecorder()
	app.LivePage().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/kstreams/lookup.json?"+query, nil))
	var res struct{ Error string }
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatalf("lookup.json?%s: %v (%s)", query, err, rec.Body)
	}
	if rec.Code != status || !strings.Contains(res.Error, cause) {
		t.Errorf("lookup.json?%s: %d %q, want %d and an error saying %q", query, rec.Code, res.Error, status, cause)
	}
}

// checkNodeMetrics checks the processor nodes' figures after the run (at DEBUG): Source and P
// processed the n records, Sink the ones P kept; the end-to-end latency is recorded at the
// source and the sink (terminal) only, once per record reaching them. Record i has timestamp
// 1000+i ms (producePoisoned) and was processed at a wall-clock time between started and
// done, so its latency lies in [started-1000-i, done-1000-i]: the minimum, maximum and
// average over the records are bounded accordingly.
func checkNodeMetrics(t *testing.T, m kstreams.Metrics, n, wantDropped int, started, done int64) {
	t.Helper()
	nodes := map[string]kstreams.NodeMetrics{}
	for _, nm := range m.Nodes {
		if nm.TaskID == (processor.TaskID{}) {
			nodes[nm.Node] = nm
		}
	}
	var kept []int
	for i := 0; i < n; i++ {
		if i%10 != 3 {
			kept = append(kept, i)
		}
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	for _, c := range []struct {
		node      string
		processed int
		e2e       []int // the indexes of the records whose latency the node records
	}{{"Source", n, all}, {"P", n, nil}, {"Sink", n - wantDropped, kept}} {
		nm, ok := nodes[c.node]
		if !ok {
			t.Errorf("no metrics of node %s: %+v", c.node, m.Nodes)
			continue
		}
		if nm.ProcessedRecords != int64(c.processed) || nm.E2ERecords != int64(len(c.e2e)) {
			t.Errorf("node %s: %d processed, %d latencies; want %d and %d", c.node, nm.ProcessedRecords, nm.E2ERecords, c.processed, len(c.e2e))
		}
		if len(c.e2e) == 0 {
			continue
		}
		first, last, sum := c.e2e[0], c.e2e[len(c.e2e)-1], 0
		for _, i := range c.e2e {
			sum += i
		}
		mean := float64(sum) / float64(len(c.e2e))
		lo, hi, avg := nm.E2ELatencyMin.Milliseconds(), nm.E2ELatencyMax.Milliseconds(), float64(nm.E2ELatencyAvg)/float64(time.Millisecond)
		if lo < started-1000-int64(last) || lo > done-1000-int64(last) || hi < started-1000-int64(first) || hi > done-1000-int64(first) ||
			avg < float64(started-1000)-mean-1 || avg > float64(done-1000)-mean+1 {
			t.Errorf("node %s: end-to-end latency min %d, max %d, avg %.1f ms; want min in [%d, %d], max in [%d, %d], avg in [%.1f, %.1f]",
				c.node, lo, hi, avg, started-1000-int64(last), done-1000-int64(last), started-1000-int64(first), done-1000-int64(first),
				float64(started-1000)-mean, float64(done-1000)-mean)
		}
	}
}
