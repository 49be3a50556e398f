package store

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// headersContext is a cacheContext (no cache) that also logs with headers.
type headersContext struct{ cacheContext }

func (c *headersContext) LogChangeWithHeaders(store string, key, value []byte, ts int64, h serde.Headers) error {
	var hs []string
	for x := range h.All() {
		hs = append(hs, x.Key+"="+str(x.Value))
	}
	c.events = append(c.events, fmt.Sprintf("log %s=%s@%d %v", key, str(value), ts, hs))
	return nil
}

// With storeapi.LogChangelogHeaders the timestamped changelog records (raw value, stored timestamp;
// tombstones with the record's timestamp) carry the headers of the record being processed;
// without it they carry none even when the context could.
func TestTimestampedChangelogHeaders(t *testing.T) {
	for _, withHeaders := range []bool{true, false} {
		b := Stores.TimestampedKeyValueStoreBuilder(Stores.InMemoryKeyValueStore("s"), serde.String(), serde.String())
		if withHeaders && !storeapi.LogChangelogHeaders(b) {
			t.Fatal("LogChangelogHeaders refused a timestamped key-value builder")
		}
		st := b.BuildStore()
		ctx := &headersContext{cacheContext{fakeContext: fakeContext{appID: "app"}, rc: rcOf("in", 0, 7)}}
		if err := st.Init(ctx, st); err != nil {
			t.Fatal(err)
		}
		ctx.rc.Headers.Add("h", []byte("v"))
		ctx.rc.Headers.Add("n", nil)
		if err := st.Put("k", MakeValueAndTimestamp("x", 5)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.Delete("k"); err != nil {
			t.Fatal(err)
		}
		want := []string{"log k=x@5 [h=v n=null]", "log k=null@7 [h=v n=null]"}
		if !withHeaders {
			want = []string{"log k=x@5(off 0)", "log k=null@7(off 0)"}
		}
		if !slices.Equal(ctx.events, want) {
			t.Fatalf("withHeaders=%v: logged %q, want %q", withHeaders, ctx.events, want)
		}
	}
}

// LogChangelogHeaders accepts only builders of timestamped key-value stores.
func TestLogChangelogHeadersOtherBuilders(t *testing.T) {
	ws, err := Stores.InMemoryWindowStore("w", 10*time.Second, time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []processor.StoreBuilder{
		Stores.KeyValueStoreBuilder(Stores.InMemoryKeyValueStore("kv"), serde.String(), serde.String()),
		Stores.TimestampedWindowStoreBuilder(ws, serde.String(), serde.String()),
		nil,
	} {
		if storeapi.LogChangelogHeaders(b) {
			t.Errorf("LogChangelogHeaders(%T) = true, want false", b)
		}
	}
}
