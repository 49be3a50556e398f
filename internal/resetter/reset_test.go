package resetter

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams"
)

func TestParseArgs(t *testing.T) {
	o, err := ParseArgs([]string{"--application-id", "wc", "--bootstrap-server=a:1,b:2", "--input-topics", "in1,in2",
		"--input-topics=in3", "--intermediate-topics", "mid", "--internal-topics", "wc-x-changelog", "--shift-by", "-5",
		"--dry-run", "--force", "--state-dir", "/tmp/s"})
	if err != nil {
		t.Fatal(err)
	}
	if o.ApplicationID != "wc" || strings.Join(o.BootstrapServers, ";") != "a:1;b:2" ||
		strings.Join(o.InputTopics, ";") != "in1;in2;in3" || strings.Join(o.IntermediateTopics, ";") != "mid" ||
		strings.Join(o.InternalTopics, ";") != "wc-x-changelog" || o.Mode != ShiftBy || o.Shift != -5 ||
		!o.DryRun || !o.Force || o.StateDir != "/tmp/s" {
		t.Fatalf("parsed %+v", o)
	}
	o, err = ParseArgs([]string{"--application-id", "wc"})
	if err != nil || o.Mode != ToEarliest || strings.Join(o.BootstrapServers, ";") != "localhost:9092" {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
	o, err = ParseArgs([]string{"--application-id", "wc", "--to-datetime", "2026-03-01T10:20:30.456"})
	if err != nil || o.Mode != ToDatetime || !o.Time.Equal(time.Date(2026, 3, 1, 10, 20, 30, 456e6, time.UTC)) {
		t.Fatalf("--to-datetime: %+v, %v", o, err)
	}
	o, err = ParseArgs([]string{"--application-id", "wc", "--by-duration", "P1DT2H3M4.5S"})
	if err != nil || o.Mode != ByDuration || o.Duration != 26*time.Hour+3*time.Minute+4500*time.Millisecond {
		t.Fatalf("--by-duration: %+v, %v", o, err)
	}
	o, err = ParseArgs([]string{"--application-id", "wc", "--to-offset", "42"})
	if err != nil || o.Mode != ToOffset || o.Offset != 42 {
		t.Fatalf("--to-offset: %+v, %v", o, err)
	}
	o, err = ParseArgs([]string{"--application-id", "wc", "--to-latest"})
	if err != nil || o.Mode != ToLatest {
		t.Fatalf("--to-latest: %+v, %v", o, err)
	}

	plan := filepath.Join(t.TempDir(), "plan.csv")
	os.WriteFile(plan, []byte("in,0,5\nin,1,7\n\n"), 0o644)
	props := filepath.Join(t.TempDir(), "client.properties")
	os.WriteFile(props, []byte("# comment\nbootstrap.servers=c:3\nsecurity.protocol = SASL_PLAINTEXT\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n    username=\"u\" password=\"p\";\n"), 0o644)
	o, err = ParseArgs([]string{"--application-id", "wc", "--from-file", plan, "--config-file", props})
	if err != nil || o.Mode != FromFile || len(o.Plan) != 2 || o.Plan[TopicPartition{"in", 1}] != 7 {
		t.Fatalf("--from-file: %+v, %v", o, err)
	}
	if strings.Join(o.BootstrapServers, ";") != "c:3" || o.Properties["security.protocol"] != "SASL_PLAINTEXT" ||
		o.Properties["sasl.jaas.config"] != `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";` {
		t.Fatalf("--config-file: servers %v, properties %q", o.BootstrapServers, o.Properties)
	}
	if len(o.Notes) != 1 || o.Notes[0] != "Option --config-file has been deprecated and will be removed in a future version. Use --command-config instead." {
		t.Errorf("--config-file notes %q, want Java's deprecation line", o.Notes)
	}

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--input-topics", "in"}, "Missing required option(s) [application-id]"},
		{[]string{"--application-id", "wc", "--to-earliest", "--to-latest"}, `Option "to-earliest" can't be used with option "to-latest"`},
		{[]string{"--application-id", "wc", "--shift-by", "1", "--to-offset", "2"}, `Option "shift-by" can't be used with option "to-offset"`},
		{[]string{"--application-id", "wc", "--to-offset", "x"}, `--to-offset: "x" is not an offset (a whole number)`},
		{[]string{"--application-id", "wc", "--to-datetime", "2026-03-01"}, `--to-datetime: "2026-03-01" does not contain a 'T' according to ISO8601 format (YYYY-MM-DDTHH:mm:SS.sss)`},
		{[]string{"--application-id", "wc", "--to-datetime", "2026-13-01T00:00:00.000"}, `--to-datetime: "2026-13-01T00:00:00.000" is not a datetime of the format YYYY-MM-DDTHH:mm:SS.sss (optionally with Z, +hh:mm or -hh:mm)`},
		{[]string{"--application-id", "wc", "--by-duration", "1 day"}, `--by-duration: "1 day" is not a duration of the format PnDTnHnMnS (e.g. PT1H30M) or a Go duration (1h30m)`},
		{[]string{"--application-id", "wc", "--by-duration", "-PT1H"}, `--by-duration: "-PT1H" is negative: give how far back from now`},
		{[]string{"--application-id", "wc", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"--application-id", "wc", "extra"}, `unexpected argument "extra"`},
	} {
		_, err := ParseArgs(c.args)
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Msg != c.msg {
			t.Errorf("%q: %v, want usage error %q", c.args, err, c.msg)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(bad, []byte("in,0,5\nin;1;7\n"), 0o644)
	if _, err := ParseArgs([]string{"--application-id", "wc", "--from-file", bad}); err == nil ||
		err.Error() != "--from-file "+bad+`: line 2: "in;1;7" is not of the format TOPIC,PARTITION,OFFSET` {
		t.Errorf("bad plan: %v", err)
	}
	if _, err := ParseArgs([]string{"-h"}); !errors.Is(err, ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

func TestParseDatetimeZones(t *testing.T) {
	want := time.Date(2026, 3, 1, 9, 20, 30, 0, time.UTC)
	for _, s := range []string{"2026-03-01T09:20:30.000", "2026-03-01T09:20:30.000Z", "2026-03-01T10:20:30.000+01:00",
		"2026-03-01T10:20:30.000+0100", "2026-03-01T10:20:30.000+01", "2026-03-01T07:20:30.000-02:00", "2026-03-01T09:20:30"} {
		got, err := ParseDatetime(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("%s: %v, %v; want %v", s, got, err, want)
		}
	}
}

func TestTarget(t *testing.T) {
	tp := TopicPartition{"in", 0}
	b := Bounds{Earliest: 10, Latest: 100}
	for _, c := range []struct {
		name string
		o    Options
		l    Lookup
		want int64
		note string
	}{
		{"earliest", Options{Mode: ToEarliest}, Lookup{Bounds: b, Committed: 50, HasCommit: true}, 10, ""},
		{"latest", Options{Mode: ToLatest}, Lookup{Bounds: b}, 100, ""},
		{"to-offset", Options{Mode: ToOffset, Offset: 42}, Lookup{Bounds: b}, 42, ""},
		{"to-offset below", Options{Mode: ToOffset, Offset: 3}, Lookup{Bounds: b}, 10, "New offset (3) is lower than earliest offset. Value will be set to 10"},
		{"to-offset above", Options{Mode: ToOffset, Offset: 300}, Lookup{Bounds: b}, 100, "New offset (300) is higher than latest offset. Value will be set to 100"},
		{"shift back", Options{Mode: ShiftBy, Shift: -20}, Lookup{Bounds: b, Committed: 50, HasCommit: true}, 30, ""},
		{"shift forward past end", Options{Mode: ShiftBy, Shift: 70}, Lookup{Bounds: b, Committed: 50, HasCommit: true}, 100, "New offset (120) is higher than latest offset. Value will be set to 100"},
		{"shift without commit", Options{Mode: ShiftBy, Shift: -5}, Lookup{Bounds: b}, 95, ""},
		{"datetime", Options{Mode: ToDatetime}, Lookup{Bounds: b, AtTime: 77, HasAtTime: true}, 77, ""},
		{"datetime after the last record", Options{Mode: ToDatetime}, Lookup{Bounds: b}, 100, "Partition 0 from topic in is empty, without a committed record. Falling back to latest known offset."},
		{"duration", Options{Mode: ByDuration}, Lookup{Bounds: b, AtTime: 60, HasAtTime: true}, 60, ""},
		{"from file", Options{Mode: FromFile, Plan: map[TopicPartition]int64{tp: 55}}, Lookup{Bounds: b}, 55, ""},
		{"from file below", Options{Mode: FromFile, Plan: map[TopicPartition]int64{tp: 1}}, Lookup{Bounds: b}, 10, "New offset (1) is lower than earliest offset. Value will be set to 10"},
		{"from file not in plan", Options{Mode: FromFile, Plan: map[TopicPartition]int64{{"in", 1}: 1}}, Lookup{Bounds: b, Committed: 50, HasCommit: true}, 50, "Partition in-0 is not in the reset plan; it keeps offset 50"},
	} {
		got, notes := Target(&c.o, tp, c.l)
		if got != c.want || strings.Join(notes, "|") != c.note {
			t.Errorf("%s: %d %q, want %d %q", c.name, got, notes, c.want, c.note)
		}
	}
}

func TestInternalTopics(t *testing.T) {
	all := []string{
		"wc-counts-store-changelog", "wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition",
		"wc-KTABLE-SUPPRESS-STATE-STORE-0000000009-changelog",
		"wc-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic",
		"wc-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic",
		"wc-my-fk-subscription-registration-topic", "wc-my-fk-subscription-response-topic",
		"wc-lines", "wc-counts", "other-x-changelog", "wcx-counts-changelog", "wc-input-named-like-changelog",
		"wc-in-changelog", "__consumer_offsets",
	}
	got := InternalTopics("wc", all, []string{"wc-in-changelog"}, nil)
	want := []string{"wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition",
		"wc-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic",
		"wc-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic",
		"wc-KTABLE-SUPPRESS-STATE-STORE-0000000009-changelog", "wc-counts-store-changelog",
		"wc-input-named-like-changelog", "wc-my-fk-subscription-registration-topic", "wc-my-fk-subscription-response-topic"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("internal topics\n got %q\nwant %q", got, want)
	}
}

// fakeCluster is an in-memory Cluster that records every change.
type fakeCluster struct {
	members   []Member
	topics    map[string]int32
	bounds    map[TopicPartition]Bounds
	committed map[TopicPartition]int64
	atTime    map[TopicPartition]int64
	changes   []string
}

func (f *fakeCluster) Members(string) ([]Member, error) { return f.members, nil }
func (f *fakeCluster) RemoveMembers(g string, ms []Member) error {
	f.changes = append(f.changes, "remove members")
	f.members = nil
	return nil
}
func (f *fakeCluster) Topics() (map[string]int32, error) { return f.topics, nil }
func (f *fakeCluster) Bounds(tps []TopicPartition) (map[TopicPartition]Bounds, error) {
	return f.bounds, nil
}
func (f *fakeCluster) OffsetsForTime([]TopicPartition, int64) (map[TopicPartition]int64, error) {
	return f.atTime, nil
}
func (f *fakeCluster) Committed(string, []TopicPartition) (map[TopicPartition]int64, error) {
	return f.committed, nil
}
func (f *fakeCluster) Commit(g string, offs map[TopicPartition]int64) error {
	for tp, o := range offs {
		f.committed[tp] = o
	}
	f.changes = append(f.changes, "commit")
	return nil
}
func (f *fakeCluster) DeleteTopics(ts []string) error {
	for _, t := range ts {
		delete(f.topics, t)
	}
	f.changes = append(f.changes, "delete "+strings.Join(ts, ","))
	return nil
}
func (f *fakeCluster) Close() error { return nil }

func newFake() *fakeCluster {
	return &fakeCluster{
		topics:    map[string]int32{"lines": 2, "mid": 1, "wc-counts-store-changelog": 2, "wc-x-repartition": 2, "counts": 2},
		bounds:    map[TopicPartition]Bounds{{"lines", 0}: {0, 40}, {"lines", 1}: {5, 60}, {"mid", 0}: {0, 9}},
		committed: map[TopicPartition]int64{{"lines", 0}: 40, {"lines", 1}: 60},
	}
}

func TestResetFlow(t *testing.T) {
	f := newFake()
	var out bytes.Buffer
	o := &Options{ApplicationID: "wc", InputTopics: []string{"lines"}, IntermediateTopics: []string{"mid"}}
	code, err := Reset(o, f, &out)
	if err != nil || code != ExitSuccess {
		t.Fatalf("reset: %d %v\n%s", code, err, out.String())
	}
	want := `Reset-offsets for input topics [lines]
Seek-to-end for intermediate topics [mid]
Following input topics offsets will be reset to (for consumer group wc)
Topic: lines Partition: 0 Offset: 0
Topic: lines Partition: 1 Offset: 5
Following intermediate topics offsets will be reset to end (for consumer group wc)
Topic: mid
Done.
Deleting inferred internal topics [wc-counts-store-changelog, wc-x-repartition]
Done.
Remember to delete the local state of every instance before restarting it (KafkaStreams#cleanUp, kstreams.CleanUpStateDir, or this tool's --state-dir): ` + filepath.Join(os.TempDir(), "kafka-streams", "wc") + " by default\n"
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
	if strings.Join(f.changes, ";") != "commit;delete wc-counts-store-changelog,wc-x-repartition" ||
		f.committed[TopicPartition{"lines", 0}] != 0 || f.committed[TopicPartition{"lines", 1}] != 5 || f.committed[TopicPartition{"mid", 0}] != 9 {
		t.Errorf("changes %q, committed %v", f.changes, f.committed)
	}
}

// A dry run prints the same plan (headed by Java's dry-run line) and changes nothing: no
// member removed, no offset committed, no topic deleted, no local state deleted.
func TestResetDryRunChangesNothing(t *testing.T) {
	f := newFake()
	f.members = []Member{{MemberID: "m-1", ClientID: "wc-1-StreamThread-1-consumer", Host: "/127.0.0.1"}}
	stateDir := t.TempDir()
	task := filepath.Join(stateDir, "wc", "0_0")
	os.MkdirAll(task, 0o755)
	var out bytes.Buffer
	o := &Options{ApplicationID: "wc", InputTopics: []string{"lines"}, DryRun: true, Force: true, StateDir: stateDir, Mode: ToLatest}
	code, err := Reset(o, f, &out)
	if err != nil || code != ExitSuccess {
		t.Fatalf("dry run: %d %v", code, err)
	}
	if len(f.changes) != 0 || len(f.members) != 1 || f.committed[TopicPartition{"lines", 0}] != 40 || len(f.topics) != 5 {
		t.Errorf("dry run changed the cluster: %q", f.changes)
	}
	if _, err := os.Stat(task); err != nil {
		t.Errorf("dry run deleted local state: %v", err)
	}
	want := `----Dry run displays the actions which will be performed when running Streams Reset Tool----
Force deleting all active members in the group: wc
Deleting the local state in ` + filepath.Join(stateDir, "wc") + `
Reset-offsets for input topics [lines]
Following input topics offsets will be reset to (for consumer group wc)
Topic: lines Partition: 0 Offset: 40
Topic: lines Partition: 1 Offset: 60
Done.
Deleting inferred internal topics [wc-counts-store-changelog, wc-x-repartition]
Done.
`
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
}

func TestResetRefusals(t *testing.T) {
	// Active members without --force.
	f := newFake()
	f.members = []Member{{MemberID: "m-1", ClientID: "c", Host: "/h"}}
	_, err := Reset(&Options{ApplicationID: "wc", InputTopics: []string{"lines"}}, f, &bytes.Buffer{})
	if !errors.Is(err, ErrGroupActive) || err.Error() != "Consumer group 'wc' is still active and has "+
		"following members: [(memberId=m-1, groupInstanceId=null, clientId=c, host=/h)]. Make sure to stop all running application "+
		"instances before running the reset tool. You can use option '--force' to remove active members from the group." {
		t.Errorf("active group: %v", err)
	}
	if len(f.changes) != 0 {
		t.Errorf("changes %q", f.changes)
	}
	// --force removes them, then resets.
	var out bytes.Buffer
	if code, err := Reset(&Options{ApplicationID: "wc", InputTopics: []string{"lines"}, Force: true}, f, &out); err != nil || code != 0 {
		t.Fatalf("--force: %d %v", code, err)
	}
	if strings.Join(f.changes, ";") != "remove members;commit;delete wc-counts-store-changelog,wc-x-repartition" {
		t.Errorf("--force changes %q", f.changes)
	}

	// --internal-topics naming a user topic: refused before anything changes.
	f = newFake()
	_, err = Reset(&Options{ApplicationID: "wc", InputTopics: []string{"lines"}, InternalTopics: []string{"counts"}}, f, &bytes.Buffer{})
	if !errors.Is(err, ErrNotInternalTopic) || len(f.changes) != 0 {
		t.Errorf("--internal-topics counts: %v, changes %q", err, f.changes)
	}
	// --internal-topics subset.
	if _, err := Reset(&Options{ApplicationID: "wc", InternalTopics: []string{"wc-x-repartition"}}, f, &bytes.Buffer{}); err != nil ||
		strings.Join(f.changes, ";") != "delete wc-x-repartition" {
		t.Errorf("--internal-topics subset: %v, changes %q", err, f.changes)
	}

	// A missing input topic: the others are reset, exit code 1.
	f = newFake()
	out.Reset()
	code, err := Reset(&Options{ApplicationID: "wc", InputTopics: []string{"lines", "nope"}}, f, &out)
	if err != nil || code != ExitError || !strings.Contains(out.String(), "Following input topics are not found, skipping them\nTopic: nope\n") ||
		f.committed[TopicPartition{"lines", 1}] != 5 {
		t.Errorf("missing topic: %d %v\n%s", code, err, out.String())
	}
}

// --state-dir deletes the application's local state but keeps the lock and process files, and
// is refused, before anything on the cluster changes, while an instance holds the directory.
func TestResetStateDir(t *testing.T) {
	stateDir := t.TempDir()
	appDir := filepath.Join(stateDir, "wc")
	os.MkdirAll(filepath.Join(appDir, "0_0", "rocksdb", "counts"), 0o755)
	os.MkdirAll(filepath.Join(appDir, "global"), 0o755)
	os.WriteFile(filepath.Join(appDir, "0_0", ".checkpoint"), []byte("0\n"), 0o644)
	os.WriteFile(filepath.Join(appDir, "kafka-streams-process-metadata"), []byte(`{"processId":"8d4f5c1e-0b7a-4c3e-9f6d-2a1b3c4d5e6f"}`), 0o644)

	held := lockHeld(t, stateDir, "wc")
	f := newFake()
	_, err := Reset(&Options{ApplicationID: "wc", InputTopics: []string{"lines"}, StateDir: stateDir}, f, &bytes.Buffer{})
	if !errors.Is(err, kstreams.ErrStateDirLocked) || len(f.changes) != 0 {
		t.Fatalf("locked state directory: %v, changes %q", err, f.changes)
	}
	if _, err := os.Stat(filepath.Join(appDir, "0_0")); err != nil {
		t.Fatalf("a refused reset deleted local state: %v", err)
	}
	held()

	if _, err := Reset(&Options{ApplicationID: "wc", InputTopics: []string{"lines"}, StateDir: stateDir}, f, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(appDir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != ".lock,kafka-streams-process-metadata" {
		t.Errorf("left in the state directory: %v", names)
	}
}

func TestRunExitCodes(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run([]string{"--to-latest"}, &out, &errb); code != ExitError ||
		!strings.HasPrefix(errb.String(), "Missing required option(s) [application-id]\n\nUsage: kstreams-application-reset") {
		t.Errorf("missing id: %d %q", code, errb.String())
	}
	out.Reset()
	if code := Run([]string{"--help"}, &out, &errb); code != ExitSuccess || !strings.Contains(out.String(), "-shift-by") {
		t.Errorf("--help: %d %q", code, out.String())
	}
	f := newFake()
	f.members = []Member{{MemberID: "m"}}
	defer func(c func(*Options) (Cluster, error)) { Connect = c }(Connect)
	Connect = func(*Options) (Cluster, error) { return f, nil }
	errb.Reset()
	if code := Run([]string{"--application-id", "wc"}, &out, &errb); code != ExitError ||
		!strings.HasPrefix(errb.String(), "ERROR: Consumer group 'wc' is still active and has following members: [(memberId=m, ") {
		t.Errorf("active group: %d %q", code, errb.String())
	}
}
