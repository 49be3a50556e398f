package integration_test

import (
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/processor"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// IQv2 (KIP-796) on two instances of one application (four partitions): a
// count, a windowed count and a session count, asked with KeyQuery, RangeQuery, WindowKeyQuery
// and WindowRangeQuery, and the follow-ups: one-sided and ordered RangeQuery (KIP-805, KIP-985),
// TimestampedKeyQuery and TimestampedRangeQuery (KIP-992), UNKNOWN_QUERY_TYPE for queries a
// store does not know. Every local partition answers with the input offsets its task
// processed (the topic's last offset of the partition, once everything is processed); a
// partition asked for that runs elsewhere is NOT_PRESENT; a position bound at the processed
// offset is met and one beyond it is NOT_UP_TO_BOUND; a query of the wrong types is a
// STORE_EXCEPTION naming the view that fits. The expected values are Kafka Streams'
// definitions: two records per key, 1 s apart, in one 10 s window and one session.
func TestIntegrationStateQueryIQv2(t *testing.T) {
	b := kafkatest.Real(t)
	input, appID := kafkatest.Name(t, "events"), kafkatest.Name(t, "iqv2")
	createTopics(t, b, 4, input)
	// Timestamps of now, not 1970: the window changelogs' time retention would let the broker
	// delete 1970 records at once.
	base := time.Now().Truncate(10 * time.Second).UnixMilli()
	mk := func(port int) *kstreams.KafkaStreams {
		sb := kstream.NewStreamsBuilder()
		g := kstream.Stream(sb, input, kstream.ConsumedWith(serde.String(), serde.String())).GroupByKey()
		g.Count(kstream.MaterializedAs[string, int64]("counts"))
		kstream.WindowedBy(g, kstream.TimeWindowsOfSizeAndGrace(10*time.Second, time.Hour)).
			Count(kstream.MaterializedAs[string, int64]("win"))
		kstream.WindowedBySession(g, kstream.SessionWindowsOfInactivityGapAndGrace(5*time.Second, time.Hour)).
			Count(kstream.MaterializedAs[string, int64]("sessions"))
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
		return app
	}
	apps := []*kstreams.KafkaStreams{mk(7101), mk(7102)}
	deadline := time.Now().Add(2 * time.Minute)
	for activeCount(apps[0]) != 2 || activeCount(apps[1]) != 2 || apps[0].State() != kstreams.StateRunning || apps[1].State() != kstreams.StateRunning {
		if time.Now().After(deadline) {
			t.Fatalf("the instances do not run two tasks each within 2 minutes (%d and %d)", activeCount(apps[0]), activeCount(apps[1]))
		}
		time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
	}
	var keys []string
	for i := range 8 {
		keys = append(keys, fmt.Sprintf("user-%d", i))
	}
	for _, ts := range []int64{base + 1000, base + 2000} {
		for _, k := range keys {
			produceAt(t, b, input, k, "e", ts)
		}
	}
	// The last offset of each input partition: what a fully processed task's position holds.
	client, err := sarama.NewClient(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	last := map[int32]int64{}
	for p := range int32(4) {
		end, err := client.GetOffset(input, p, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		last[p] = end - 1
	}
	// Wait until every task has processed its partition (a bound at its last offset is met).
	bound := kstreams.PositionBoundAt(kstreams.Position{input: last})
	deadline = time.Now().Add(time.Minute)
	for {
		met := 0
		for _, app := range apps {
			res, err := kstreams.StateQuery(app, kstreams.StateQueryRequest[*int64]{Store: "counts",
				Query: kstreams.KeyQuery[string, int64]{Key: keys[0]}, Bound: bound})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.PartitionResults {
				if r.IsSuccess() {
					met++
				}
			}
		}
		if met == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of 4 partitions processed their input within 1 min", met)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}

	allCounts := map[string]int64{}
	allWindows := map[string]int64{}
	for i, app := range apps {
		local := map[int32]bool{}
		for _, th := range app.MetadataForLocalThreads() {
			for _, tk := range th.ActiveTasks {
				local[int32(tk.TaskID.Partition)] = true
			}
		}
		// KeyQuery over every partition: the local ones answer (the key's own partition with
		// its count, the other with nil) at their position; the others are NOT_PRESENT.
		for _, k := range keys {
			res, err := kstreams.StateQuery(app, kstreams.StateQueryRequest[*int64]{Store: "counts",
				Query: kstreams.KeyQuery[string, int64]{Key: k}, Partitions: []int32{0, 1, 2, 3}, RequireActive: true})
			if err != nil {
				t.Fatal(err)
			}
			for p := range int32(4) {
				r := res.PartitionResults[p]
				if !local[p] {
					if r.Failure != kstreams.FailureNotPresent {
						t.Fatalf("instance %d partition %d (not local) answered %+v", i, p, r)
					}
					continue
				}
				if !r.IsSuccess() {
					t.Fatalf("instance %d partition %d failed: %s %s", i, p, r.Failure, r.FailureMessage)
				}
				if off, ok := r.Position.Offset(input, p); !ok || off != last[p] {
					t.Fatalf("instance %d partition %d position %v, want %s-%d at %d", i, p, r.Position, input, p, last[p])
				}
				if r.Result != nil {
					if *r.Result != 2 {
						t.Fatalf("instance %d key %s count %d, want 2", i, k, *r.Result)
					}
					allCounts[k] += *r.Result
				}
			}
		}
		// RangeQuery without bounds, every local partition.
		rres, err := kstreams.StateQuery(app, kstreams.StateQueryRequest[store.KeyValueIterator[string, int64]]{Store: "counts",
			Query: kstreams.RangeQuery[string, int64]{}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rres.PartitionResults) != 2 {
			t.Fatalf("instance %d: range answered by %d partitions, want its 2", i, len(rres.PartitionResults))
		}
		n := 0
		for p, r := range rres.PartitionResults {
			if !r.IsSuccess() {
				t.Fatalf("instance %d partition %d range failed: %s", i, p, r.FailureMessage)
			}
			kvs, err := store.Collect(r.Result)
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range kvs {
				if kv.Value != 2 {
					t.Fatalf("range: %s=%d, want 2", kv.Key, kv.Value)
				}
				n++
			}
		}
		// WindowRangeQuery by time: every local key's window at base.
		wres, err := kstreams.StateQuery(app, kstreams.StateQueryRequest[store.KeyValueIterator[serde.Windowed[string], int64]]{Store: "win",
			Query: kstreams.WindowRangeQuery[string, int64]{TimeFrom: base, TimeTo: base}})
		if err != nil {
			t.Fatal(err)
		}
		wn := 0
		for _, r := range wres.PartitionResults {
			kvs, err := store.Collect(r.Result)
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range kvs {
				if kv.Key.Window.Start != base || kv.Value != 2 {
					t.Fatalf("window %v=%d, want start %d count 2", kv.Key, kv.Value, base)
				}
				allWindows[kv.Key.Key] += kv.Value
				wn++
			}
		}
		if wn != n {
			t.Fatalf("instance %d: %d windows for %d keys", i, wn, n)
		}
	}
	for _, k := range keys {
		if allCounts[k] != 2 || allWindows[k] != 2 {
			t.Fatalf("key %s: count %d, window count %d over both instances, want 2 and 2", k, allCounts[k], allWindows[k])
		}
	}

	// One-sided, ranged and ordered RangeQuery (Java: RangeQuery.withLowerBound, withUpperBound,
	// withRange, withNoBounds, withAscendingKeys, withDescendingKeys): the bounds are
	// inclusive and the order is the serialized keys' (for UTF-8 strings the strings' order),
	// per partition. Over both instances the keys >= user-5 are user-5..user-7, those <=
	// user-2 are user-0..user-2, and [user-2, user-4] holds user-2..user-4; each counts 2.
	bounds := func(q kstreams.RangeQuery[string, int64]) string {
		b := func(k *string) string {
			if k == nil {
				return "open"
			}
			return *k
		}
		return fmt.Sprintf("[%s, %s] %s", b(q.Lower), b(q.Upper), q.Order)
	}
	rangeKeys := func(q kstreams.RangeQuery[string, int64]) []string {
		var got []string
		for i, app := range apps {
			res, err := kstreams.StateQuery(app, kstreams.StateQueryRequest[store.KeyValueIterator[string, int64]]{Store: "counts", Query: q})
			if err != nil {
				t.Fatal(err)
			}
			for p, r := range res.PartitionResults {
				if !r.IsSuccess() {
					t.Fatalf("instance %d partition %d range %s failed: %s %s", i, p, bounds(q), r.Failure, r.FailureMessage)
				}
				kvs, err := store.Collect(r.Result)
				if err != nil {
					t.Fatal(err)
				}
				for j, kv := range kvs {
					if kv.Value != 2 {
						t.Fatalf("range %s: %s=%d, want 2", bounds(q), kv.Key, kv.Value)
					}
					if j > 0 && (q.Order == kstreams.ResultOrderDescending && kvs[j-1].Key <= kv.Key ||
						q.Order == kstreams.ResultOrderAscending && kvs[j-1].Key >= kv.Key) {
						t.Fatalf("range %s partition %d: %s after %s, not in %s order", bounds(q), p, kv.Key, kvs[j-1].Key, q.Order)
					}
					got = append(got, kv.Key)
				}
			}
		}
		sort.Strings(got)
		return got
	}
	for _, c := range []struct {
		q    kstreams.RangeQuery[string, int64]
		want []string
	}{
		{kstreams.RangeQueryWithLowerBound[string, int64]("user-5"), keys[5:]},
		{kstreams.RangeQueryWithLowerBound[string, int64]("user-5").WithDescendingKeys(), keys[5:]},
		{kstreams.RangeQueryWithUpperBound[string, int64]("user-2").WithAscendingKeys(), keys[:3]},
		{kstreams.RangeQueryWithRange[string, int64]("user-2", "user-4").WithDescendingKeys(), keys[2:5]},
		{kstreams.RangeQueryWithNoBounds[string, int64]().WithDescendingKeys(), keys},
		{kstreams.RangeQueryWithRange[string, int64]("user-4", "user-2"), nil}, // lower above upper: none
	} {
		if got := rangeKeys(c.q); !slices.Equal(got, c.want) {
			t.Fatalf("range %s: keys %v, want %v", bounds(c.q), got, c.want)
		}
	}
	// TimestampedRangeQuery (KIP-992) gives each count with its timestamp: Java's aggregation
	// keeps the largest timestamp of the records it aggregated, base+2000.
	var tsKeys []string
	for _, app := range apps {
		res, err := kstreams.StateQuery(app, kstreams.StateQueryRequest[store.KeyValueIterator[string, *store.ValueAndTimestamp[int64]]]{Store: "counts",
			Query: kstreams.TimestampedRangeQueryWithLowerBound[string, int64]("user-6").WithDescendingKeys()})
		if err != nil {
			t.Fatal(err)
		}
		for p, r := range res.PartitionResults {
			kvs, err := store.Collect(r.Result)
			if err != nil || !r.IsSuccess() {
				t.Fatalf("partition %d timestamped range: %v %s", p, err, r.FailureMessage)
			}
			for _, kv := range kvs {
				if kv.Value == nil || *kv.Value != (store.ValueAndTimestamp[int64]{Value: 2, Timestamp: base + 2000}) {
					t.Fatalf("timestamped range: %s=%+v, want 2 at %d", kv.Key, kv.Value, base+2000)
				}
				tsKeys = append(tsKeys, kv.Key)
			}
		}
	}
	if sort.Strings(tsKeys); !slices.Equal(tsKeys, keys[6:]) {
		t.Fatalf("timestamped range keys %v, want %v", tsKeys, keys[6:])
	}

	// One key on its owner: its window by key, its session, and the bounds.
	k := keys[3]
	md, err := apps[0].QueryMetadataForKey("counts", []byte(k))
	if err != nil {
		t.Fatal(err)
	}
	owner := apps[0]
	if md.ActiveHost.Port == 7102 {
		owner = apps[1]
	}
	p := int32(md.Partition)
	wk, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[store.KeyValueIterator[int64, int64]]{Store: "win",
		Query: kstreams.WindowKeyQuery[string, int64]{Key: k, TimeFrom: base - 10000, TimeTo: base + 10000}, Partitions: []int32{p}})
	if err != nil {
		t.Fatal(err)
	}
	only, err := wk.OnlyPartitionResult()
	if err != nil {
		t.Fatal(err)
	}
	kvs, err := store.Collect(only.Result)
	if err != nil || len(kvs) != 1 || kvs[0].Key != base || kvs[0].Value != 2 {
		t.Fatalf("window key query of %s: %v %v, want one window at %d counting 2", k, kvs, err, base)
	}
	sres, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[store.KeyValueIterator[serde.Windowed[string], int64]]{Store: "sessions",
		Query: kstreams.WindowRangeQuery[string, int64]{Key: k, HasKey: true}, Partitions: []int32{p}})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := store.Collect(sres.PartitionResults[p].Result)
	if err != nil || len(sessions) != 1 || sessions[0].Key.Window != (serde.Window{Start: base + 1000, End: base + 2000}) || sessions[0].Value != 2 {
		t.Fatalf("sessions of %s: %v %v, want [%d,%d]=2", k, sessions, err, base+1000, base+2000)
	}
	at := func(off int64) kstreams.PositionBound {
		return kstreams.PositionBoundAt(kstreams.Position{input: {p: off}})
	}
	for _, c := range []struct {
		bound kstreams.PositionBound
		want  kstreams.FailureReason
	}{
		{kstreams.UnboundedPosition(), ""},
		{at(last[p]), ""},
		{at(last[p] + 5), kstreams.FailureNotUpToBound},
		{kstreams.PositionBoundAt(kstreams.Position{"other-topic": {p: 0}}), kstreams.FailureNotUpToBound},
	} {
		res, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*int64]{Store: "counts",
			Query: kstreams.KeyQuery[string, int64]{Key: k}, Partitions: []int32{p}, Bound: c.bound})
		if err != nil {
			t.Fatal(err)
		}
		if r := res.PartitionResults[p]; r.Failure != c.want || (c.want == "" && (r.Result == nil || *r.Result != 2)) {
			t.Fatalf("bound %+v: %+v, want failure %q", c.bound, r, c.want)
		}
	}
	// TimestampedKeyQuery (KIP-992): the count and its timestamp; KeyQuery of the same store
	// gave the plain count above.
	tk, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*store.ValueAndTimestamp[int64]]{Store: "counts",
		Query: kstreams.TimestampedKeyQuery[string, int64]{Key: k}, Partitions: []int32{p}})
	if err != nil {
		t.Fatal(err)
	}
	if r := tk.PartitionResults[p]; !r.IsSuccess() || r.Result == nil || *r.Result != (store.ValueAndTimestamp[int64]{Value: 2, Timestamp: base + 2000}) {
		t.Fatalf("timestamped key query of %s: %+v, want 2 at %d", k, r, base+2000)
	}
	// Queries a store does not know answer UNKNOWN_QUERY_TYPE, with the position, as Java's
	// stores: a TimestampedKeyQuery of a window store, a VersionedKeyQuery of a key-value
	// store, a KeyQuery of a session store, a WindowRangeQuery by key of a window store.
	unknown := func(what string, r kstreams.FailureReason, msg string, pos kstreams.Position) {
		t.Helper()
		if r != kstreams.FailureUnknownQueryType {
			t.Fatalf("%s: failure %q (%s), want UNKNOWN_QUERY_TYPE", what, r, msg)
		}
		if off, ok := pos.Offset(input, p); !ok || off != last[p] {
			t.Fatalf("%s: position %v, want %s-%d at %d", what, pos, input, p, last[p])
		}
	}
	if res, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*store.ValueAndTimestamp[int64]]{Store: "win",
		Query: kstreams.TimestampedKeyQuery[string, int64]{Key: k}, Partitions: []int32{p}}); err != nil {
		t.Fatal(err)
	} else {
		r := res.PartitionResults[p]
		unknown("timestamped key query of a window store", r.Failure, r.FailureMessage, r.Position)
	}
	if res, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*store.VersionedRecord[int64]]{Store: "counts",
		Query: kstreams.VersionedKeyQueryWithKey[string, int64](k), Partitions: []int32{p}}); err != nil {
		t.Fatal(err)
	} else {
		r := res.PartitionResults[p]
		unknown("versioned key query of a key-value store", r.Failure, r.FailureMessage, r.Position)
	}
	if res, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*int64]{Store: "sessions",
		Query: kstreams.KeyQuery[string, int64]{Key: k}, Partitions: []int32{p}}); err != nil {
		t.Fatal(err)
	} else {
		r := res.PartitionResults[p]
		unknown("key query of a session store", r.Failure, r.FailureMessage, r.Position)
	}
	if res, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[store.KeyValueIterator[serde.Windowed[string], int64]]{Store: "win",
		Query: kstreams.WindowRangeQuery[string, int64]{Key: k, HasKey: true}, Partitions: []int32{p}}); err != nil {
		t.Fatal(err)
	} else {
		r := res.PartitionResults[p]
		unknown("window range query by key of a window store", r.Failure, r.FailureMessage, r.Position)
	}
	// The wrong types, an unknown store.
	bad, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*string]{Store: "counts",
		Query: kstreams.KeyQuery[string, string]{Key: k}, Partitions: []int32{p}})
	if err != nil {
		t.Fatal(err)
	}
	if r := bad.PartitionResults[p]; r.Failure != kstreams.FailureStoreException ||
		r.FailureMessage != `state store "counts" is a timestamped key-value store of string keys and int64 values, not a key-value store of string keys and string values; ask for KeyValueStore[string, int64] or TimestampedKeyValueStore[string, int64]` {
		t.Fatalf("wrong-typed query: %+v", r)
	}
	if _, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*int64]{Store: "nope", Query: kstreams.KeyQuery[string, int64]{Key: k}}); !errors.Is(err, processor.ErrUnknownStore) {
		t.Fatalf("unknown store: %v", err)
	}
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range allCounts {
			if !yield(k) {
				return
			}
		}
	})
	sort.Strings(keys)
	if !slices.Equal(got, keys) {
		t.Fatalf("keys %v, want %v", got, keys)
	}
}
