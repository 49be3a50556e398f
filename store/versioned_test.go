package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

type versionedEngineCase struct {
	name string
	new  func(t *testing.T, retention int64) VersionedBytesStore
}

func versionedEngines() []versionedEngineCase {
	return []versionedEngineCase{
		{"memory", func(t *testing.T, retention int64) VersionedBytesStore {
			s := newInMemoryVersionedKeyValueStore("ver", retention)
			if err := s.Init(nil, s); err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"pebble", func(t *testing.T, retention int64) VersionedBytesStore {
			s := newPebbleVersionedKeyValueStore("ver", retention, 10)
			if err := s.Init(nil, s); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
}

func formatVersioned(r *VersionedRecord[[]byte]) string {
	if r == nil {
		return "null"
	}
	s := string(r.Value) + "@" + strconv.FormatInt(r.Timestamp, 10)
	if r.HasValidTo {
		s += "-" + strconv.FormatInt(r.ValidTo, 10)
	}
	return s
}

// runVersionedScript runs the VersionedOracle script language (see
// conformance/java/.../versioned/VersionedOracle.java) against s.
func runVersionedScript(t *testing.T, s VersionedBytesStore, script []string) []string {
	t.Helper()
	var out []string
	for _, line := range script {
		f := strings.Fields(line)
		num := func(i int) int64 {
			n, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			return n
		}
		switch f[0] {
		case "put":
			var v []byte
			if f[2] != "-" {
				v = []byte(f[2])
			}
			res, err := s.Put([]byte(f[1]), v, num(3))
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			out = append(out, "put "+strconv.FormatInt(res, 10))
		case "del":
			r, err := s.Delete([]byte(f[1]), num(2))
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			out = append(out, "del "+formatVersioned(r))
		case "get":
			r, err := s.Get([]byte(f[1]))
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			out = append(out, "get "+formatVersioned(r))
		case "asof":
			r, err := s.GetAsOf([]byte(f[1]), num(2))
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			out = append(out, "asof "+formatVersioned(r))
		default:
			t.Fatalf("bad op %q", line)
		}
	}
	return out
}

// Each case is a script and the results Java's RocksDBVersionedStore gives for it (history
// retention 100 ms; checked with VersionedOracle, see TestVersionedStoreAgainstJava).
var versionedCases = []struct {
	name   string
	script []string
	want   []string
}{
	{"history and out-of-order puts",
		[]string{"put a x 10", "put a y 20", "put a z 15", "get a", "asof a 16", "asof a 12", "asof a 9", "asof a 20", "asof a 1000"},
		[]string{"put -1", "put -1", "put 20", "get y@20", "asof z@15-20", "asof x@10-15", "asof null", "asof y@20", "asof y@20"}},
	{"same timestamp replaces",
		[]string{"put a x 10", "put a y 10", "get a", "put a p 5", "put a q 5", "asof a 7"},
		[]string{"put -1", "put -1", "get y@10", "put 10", "put 10", "asof q@5-10"}},
	{"tombstones",
		[]string{"put a x 10", "del a 30", "get a", "asof a 25", "asof a 30", "put a w 20", "asof a 25", "asof a 31", "del a 40", "del b 5", "put b v 3", "asof b 4", "asof b 5"},
		[]string{"put -1", "del x@10", "get null", "asof x@10-30", "asof null", "put 30", "asof w@20-30", "asof null", "del null", "del null", "put 5", "asof v@3-5", "asof null"}},
	{"tombstone at the latest timestamp is forgotten",
		[]string{"put a x 10", "del a 10", "put a y 5", "get a"},
		[]string{"put -1", "del x@10", "put -1", "get y@5"}},
	{"history retention",
		[]string{"put a x 10", "put a y 50", "put a z 200", "asof a 60", "asof a 99", "asof a 100", "put a old 99", "put a ok 100", "asof a 150", "get a", "del a 90", "asof a 100"},
		[]string{"put -1", "put -1", "put -1", "asof null", "asof null", "asof y@50-200", "put " + strconv.FormatInt(PutReturnCodeNotPut, 10), "put 200", "asof ok@100-200", "get z@200", "del null", "asof ok@100-200"}},
	{"latest never expires",
		[]string{"put a x 10", "put b y 500", "asof a 11", "asof a 9", "get a"},
		[]string{"put -1", "put -1", "asof x@10", "asof null", "get x@10"}},
	{"empty value is not a tombstone",
		[]string{"put a x 10"},
		[]string{"put -1"}},
}

func TestVersionedStoreCases(t *testing.T) {
	for _, e := range versionedEngines() {
		for _, c := range versionedCases {
			t.Run(e.name+"/"+c.name, func(t *testing.T) {
				s := e.new(t, 100)
				if got := runVersionedScript(t, s, c.script); !slices.Equal(got, c.want) {
					t.Fatalf("results\n got %q\nwant %q", got, c.want)
				}
			})
		}
	}
}

func TestVersionedStoreEmptyValueAndErrors(t *testing.T) {
	for _, e := range versionedEngines() {
		t.Run(e.name, func(t *testing.T) {
			s := e.new(t, 100)
			if _, err := s.Put([]byte("a"), []byte{}, 10); err != nil {
				t.Fatal(err)
			}
			r, err := s.Get([]byte("a"))
			if err != nil || r == nil || r.Value == nil || len(r.Value) != 0 || r.Timestamp != 10 || r.HasValidTo {
				t.Fatalf("Get = %+v, %v; want an empty value at 10", r, err)
			}
			if _, err := s.Put(nil, []byte("x"), 1); !errors.Is(err, ErrNullKey) {
				t.Fatalf("Put(nil key) error %v, want ErrNullKey", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get([]byte("a")); !errors.Is(err, ErrStoreClosed) {
				t.Fatalf("Get after Close: %v, want ErrStoreClosed", err)
			}
		})
	}
}

// randomVersionedScript returns n operations over a few keys with timestamps that go mostly
// forward, with out-of-order and expired ones.
func randomVersionedScript(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 7))
	keys := []string{"a", "b", "c"}
	var out []string
	now := int64(0)
	for i := range n {
		k := keys[r.IntN(len(keys))]
		now += int64(r.IntN(12))
		ts := max(now-int64(r.IntN(150)), 0)
		switch p := r.IntN(100); {
		case p < 40:
			out = append(out, fmt.Sprintf("put %s v%d %d", k, i, ts))
		case p < 48:
			out = append(out, fmt.Sprintf("put %s - %d", k, ts))
		case p < 58:
			out = append(out, fmt.Sprintf("del %s %d", k, ts))
		case p < 68:
			out = append(out, "get "+k)
		default:
			out = append(out, fmt.Sprintf("asof %s %d", k, max(now-int64(r.IntN(200)), 0)))
		}
	}
	return out
}

// TestVersionedStoreRandomRestore: a store restored from the changelog of another (the
// records its change-logging layer wrote) answers every query as the original does.
func TestVersionedStoreRandomRestore(t *testing.T) {
	for _, e := range versionedEngines() {
		t.Run(e.name, func(t *testing.T) {
			for seed := range uint64(5) {
				script := randomVersionedScript(seed, 300)
				orig := &recordingLog{}
				s := newChangeLoggingVersionedKeyValueBytesStore(e.new(t, 60))
				s.logger = orig
				runVersionedScript(t, s, script)
				restored := e.new(t, 60)
				var batch []processor.RestoreRecord
				for i, r := range orig.records {
					batch = append(batch, processor.RestoreRecord{Key: r.key, Value: r.value, Timestamp: r.ts, Offset: int64(i)})
				}
				var eng *versionedEngine
				switch x := restored.(type) {
				case *inMemoryVersionedKeyValueStore:
					eng = x.versionedEngine
				case *pebbleVersionedKeyValueStore:
					eng = x.versionedEngine
				}
				for len(batch) > 0 {
					n := min(len(batch), 37)
					if err := eng.restoreBatch(batch[:n]); err != nil {
						t.Fatal(err)
					}
					batch = batch[n:]
				}
				var queries []string
				for _, k := range []string{"a", "b", "c"} {
					queries = append(queries, "get "+k)
					for ts := int64(0); ts < 4000; ts += 7 {
						queries = append(queries, fmt.Sprintf("asof %s %d", k, ts))
					}
				}
				want := runVersionedScript(t, s, queries)
				if got := runVersionedScript(t, restored, queries); !slices.Equal(got, want) {
					t.Fatalf("seed %d: restored store differs\n got %q\nwant %q", seed, got, want)
				}
			}
		})
	}
}

type loggedRecord struct {
	key, value []byte
	ts         int64
}

type recordingLog struct{ records []loggedRecord }

func (l *recordingLog) LogChange(_ string, key, value []byte, ts int64) error {
	l.records = append(l.records, loggedRecord{slices.Clone(key), slices.Clone(value), ts})
	return nil
}
func (l *recordingLog) RecordTimestamp() int64 { return 0 }

// withoutValidTo drops the validTo of records in script results: Java 4.4's typed versioned
// store (MeteredVersionedKeyValueStore, which VersionedOracle uses) returns records without
// validTo, though its bytes-level store computes it.
func withoutValidTo(results []string) []string {
	out := make([]string, len(results))
	for i, r := range results {
		if at := strings.LastIndexByte(r, '@'); at >= 0 {
			if dash := strings.IndexByte(r[at:], '-'); dash >= 0 {
				r = r[:at+dash]
			}
		}
		out[i] = r
	}
	return out
}

// TestVersionedStoreAgainstJava runs random scripts against Java's RocksDBVersionedStore
// (conformance/java VersionedOracle, history retention 60 ms, segment interval 10 ms) and both
// engines: every result is the same.
func TestVersionedStoreAgainstJava(t *testing.T) {
	cp := os.Getenv("KSTREAMS_CONFORMANCE_CP")
	if cp == "" {
		t.Skip("KSTREAMS_CONFORMANCE_CP is not set (see conformance/README.md)")
	}
	scripts := [][]string{}
	for _, c := range versionedCases {
		scripts = append(scripts, c.script)
	}
	for seed := range uint64(10) {
		scripts = append(scripts, randomVersionedScript(seed, 400))
	}
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	retention := func(i int) int64 {
		if i < len(versionedCases) {
			return 100
		}
		return 60
	}
	var in strings.Builder
	for i, script := range scripts {
		fmt.Fprintf(&in, "store %d 10\n%s\n", retention(i), strings.Join(script, "\n"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, "-cp", cp, "io.kstreams.conformance.versioned.VersionedOracle")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("VersionedOracle: %v", err)
	}
	var results [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(line, "store ") {
			results = append(results, nil)
			continue
		}
		if len(results) == 0 {
			t.Fatalf("VersionedOracle output starts with %q", line)
		}
		results[len(results)-1] = append(results[len(results)-1], line)
	}
	if len(results) != len(scripts) {
		t.Fatalf("VersionedOracle ran %d scripts, want %d", len(results), len(scripts))
	}
	for i, script := range scripts {
		want := results[i]
		if i < len(versionedCases) && !slices.Equal(want, withoutValidTo(versionedCases[i].want)) {
			t.Errorf("case %q: Java gives %q, the case expects %q", versionedCases[i].name, want, versionedCases[i].want)
		}
		for _, e := range versionedEngines() {
			got := withoutValidTo(runVersionedScript(t, e.new(t, retention(i)), script))
			if !slices.Equal(got, want) {
				for j := range min(len(got), len(want)) {
					if got[j] != want[j] {
						t.Fatalf("%s script %d: op %d %q: got %q, Java %q\nscript so far: %q", e.name, i, j, script[j], got[j], want[j], script[:j+1])
					}
				}
				t.Fatalf("%s script %d: %d results, Java %d", e.name, i, len(got), len(want))
			}
		}
	}
}

func TestVersionedTypedStoreAndChangelog(t *testing.T) {
	sup, err := Stores.InMemoryVersionedKeyValueStore("prices", 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	bld := Stores.VersionedKeyValueStoreBuilder(sup, serde.String(), serde.Long())
	info, ok := storeapi.DescribeBuilder(bld)
	if !ok || info != (storeapi.BuilderInfo{Versioned: true, HistoryRetentionMs: 50}) || !bld.LoggingEnabled() || bld.CachingEnabled() {
		t.Fatalf("builder: logging %v caching %v info %+v %v", bld.LoggingEnabled(), bld.CachingEnabled(), info, ok)
	}
	st, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	vs := st.(VersionedKeyValueStore[string, int64])
	ctx := &fakeContext{appID: "app"}
	if err := vs.Init(ctx, vs); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ctx.registered, ",") != "prices" {
		t.Fatalf("registered %v", ctx.registered)
	}
	if res, err := vs.Put("k", 7, 100); err != nil || res != PutReturnCodeValidToUndefined {
		t.Fatalf("Put = %d, %v", res, err)
	}
	if res, err := vs.Put("k", 5, 90); err != nil || res != 100 {
		t.Fatalf("Put = %d, %v", res, err)
	}
	if res, err := vs.Put("k", 1, 10); err != nil || res != PutReturnCodeNotPut {
		t.Fatalf("Put expired = %d, %v", res, err)
	}
	r, err := vs.GetAsOf("k", 95)
	if err != nil || r == nil || *r != (VersionedRecord[int64]{Value: 5, Timestamp: 90, ValidTo: 100, HasValidTo: true}) {
		t.Fatalf("GetAsOf = %+v, %v", r, err)
	}
	old, err := vs.Delete("k", 120)
	if err != nil || old == nil || *old != (VersionedRecord[int64]{Value: 7, Timestamp: 100}) {
		t.Fatalf("Delete = %+v, %v", old, err)
	}
	if r, err := vs.Get("k"); err != nil || r != nil {
		t.Fatalf("Get after delete = %+v, %v", r, err)
	}
	// The changelog holds the plain value with the version's timestamp, also for the put that
	// was not applied (as Java's ChangeLoggingVersionedKeyValueBytesStore), and a tombstone.
	want := []string{"prices:k=\x00\x00\x00\x00\x00\x00\x00\x07@100", "prices:k=\x00\x00\x00\x00\x00\x00\x00\x05@90",
		"prices:k=\x00\x00\x00\x00\x00\x00\x00\x01@10", "prices:k=<nil>@120"}
	if !slices.Equal(ctx.logged, want) {
		t.Fatalf("logged %q, want %q", ctx.logged, want)
	}
	if _, err := Stores.PersistentVersionedKeyValueStore("x", -time.Second); !errors.Is(err, ErrInvalidStoreArgument) {
		t.Fatalf("negative retention: %v", err)
	}
	if _, err := Stores.PersistentVersionedKeyValueStore("x", time.Second, 0); !errors.Is(err, ErrInvalidStoreArgument) {
		t.Fatalf("zero segment interval: %v", err)
	}
	p, err := Stores.PersistentVersionedKeyValueStore("x", time.Hour)
	if err != nil || p.HistoryRetentionMs() != 3_600_000 || p.(interface{ SegmentIntervalMs() int64 }).SegmentIntervalMs() != 300_000 {
		t.Fatalf("supplier %v %v", p, err)
	}
}

// TestPebbleVersionedStoreReopen: the Pebble engine keeps its versions across a close and
// reopen in the same state directory.
func TestPebbleVersionedStoreReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := &dirContext{fakeContext: fakeContext{appID: "app"}, dir: dir}
	s := newPebbleVersionedKeyValueStore("ver", 100, 10)
	if err := s.Init(ctx, s); err != nil {
		t.Fatal(err)
	}
	runVersionedScript(t, s, []string{"put a x 10", "put a y 20", "del a 30", "put b z 5"})
	// Under at-least-once Pebble has no WAL: Flush (a commit) makes the writes durable.
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := newPebbleVersionedKeyValueStore("ver", 100, 10)
	if err := s2.Init(ctx, s2); err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got := runVersionedScript(t, s2, []string{"get a", "asof a 15", "asof a 25", "asof a 35", "get b"})
	want := []string{"get null", "asof x@10-20", "asof y@20-30", "asof null", "get z@5"}
	if !slices.Equal(got, want) {
		t.Fatalf("after reopen\n got %q\nwant %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pebble", "ver")); err != nil {
		t.Fatalf("no database at pebble/ver: %v", err)
	}
}
