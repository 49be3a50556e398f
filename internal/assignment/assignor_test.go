package assignment

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// The task assignment is compared with Java Kafka Streams 4.4's own on the same scenarios:
// ClientState built from the members' owned partitions, offset sums and the end offset sums,
// the HighAvailabilityTaskAssignor, then assignTasksToThreads per client (conformance/java's
// AssignorRunner). Java's results are committed in testdata/java-assignor.jsonl, so the
// comparison runs without a JVM; with the Java harness the file is regenerated and must not
// change (KSTREAMS_UPDATE_GOLDEN=1 rewrites it).

const javaAssignorResults = "testdata/java-assignor.jsonl"

type scConsumer struct {
	ID         string           `json:"id"`
	Owned      []canonTP        `json:"owned"`
	OffsetSums map[string]int64 `json:"offsetSums"`
}

type scClient struct {
	ProcessID string       `json:"processId"`
	Consumers []scConsumer `json:"consumers"`
}

type scConfig struct {
	AcceptableRecoveryLag int64 `json:"acceptableRecoveryLag"`
	MaxWarmupReplicas     int   `json:"maxWarmupReplicas"`
	NumStandbyReplicas    int   `json:"numStandbyReplicas"`
}

type scenario struct {
	Name          string               `json:"name"`
	Config        scConfig             `json:"config"`
	Tasks         map[string][]canonTP `json:"tasks"`
	Stateful      []string             `json:"stateful"`
	EndOffsetSums map[string]int64     `json:"endOffsetSums"`
	Clients       []scClient           `json:"clients"`
}

type scThread struct {
	Active  []string `json:"active"`
	Standby []string `json:"standby"`
}

type scClientResult struct {
	ProcessID string              `json:"processId"`
	Active    []string            `json:"active"`
	Standby   []string            `json:"standby"`
	Threads   map[string]scThread `json:"threads"`
}

type scResult struct {
	Name    string           `json:"name"`
	Probing bool             `json:"probing"`
	Clients []scClientResult `json:"clients"`
	Error   string           `json:"error,omitempty"`
}

func parseTask(t *testing.T, s string) TaskID {
	t.Helper()
	a, b, ok := strings.Cut(s, "_")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("bad task id %q", s)
	}
	return TaskID{Subtopology: int32(x), Partition: int32(y)}
}

func taskStrings(ids []TaskID) []string {
	out := []string{}
	for _, id := range ids {
		out = append(out, id.String())
	}
	return out
}

// runGo runs the scenario through this package as the runtime's leader does.
func runGo(t *testing.T, sc scenario) scResult {
	t.Helper()
	taskOf := map[kafka.TopicPartition]TaskID{}
	var all []TaskID
	for s, tps := range sc.Tasks {
		id := parseTask(t, s)
		all = append(all, id)
		for _, p := range tps {
			taskOf[kafka.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = id
		}
	}
	var stateful []TaskID
	for _, s := range sc.Stateful {
		stateful = append(stateful, parseTask(t, s))
	}
	ends := map[TaskID]int64{}
	for s, v := range sc.EndOffsetSums {
		ends[parseTask(t, s)] = v
	}
	var clients []*Client
	for _, c := range sc.Clients {
		cl := NewClient(mustUUID(c.ProcessID), "", nil)
		for _, m := range c.Consumers {
			var owned []kafka.TopicPartition
			for _, p := range m.Owned {
				owned = append(owned, kafka.TopicPartition{Topic: p.Topic, Partition: p.Partition})
			}
			sums := map[TaskID]int64{}
			for s, v := range m.OffsetSums {
				sums[parseTask(t, s)] = v
			}
			cl.AddConsumer(m.ID, owned, sums)
		}
		cl.InitPrevTasks(taskOf)
		cl.ComputeLags(ends)
		clients = append(clients, cl)
	}
	cfg := Config{AcceptableRecoveryLag: sc.Config.AcceptableRecoveryLag, MaxWarmupReplicas: sc.Config.MaxWarmupReplicas,
		NumStandbyReplicas: sc.Config.NumStandbyReplicas}
	res := scResult{Name: sc.Name, Probing: AssignTasks(clients, all, stateful, cfg)}
	slices.SortFunc(clients, func(a, b *Client) int { return a.ProcessID.Compare(b.ProcessID) })
	for _, c := range clients {
		r := scClientResult{ProcessID: c.ProcessID.String(), Active: taskStrings(c.Active()), Standby: taskStrings(c.Standby()),
			Threads: map[string]scThread{}}
		active, standby := c.AssignToThreads()
		for _, m := range c.Consumers() {
			r.Threads[m] = scThread{Active: taskStrings(active[m]), Standby: taskStrings(standby[m])}
		}
		res.Clients = append(res.Clients, r)
	}
	return res
}

func tpc(topic string, p int32) canonTP { return canonTP{Topic: topic, Partition: p} }

// handScenarios are situations of Java's documented behaviour, written out by hand.
func handScenarios() []scenario {
	tasks := func(subs map[int][2]any) (map[string][]canonTP, []string) {
		out := map[string][]canonTP{}
		var stateful []string
		for sub, spec := range subs {
			n, topics := spec[0].(int), spec[1].([]string)
			for p := 0; p < n; p++ {
				id := fmt.Sprintf("%d_%d", sub, p)
				for _, t := range topics {
					out[id] = append(out[id], tpc(t, int32(p)))
				}
				if sub > 0 {
					stateful = append(stateful, id)
				}
			}
		}
		return out, stateful
	}
	// Word count shape: sub-topology 0 stateless (4 partitions), 1 stateful (4).
	wc, wcStateful := tasks(map[int][2]any{0: {4, []string{"in"}}, 1: {4, []string{"rep"}}})
	ends := map[string]int64{}
	for _, id := range wcStateful {
		ends[id] = 50_000
	}
	def := scConfig{AcceptableRecoveryLag: DefaultAcceptableRecoveryLag, MaxWarmupReplicas: DefaultMaxWarmupReplicas, NumStandbyReplicas: 1}
	a, b, c := "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b", "f0000000-0000-4000-8000-00000000000c"
	owned := func(topic string, ps ...int32) []canonTP {
		out := []canonTP{}
		for _, p := range ps {
			out = append(out, tpc(topic, p))
		}
		return out
	}
	all := map[string]int64{"1_0": -2, "1_1": -2, "1_2": -2, "1_3": -2}
	var out []scenario
	// One instance ran everything; a new empty one joins: it gets warm-ups, not actives.
	out = append(out, scenario{Name: "hand/new-instance-warms-up", Config: def, Tasks: wc, Stateful: wcStateful, EndOffsetSums: ends,
		Clients: []scClient{
			{ProcessID: a, Consumers: []scConsumer{{ID: "a-1", Owned: append(owned("in", 0, 1, 2, 3), owned("rep", 0, 1, 2, 3)...), OffsetSums: all}}},
			{ProcessID: b, Consumers: []scConsumer{{ID: "b-1", Owned: []canonTP{}, OffsetSums: map[string]int64{}}}},
		}})
	// The new instance has caught-up standbys: actives move at once.
	out = append(out, scenario{Name: "hand/caught-up-standbys-move", Config: def, Tasks: wc, Stateful: wcStateful, EndOffsetSums: ends,
		Clients: []scClient{
			{ProcessID: a, Consumers: []scConsumer{{ID: "a-1", Owned: append(owned("in", 0, 1, 2, 3), owned("rep", 0, 1, 2, 3)...), OffsetSums: all}}},
			{ProcessID: b, Consumers: []scConsumer{{ID: "b-1", Owned: []canonTP{}, OffsetSums: map[string]int64{"1_0": 49_990, "1_1": 49_000, "1_2": 45_000, "1_3": 30_000}}}},
		}})
	// Three instances, two threads each, one of them a restarted one whose state is behind.
	out = append(out, scenario{Name: "hand/three-by-two", Config: scConfig{AcceptableRecoveryLag: 100, MaxWarmupReplicas: 1, NumStandbyReplicas: 1},
		Tasks: wc, Stateful: wcStateful, EndOffsetSums: ends,
		Clients: []scClient{
			{ProcessID: a, Consumers: []scConsumer{
				{ID: "a-1", Owned: append(owned("in", 0, 1), owned("rep", 0, 1)...), OffsetSums: map[string]int64{"1_0": -2, "1_1": -2, "1_2": 40_000}},
				{ID: "a-2", Owned: append(owned("in", 2, 3), owned("rep", 2, 3)...), OffsetSums: map[string]int64{"1_2": -2, "1_3": -2}}}},
			{ProcessID: b, Consumers: []scConsumer{{ID: "b-1", OffsetSums: map[string]int64{"1_0": 49_950, "1_1": 10}}, {ID: "b-2", OffsetSums: map[string]int64{"1_3": 49_999}}}},
			{ProcessID: c, Consumers: []scConsumer{{ID: "c-1", OffsetSums: map[string]int64{}}, {ID: "c-2", OffsetSums: map[string]int64{}}}},
		}})
	// Unbounded acceptable lag: pure balance.
	out = append(out, scenario{Name: "hand/unbounded-lag", Config: scConfig{AcceptableRecoveryLag: math.MaxInt64, MaxWarmupReplicas: 2, NumStandbyReplicas: 2},
		Tasks: wc, Stateful: wcStateful, EndOffsetSums: ends,
		Clients: []scClient{
			{ProcessID: a, Consumers: []scConsumer{{ID: "a-1", Owned: append(owned("in", 0, 1, 2, 3), owned("rep", 0, 1, 2, 3)...), OffsetSums: all}}},
			{ProcessID: b, Consumers: []scConsumer{{ID: "b-1"}}},
			{ProcessID: c, Consumers: []scConsumer{{ID: "c-1"}}},
		}})
	// Old-protocol standbys (unknown offset sums) and no standby replicas.
	out = append(out, scenario{Name: "hand/unknown-sums", Config: scConfig{AcceptableRecoveryLag: 10, MaxWarmupReplicas: 2},
		Tasks: wc, Stateful: wcStateful, EndOffsetSums: ends,
		Clients: []scClient{
			{ProcessID: a, Consumers: []scConsumer{{ID: "a-1", OffsetSums: map[string]int64{"1_0": -3, "1_1": -3}}}},
			{ProcessID: b, Consumers: []scConsumer{{ID: "b-1", OffsetSums: map[string]int64{"1_2": 49_995, "1_3": 60_000}}}},
		}})
	for i := range out {
		for j := range out[i].Clients {
			for k := range out[i].Clients[j].Consumers {
				m := &out[i].Clients[j].Consumers[k]
				if m.Owned == nil {
					m.Owned = []canonTP{}
				}
				if m.OffsetSums == nil {
					m.OffsetSums = map[string]int64{}
				}
			}
		}
	}
	return out
}

// randomScenarios are generated from a fixed seed: several sub-topologies, instances with
// several threads, previous owners (sometimes two claiming a task), offset sums near and far
// from the end offsets.
func randomScenarios() []scenario {
	r := rand.New(rand.NewPCG(14, 1071))
	var out []scenario
	for n := 0; n < 120; n++ {
		sc := scenario{Name: fmt.Sprintf("random/%03d", n), Tasks: map[string][]canonTP{}, EndOffsetSums: map[string]int64{}}
		sc.Config = scConfig{AcceptableRecoveryLag: []int64{0, 10, 1000, 10_000, math.MaxInt64}[r.IntN(5)],
			MaxWarmupReplicas: 1 + r.IntN(3), NumStandbyReplicas: r.IntN(3)}
		subs := 1 + r.IntN(4)
		var ids []string
		for s := 0; s < subs; s++ {
			parts := 1 + r.IntN(9)
			topics := []string{fmt.Sprintf("t%d", s)}
			if r.IntN(3) == 0 {
				topics = append(topics, fmt.Sprintf("t%d-join", s))
			}
			stateful := r.IntN(3) > 0
			for p := 0; p < parts; p++ {
				id := fmt.Sprintf("%d_%d", s, p)
				ids = append(ids, id)
				for _, t := range topics {
					sc.Tasks[id] = append(sc.Tasks[id], tpc(t, int32(p)))
				}
				if stateful {
					sc.Stateful = append(sc.Stateful, id)
					sc.EndOffsetSums[id] = int64(r.IntN(100_000))
				}
			}
		}
		nClients := 1 + r.IntN(5)
		for c := 0; c < nClients; c++ {
			var u UUID
			for i := range u {
				u[i] = byte(r.Uint32())
			}
			cl := scClient{ProcessID: u.String()}
			threads := 1 + r.IntN(3)
			for th := 0; th < threads; th++ {
				m := scConsumer{ID: fmt.Sprintf("m-%d-%d-%08x", c, th, r.Uint32()), Owned: []canonTP{}, OffsetSums: map[string]int64{}}
				for _, id := range ids {
					switch x := r.IntN(10); {
					case x == 0: // owned active
						m.Owned = append(m.Owned, sc.Tasks[id]...)
						if slices.Contains(sc.Stateful, id) {
							m.OffsetSums[id] = OffsetSumRunning
						}
					case x <= 2 && slices.Contains(sc.Stateful, id): // state on disk
						end := sc.EndOffsetSums[id]
						m.OffsetSums[id] = max(0, end-int64(r.IntN(30_000)))
					}
				}
				cl.Consumers = append(cl.Consumers, m)
			}
			sc.Clients = append(sc.Clients, cl)
		}
		out = append(out, sc)
	}
	return out
}

func assignorScenarios() []scenario { return append(handScenarios(), randomScenarios()...) }

func readResults(t *testing.T, path string) map[string]json.RawMessage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]json.RawMessage{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var r scResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[r.Name] = json.RawMessage(slices.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAssignorMatchesJava compares every scenario's assignment (clients' active and standby
// tasks, the threads' lists in order, the probing flag) with Java's committed one.
func TestAssignorMatchesJava(t *testing.T) {
	java := readResults(t, javaAssignorResults)
	scs := assignorScenarios()
	if len(java) != len(scs) {
		t.Errorf("%s has %d results for %d scenarios: regenerate it (KSTREAMS_UPDATE_GOLDEN=1 with the Java harness)", javaAssignorResults, len(java), len(scs))
	}
	for _, sc := range scs {
		got := runGo(t, sc)
		want, ok := java[sc.Name]
		if !ok {
			t.Errorf("%s: no Java result", sc.Name)
			continue
		}
		if !sameJSON(t, got, want) {
			t.Errorf("%s: Go and Java differ\n  go:   %s\n  java: %s", sc.Name, js(got), want)
		}
	}
}

// TestAssignorAgainstJava runs Java's assignor on the scenarios and checks the committed
// results are still Java's.
func TestAssignorAgainstJava(t *testing.T) {
	cp := javaClasspath(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
	var buf bytes.Buffer
	scs := assignorScenarios()
	for _, sc := range scs {
		buf.WriteString(js(sc) + "\n")
	}
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	if b, err := exec.Command(java, "-cp", cp, "io.kstreams.conformance.assignment.AssignorRunner", in, out).CombinedOutput(); err != nil {
		t.Fatalf("java AssignorRunner: %v\n%s", err, b)
	}
	fresh := readResults(t, out)
	committed := readResults(t, javaAssignorResults)
	var golden bytes.Buffer
	for _, sc := range scs {
		r := fresh[sc.Name]
		var res scResult
		if err := json.Unmarshal(r, &res); err != nil || res.Error != "" {
			t.Errorf("%s: Java failed: %s", sc.Name, r)
			continue
		}
		golden.Write(r)
		golden.WriteByte('\n')
		if c, ok := committed[sc.Name]; !ok || !sameJSON(t, c, r) {
			t.Errorf("%s: Java now assigns %s; %s holds another result: regenerate it with KSTREAMS_UPDATE_GOLDEN=1", sc.Name, r, javaAssignorResults)
		}
	}
	if os.Getenv("KSTREAMS_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(javaAssignorResults, golden.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", javaAssignorResults)
	}
}
