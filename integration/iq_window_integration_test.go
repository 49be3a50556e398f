package integration_test

import (
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/processor"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// windowEvents are the timestamps (ms) of every key's records, produced in timestamp order
// across keys so that no record is late (no grace).
var windowEvents = []int64{1000, 4000, 12000, 14000, 40000}

// What Kafka Streams' definitions give for windowEvents: 10 s tumbling windows [0, 10000)
// count 2 (last update 4000), [10000, 20000) 2 (14000), [40000, 50000) 1 (40000); sessions with
// a 5 s inactivity gap [1000, 4000] 2, [12000, 14000] 2, [40000, 40000] 1.
var (
	wantWindows  = []string{"0=2@4000", "10000=2@14000", "40000=1@40000"}
	wantSessions = []string{"[1000,4000]=2", "[12000,14000]=2", "[40000,40000]=1"}
)

// iqInstance is one instance of a two-instance application and its application.server port.
type iqInstance struct {
	app  *kstreams.KafkaStreams
	port int
}

func collectStrings[KK, V any](t *testing.T, it store.KeyValueIterator[KK, V], f func(KK, V) string) []string {
	t.Helper()
	kvs, err := store.Collect(it)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, kv := range kvs {
		out = append(out, f(kv.Key, kv.Value))
	}
	return out
}

func windowString[K any](w serde.Windowed[K], v int64) string {
	return fmt.Sprintf("%v@%d=%d", w.Key, w.Window.Start, v)
}

func sessionString[K any](w serde.Windowed[K], v int64) string {
	return fmt.Sprintf("%v[%d,%d]=%d", w.Key, w.Window.Start, w.Window.End, v)
}

// checkWindowAndSessionViews runs a windowed and a session-windowed count on two instances of
// one application (four partitions, application.server localhost:7001 and :7002) and queries
// both through the window and session views: every key is answered by the
// instance QueryMetadataForKey names and by no other, with the windows and sessions Kafka
// Streams' definitions give (fetch by key and time range, forward and backward, a single
// window, key ranges, fetchAll by time, all; findSessions, fetch by key, fetchSession, key
// ranges), and the union of both instances' range queries is every key's. Views of the wrong
// kind or types are refused with processor.ErrWrongStoreType.
func checkWindowAndSessionViews(t *testing.T, b kafkatest.Broker) {
	input, appID := kafkatest.Name(t, "clicks"), kafkatest.Name(t, "iq-win")
	createTopics(t, b, 4, input)
	mk := func(port int) iqInstance {
		sb := kstream.NewStreamsBuilder()
		g := kstream.Stream(sb, input, kstream.ConsumedWith(serde.String(), serde.String())).GroupByKey()
		kstream.WindowedBy(g, kstream.TimeWindowsOfSizeWithNoGrace(10*time.Second)).
			Count(kstream.MaterializedAs[string, int64]("win-counts").WithRetention(time.Hour))
		kstream.WindowedBySession(g, kstream.SessionWindowsOfInactivityGapWithNoGrace(5*time.Second)).
			Count(kstream.MaterializedAs[string, int64]("session-counts").WithRetention(time.Hour))
		topo, err := sb.Build()
		if err != nil {
			t.Fatal(err)
		}
		app, err := kstreams.New(topo, kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, ApplicationServer: fmt.Sprintf("localhost:%d", port),
			CommitInterval: 20 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
		})
		if err != nil {
			t.Fatal(err)
		}
		startApp(t, app)
		return iqInstance{app: app, port: port}
	}
	insts := []iqInstance{mk(7001), mk(7002)}
	// Produce once the two instances share the tasks: the records carry 1970 timestamps, and the
	// window store's changelog has time retention (retention.ms = retention + 1 day, as Java's),
	// so the broker deletes its segments as soon as it looks at them ("log retention time
	// breach based on the largest record timestamp"). A task handed over after its changelog
	// was written would restore from the new log start and miss those windows: the broker's
	// doing (Java's changelog is configured the same), not the hand-over's or these views'.
	deadline := time.Now().Add(2 * time.Minute)
	for activeCount(insts[0].app) != 2 || activeCount(insts[1].app) != 2 ||
		insts[0].app.State() != kstreams.StateRunning || insts[1].app.State() != kstreams.StateRunning {
		if time.Now().After(deadline) {
			t.Fatalf("the instances do not run two tasks each within 2 minutes (%d and %d)", activeCount(insts[0].app), activeCount(insts[1].app))
		}
		time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
	}
	var keys []string
	for i := range 12 {
		keys = append(keys, fmt.Sprintf("user-%02d", i))
	}
	for _, ts := range windowEvents {
		for _, k := range keys {
			produceAt(t, b, input, k, "click", ts)
		}
	}

	// Wait until both instances run two tasks each and together hold every key's last window.
	deadline = time.Now().Add(2 * time.Minute)
	for {
		seen, tasks := 0, 0
		for _, in := range insts {
			tasks += min(activeCount(in.app), 2)
			if ws, err := kstreams.WindowStore[string, int64](in.app, "win-counts"); err == nil && activeCount(in.app) == 2 {
				seen += len(collectStrings(t, ws.FetchAll(40000, 40000), windowString[string]))
			} else if err != nil && !errors.Is(err, kstreams.ErrStoreNotAvailable) {
				t.Fatal(err)
			}
		}
		if tasks == 4 && seen == len(keys) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not two tasks on each instance with every key's last window within 2 minutes (tasks %d, windows %d)", tasks, seen)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}

	owner := func(key string) int {
		md, err := insts[0].app.QueryMetadataForKey("win-counts", []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range insts {
			if md.ActiveHost.Port == in.port {
				return i
			}
		}
		t.Fatalf("key %s: active host %+v is neither instance", key, md.ActiveHost)
		return -1
	}
	var allWindows, allSessions []string
	for i, in := range insts {
		ws, err := kstreams.WindowStore[string, int64](in.app, "win-counts")
		if err != nil {
			t.Fatal(err)
		}
		tws, err := kstreams.TimestampedWindowStore[string, int64](in.app, "win-counts")
		if err != nil {
			t.Fatal(err)
		}
		ss, err := kstreams.SessionStore[string, int64](in.app, "session-counts")
		if err != nil {
			t.Fatal(err)
		}
		var mine []string
		for _, k := range keys {
			windows := collectStrings(t, tws.FetchTimeRange(k, 0, 50000), func(start int64, v *store.ValueAndTimestamp[int64]) string {
				return fmt.Sprintf("%d=%d@%d", start, v.Value, v.Timestamp)
			})
			backward := collectStrings(t, ws.BackwardFetchTimeRange(k, 0, 50000), func(start int64, v int64) string { return fmt.Sprint(start, "=", v) })
			sessions := collectStrings(t, ss.Fetch(k), func(w serde.Windowed[string], v int64) string {
				return fmt.Sprintf("[%d,%d]=%d", w.Window.Start, w.Window.End, v)
			})
			found := collectStrings(t, ss.BackwardFindSessions(k, 5000, 30000), sessionString[string])
			v, ok, err := ws.Fetch(k, 10000)
			if err != nil {
				t.Fatal(err)
			}
			_, okNone, _ := ws.Fetch(k, 20000)
			sv, sok, err := ss.FetchSession(k, 12000, 14000)
			if err != nil {
				t.Fatal(err)
			}
			if owner(k) != i {
				if len(windows)+len(backward)+len(sessions)+len(found) > 0 || ok || sok {
					t.Fatalf("instance %d answers key %s, which instance %d holds: %v %v %v", i, k, owner(k), windows, sessions, found)
				}
				continue
			}
			mine = append(mine, k)
			if !slices.Equal(windows, wantWindows) {
				t.Fatalf("instance %d key %s windows %v, want %v", i, k, windows, wantWindows)
			}
			if want := []string{"40000=1", "10000=2", "0=2"}; !slices.Equal(backward, want) {
				t.Fatalf("instance %d key %s backward windows %v, want %v", i, k, backward, want)
			}
			if !ok || v != 2 || okNone {
				t.Fatalf("instance %d key %s: Fetch(10000) = %d %v, Fetch(20000) found %v", i, k, v, ok, okNone)
			}
			if !slices.Equal(sessions, wantSessions) {
				t.Fatalf("instance %d key %s sessions %v, want %v", i, k, sessions, wantSessions)
			}
			if want := []string{k + "[12000,14000]=2"}; !slices.Equal(found, want) {
				t.Fatalf("instance %d key %s findSessions(end >= 5000, start <= 30000) %v, want %v", i, k, found, want)
			}
			if !sok || sv != 2 {
				t.Fatalf("instance %d key %s fetchSession [12000,14000] = %d %v", i, k, sv, sok)
			}
		}
		t.Logf("instance %d (localhost:%d) holds %d of the %d keys", i, in.port, len(mine), len(keys))
		// Range queries give exactly this instance's keys.
		ranged := collectStrings(t, ws.FetchKeyRange(keys[0], keys[len(keys)-1], 0, 50000), windowString[string])
		all := collectStrings(t, ws.All(), windowString[string])
		backAll := collectStrings(t, ws.BackwardAll(), windowString[string])
		mid := collectStrings(t, ws.FetchAll(5000, 15000), windowString[string])
		backMid := collectStrings(t, ws.BackwardFetchKeyRange(keys[0], keys[len(keys)-1], 5000, 15000), windowString[string])
		sessRange := collectStrings(t, ss.FetchRange(keys[0], keys[len(keys)-1]), sessionString[string])
		sessFound := collectStrings(t, ss.FindSessionsRange(keys[0], keys[len(keys)-1], 0, 5000), sessionString[string])
		var wantRanged, wantMid, wantSess, wantFound []string
		for _, k := range mine {
			wantRanged = append(wantRanged, k+"@0=2", k+"@10000=2", k+"@40000=1")
			wantMid = append(wantMid, k+"@10000=2")
			wantSess = append(wantSess, k+"[1000,4000]=2", k+"[12000,14000]=2", k+"[40000,40000]=1")
			wantFound = append(wantFound, k+"[1000,4000]=2")
		}
		for _, c := range []struct {
			name      string
			got, want []string
		}{{"FetchKeyRange", ranged, wantRanged}, {"All", all, wantRanged}, {"BackwardAll", backAll, wantRanged},
			{"FetchAll(5000, 15000)", mid, wantMid}, {"BackwardFetchKeyRange(5000, 15000)", backMid, wantMid},
			{"session FetchRange", sessRange, wantSess}, {"FindSessionsRange(0, 5000)", sessFound, wantFound}} {
			got := slices.Clone(c.got)
			sort.Strings(got)
			sort.Strings(c.want)
			if !slices.Equal(got, c.want) {
				t.Fatalf("instance %d %s = %v, want %v", i, c.name, c.got, c.want)
			}
		}
		allWindows, allSessions = append(allWindows, ranged...), append(allSessions, sessRange...)
	}
	if len(allWindows) != 3*len(keys) || len(allSessions) != 3*len(keys) {
		t.Fatalf("both instances hold %d windows and %d sessions, want %d each", len(allWindows), len(allSessions), 3*len(keys))
	}

	app := insts[0].app
	_, err := kstreams.WindowStore[string, string](app, "win-counts")
	wantStoreErr(t, err, processor.ErrWrongStoreType, `state store "win-counts" is a timestamped window store of string keys and int64 values, `+
		`not a window store of string keys and string values; ask for WindowStore[string, int64] or TimestampedWindowStore[string, int64]`)
	_, err = kstreams.KeyValueStore[string, int64](app, "win-counts")
	if !errors.Is(err, processor.ErrWrongStoreType) {
		t.Fatalf("a key-value view of a window store: %v, want processor.ErrWrongStoreType", err)
	}
	_, err = kstreams.SessionStore[string, int64](app, "win-counts")
	if !errors.Is(err, processor.ErrWrongStoreType) {
		t.Fatalf("a session view of a window store: %v, want processor.ErrWrongStoreType", err)
	}
	_, err = kstreams.WindowStore[string, int64](app, "session-counts")
	if !errors.Is(err, processor.ErrWrongStoreType) {
		t.Fatalf("a window view of a session store: %v, want processor.ErrWrongStoreType", err)
	}
	_, err = kstreams.SessionStore[string, int64](app, "session-count")
	wantStoreErr(t, err, processor.ErrUnknownStore, `kstreams: unknown state store: "session-count"`)
	for _, in := range insts {
		closeApp(t, in.app)
	}
	_, err = kstreams.SessionStore[string, int64](app, "session-counts")
	if !errors.Is(err, kstreams.ErrStoreNotAvailable) {
		t.Fatalf("after Close: %v, want ErrStoreNotAvailable", err)
	}
}

func TestIntegrationWindowAndSessionViews(t *testing.T) {
	checkWindowAndSessionViews(t, kafkatest.Real(t))
}
