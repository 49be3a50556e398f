package integration_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// IQv2 of a versioned table on two instances (four partitions):
// VersionedKeyQuery (KIP-960) and MultiVersionedKeyQuery (KIP-968) answered by the partition
// holding the key after out-of-order updates and a tombstone. The expected answers are Java's
// definitions of the queries over the versions the updates make:
//
//	item: v3@3000, v1@1000, v2@2000 (out of order), tombstone@4000, v6@6000 (ms after base)
//	versions: v1 [1000,2000), v2 [2000,3000), v3 [3000,4000), none [4000,6000), v6 [6000,end)
//
// VersionedKeyQuery: the latest version without asOf; as of t the version with the largest
// timestamp <= t, null in a tombstone's span or before the first version.
// MultiVersionedKeyQuery: the versions (tombstones are none) with timestamp <= toTime and
// validTo > fromTime, newest first by default (Java's store order) or as asked.
// A KeyQuery of a versioned store fails the call (Java: UnsupportedOperationException), a
// TimestampedKeyQuery of it answers UNKNOWN_QUERY_TYPE, fromTime after toTime fails the call
// (Java: IllegalArgumentException).
func TestIntegrationStateQueryIQv2Versioned(t *testing.T) {
	b := kafkatest.Real(t)
	input, appID := kafkatest.Name(t, "prices"), kafkatest.Name(t, "iqv2ver")
	createTopics(t, b, 4, input)
	base := time.Now().Truncate(10 * time.Second).UnixMilli()
	mk := func(port int) *kstreams.KafkaStreams {
		sup, err := store.Stores.PersistentVersionedKeyValueStore("versions", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		sb := kstream.NewStreamsBuilder()
		kstream.Table(sb, input, kstream.ConsumedWith(serde.String(), serde.String()), kstream.MaterializedAsVersioned[string, string](sup))
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
	apps := []*kstreams.KafkaStreams{mk(7111), mk(7112)}
	deadline := time.Now().Add(2 * time.Minute)
	for activeCount(apps[0]) != 2 || activeCount(apps[1]) != 2 || apps[0].State() != kstreams.StateRunning || apps[1].State() != kstreams.StateRunning {
		if time.Now().After(deadline) {
			t.Fatalf("the instances do not run two tasks each within 2 minutes (%d and %d)", activeCount(apps[0]), activeCount(apps[1]))
		}
		time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
	}
	cfg := kafkatest.ProducerConfig()
	cfg.Producer.Return.Successes = true
	prod, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	send := func(key, value string, tombstone bool, ts int64) {
		m := &sarama.ProducerMessage{Topic: input, Key: sarama.StringEncoder(key), Timestamp: time.UnixMilli(base + ts)}
		if !tombstone {
			m.Value = sarama.StringEncoder(value)
		}
		if _, _, err := prod.SendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	send("item", "v3", false, 3000)
	send("item", "v1", false, 1000)
	send("item", "v2", false, 2000)
	send("item", "", true, 4000)
	send("item", "v6", false, 6000)
	for i := range 6 { // other keys, so that every partition has input
		send(fmt.Sprintf("other-%d", i), "x", false, 500)
	}
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
		if end > 0 {
			last[p] = end - 1
		}
	}
	md, err := apps[0].QueryMetadataForKey("versions", []byte("item"))
	if err != nil {
		t.Fatal(err)
	}
	owner := apps[0]
	if md.ActiveHost.Port == 7112 {
		owner = apps[1]
	}
	p := md.Partition
	// Wait until the key's task has processed its partition (a bound at its last offset).
	bound := kstreams.PositionBoundAt(kstreams.Position{input: {p: last[p]}})
	latest := func() kstreams.QueryResult[*store.VersionedRecord[string]] {
		res, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*store.VersionedRecord[string]]{Store: "versions",
			Query: kstreams.VersionedKeyQueryWithKey[string, string]("item"), Partitions: []int32{p}, Bound: bound})
		if err != nil {
			t.Fatal(err)
		}
		return res.PartitionResults[p]
	}
	deadline = time.Now().Add(time.Minute)
	r := latest()
	for ; !r.IsSuccess(); r = latest() {
		if r.Failure != kstreams.FailureNotUpToBound {
			t.Fatalf("versioned key query: %s %s", r.Failure, r.FailureMessage)
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition %d did not process its input within 1 min: %s", p, r.FailureMessage)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
	if off, ok := r.Position.Offset(input, p); !ok || off != last[p] {
		t.Fatalf("position %v, want %s-%d at %d", r.Position, input, p, last[p])
	}
	if r.Result == nil || *r.Result != (store.VersionedRecord[string]{Value: "v6", Timestamp: base + 6000}) {
		t.Fatalf("latest version %+v, want v6 from %d", r.Result, base+6000)
	}
	vr := func(v string, from, to int64) store.VersionedRecord[string] {
		return store.VersionedRecord[string]{Value: v, Timestamp: base + from, ValidTo: base + to, HasValidTo: true}
	}
	// As of a time.
	for _, c := range []struct {
		asOf int64
		want *store.VersionedRecord[string]
	}{
		{999, nil},
		{1000, &store.VersionedRecord[string]{Value: "v1", Timestamp: base + 1000, ValidTo: base + 2000, HasValidTo: true}},
		{2500, &store.VersionedRecord[string]{Value: "v2", Timestamp: base + 2000, ValidTo: base + 3000, HasValidTo: true}},
		{3999, &store.VersionedRecord[string]{Value: "v3", Timestamp: base + 3000, ValidTo: base + 4000, HasValidTo: true}},
		{4500, nil}, // the tombstone's span
		{7000, &store.VersionedRecord[string]{Value: "v6", Timestamp: base + 6000}},
	} {
		res, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*store.VersionedRecord[string]]{Store: "versions",
			Query: kstreams.VersionedKeyQueryWithKey[string, string]("item").AsOf(base + c.asOf), Partitions: []int32{p}})
		if err != nil {
			t.Fatal(err)
		}
		got := res.PartitionResults[p]
		if !got.IsSuccess() || (got.Result == nil) != (c.want == nil) || (c.want != nil && *got.Result != *c.want) {
			t.Fatalf("as of base+%d: %+v (%+v), want %+v", c.asOf, got, got.Result, c.want)
		}
	}
	// Multi-version, every local partition of both instances: only the key's partition has
	// versions.
	multi := func(q kstreams.MultiVersionedKeyQuery[string, string]) []store.VersionedRecord[string] {
		var out []store.VersionedRecord[string]
		for i, app := range apps {
			res, err := kstreams.StateQuery(app, kstreams.StateQueryRequest[store.VersionedRecordIterator[string]]{Store: "versions", Query: q})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.PartitionResults) != 2 {
				t.Fatalf("instance %d: %d partitions answered, want its 2", i, len(res.PartitionResults))
			}
			for pp, r := range res.PartitionResults {
				if !r.IsSuccess() {
					t.Fatalf("instance %d partition %d: %s %s", i, pp, r.Failure, r.FailureMessage)
				}
				recs, err := store.CollectVersions(r.Result)
				if err != nil {
					t.Fatal(err)
				}
				if len(recs) > 0 && pp != p {
					t.Fatalf("partition %d (not the key's %d) has versions %+v", pp, p, recs)
				}
				out = append(out, recs...)
			}
		}
		return out
	}
	v6 := store.VersionedRecord[string]{Value: "v6", Timestamp: base + 6000}
	q := kstreams.MultiVersionedKeyQueryWithKey[string, string]("item")
	for _, c := range []struct {
		name string
		q    kstreams.MultiVersionedKeyQuery[string, string]
		want []store.VersionedRecord[string]
	}{
		{"all", q, []store.VersionedRecord[string]{v6, vr("v3", 3000, 4000), vr("v2", 2000, 3000), vr("v1", 1000, 2000)}},
		{"all ascending", q.WithAscendingTimestamps(), []store.VersionedRecord[string]{vr("v1", 1000, 2000), vr("v2", 2000, 3000), vr("v3", 3000, 4000), v6}},
		{"[1500, 3500] ascending", q.FromTime(base + 1500).ToTime(base + 3500).WithAscendingTimestamps(),
			[]store.VersionedRecord[string]{vr("v1", 1000, 2000), vr("v2", 2000, 3000), vr("v3", 3000, 4000)}},
		{"[1500, 3500] descending", q.FromTime(base + 1500).ToTime(base + 3500).WithDescendingTimestamps(),
			[]store.VersionedRecord[string]{vr("v3", 3000, 4000), vr("v2", 2000, 3000), vr("v1", 1000, 2000)}},
		{"[4000, 5000]: the tombstone's span", q.FromTime(base + 4000).ToTime(base + 5000), nil},
		{"from 5000", q.FromTime(base + 5000), []store.VersionedRecord[string]{v6}},
		{"to 2000", q.ToTime(base + 2000), []store.VersionedRecord[string]{vr("v2", 2000, 3000), vr("v1", 1000, 2000)}},
	} {
		got := multi(c.q)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Fatalf("multi-versioned %s: %+v, want %+v", c.name, got, c.want)
		}
	}
	// What a versioned store does not answer.
	if _, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*string]{Store: "versions",
		Query: kstreams.KeyQuery[string, string]{Key: "item"}, Partitions: []int32{p}}); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("key query of a versioned store: %v, want errors.ErrUnsupported", err)
	}
	if _, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[store.VersionedRecordIterator[string]]{Store: "versions",
		Query: q.FromTime(base + 5).ToTime(base + 4), Partitions: []int32{p}}); !errors.Is(err, kstreams.ErrInvalidQuery) {
		t.Fatalf("fromTime after toTime: %v, want ErrInvalidQuery", err)
	}
	res, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*store.ValueAndTimestamp[string]]{Store: "versions",
		Query: kstreams.TimestampedKeyQuery[string, string]{Key: "item"}, Partitions: []int32{p}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.PartitionResults[p]; r.Failure != kstreams.FailureUnknownQueryType ||
		r.FailureMessage != `store "versions" is a versioned key-value store, which does not answer a TimestampedKeyQuery[string,string]` {
		t.Fatalf("timestamped key query of a versioned store: %+v", r)
	}
	// The wrong value type is a store exception naming the fitting view.
	bad, err := kstreams.StateQuery(owner, kstreams.StateQueryRequest[*store.VersionedRecord[int64]]{Store: "versions",
		Query: kstreams.VersionedKeyQueryWithKey[string, int64]("item"), Partitions: []int32{p}})
	if err != nil {
		t.Fatal(err)
	}
	if r := bad.PartitionResults[p]; r.Failure != kstreams.FailureStoreException {
		t.Fatalf("wrong-typed versioned query: %+v", r)
	}
}
