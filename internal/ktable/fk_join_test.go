package ktable_test

import (
	"testing"

	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
	"github.com/kstreams-go/kstreams/testdriver"
)

// rowGetter is a primary table with one row.
type rowGetter struct {
	key, value any
	ts         int64
}

func (g rowGetter) Init(processor.ProcessingContext) error { return nil }
func (g rowGetter) Close()                                 {}
func (g rowGetter) Get(key any) (*ktable.ValueAndTimestamp, error) {
	if key == g.key {
		return store.MakeValueAndTimestamp(g.value, g.ts), nil
	}
	return nil, nil
}

type getterSupplier struct{ g rowGetter }

func (s getterSupplier) Get() ktable.ValueGetter { return s.g }
func (s getterSupplier) StoreNames() []string    { return nil }

// A response whose hash is not the hash of the primary row's current value is stale (the row
// changed after the subscription was sent, e.g. while the response crossed partitions) and is
// dropped; a matching one is joined (Java: ResponseJoinProcessorSupplier's hash check).
func TestResponseJoinDropsStaleResponses(t *testing.T) {
	s := serde.Untyped(serde.String())
	sd := ktable.NewFKSerdes("t", s, s, s, s)
	joiner := func(_, v, o any) (any, error) { return v.(string) + "|" + o.(string), nil }
	sup := ktable.NewResponseJoin(getterSupplier{rowGetter{key: "a", value: "x:2", ts: 5}}, sd, joiner, false)
	ctx, err := testdriver.NewMockProcessorContext[any, any](nil)
	if err != nil {
		t.Fatal(err)
	}
	p := sup.Get()
	if err := p.Init(ctx); err != nil {
		t.Fatal(err)
	}
	old, cur := ktable.Murmur3Hash128([]byte("x:1")), ktable.Murmur3Hash128([]byte("x:2"))
	for _, h := range []*ktable.ValueHash{&old, nil, &cur} {
		if err := p.Process(processor.Record[any, any]{Key: "a", Value: &ktable.SubscriptionResponseWrapper{Hash: h, ForeignValue: "X"}, Timestamp: 7}); err != nil {
			t.Fatal(err)
		}
	}
	got := ctx.Forwarded()
	if len(got) != 1 || got[0].Record.Value != "x:2|X" || got[0].Record.Timestamp != 7 {
		t.Fatalf("forwarded %v, want only the response with the current hash joined", got)
	}
}
