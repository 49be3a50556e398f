package testdriver

import (
	"errors"
	"testing"
	"time"

	propnames "github.com/kstreams-go/kstreams/internal/props"

	"go.uber.org/mock/gomock"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
	"github.com/kstreams-go/kstreams/store/storemock"
	"github.com/kstreams-go/kstreams/testdriver/mocks"
)

// Unit test of the word-count processor alone with the hand-written MockProcessorContext.
func TestMockProcessorContextWordCount(t *testing.T) {
	ctx, err := NewMockProcessorContext[string, string](nil)
	must(t, err)
	st, err := store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Integer()).
		WithLoggingDisabled().Build()
	must(t, err)
	must(t, st.Init(ctx.StateStoreContext(), st))

	p := &wordCountProcessor{}
	must(t, p.Init(ctx))
	puncts := ctx.ScheduledPunctuators()
	if len(puncts) != 1 || puncts[0].Interval != time.Second || puncts[0].Type != processor.StreamTime {
		t.Fatalf("punctuators %+v", puncts)
	}
	must(t, p.Process(processor.NewRecord("", "Hello hello world", 10)))
	if len(ctx.Forwarded()) != 0 {
		t.Fatal("process forwarded records")
	}
	must(t, puncts[0].Punctuate(1000))
	fw := ctx.Forwarded()
	same := func(r processor.Record[string, string], k, v string, ts int64) bool {
		return r.Key == k && r.Value == v && r.Timestamp == ts && r.Headers.Len() == 0
	}
	if len(fw) != 2 || !same(fw[0].Record, "hello", "2", 1000) || !same(fw[1].Record, "world", "1", 1000) || fw[0].ChildName != "" {
		t.Fatalf("forwarded %v", fw)
	}
	ctx.ResetForwards()
	puncts[0].Cancel()
	must(t, puncts[0].Punctuate(2000))
	if len(ctx.Forwarded()) != 0 || !puncts[0].Cancelled() {
		t.Fatal("cancelled punctuator ran")
	}
}

// routeProcessor uses metadata, times, named children, commit and a store.
type routeProcessor struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *routeProcessor) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	return nil
}
func (p *routeProcessor) Process(r processor.Record[string, string]) error {
	md, ok := p.ctx.RecordMetadata()
	if !ok {
		return errors.New("no metadata")
	}
	if r.Value == "commit" {
		p.ctx.Commit()
	}
	return p.ctx.ForwardTo(r.WithValue(md.Topic+"@"+r.Value), "child-"+r.Key)
}
func (p *routeProcessor) Close() error { return nil }

func TestMockProcessorContextMetadataAndChildren(t *testing.T) {
	ctx, err := NewMockProcessorContext[string, string](map[string]string{propnames.ApplicationIDConfig: "my-app"},
		WithMockTaskID(processor.TaskID{Subtopology: 1, Partition: 2}))
	must(t, err)
	if ctx.ApplicationID() != "my-app" || ctx.TaskID().String() != "1_2" || ctx.CurrentStreamTimeMs() != -1 {
		t.Fatalf("defaults: %s %s %d", ctx.ApplicationID(), ctx.TaskID(), ctx.CurrentStreamTimeMs())
	}
	p := &routeProcessor{}
	must(t, p.Init(ctx))
	if err := p.Process(processor.NewRecord("a", "x", 1)); err == nil {
		t.Fatal("no metadata accepted")
	}
	ctx.SetRecordMetadata("topic", 0, 5)
	ctx.SetCurrentStreamTimeMs(99)
	must(t, p.Process(processor.NewRecord("a", "x", 1)))
	must(t, p.Process(processor.NewRecord("b", "commit", 2)))
	if got := ctx.ForwardedTo("child-a"); len(got) != 1 || got[0].Record.Value != "topic@x" || got[0].ChildName != "child-a" {
		t.Fatalf("forwarded to a: %v", got)
	}
	if !ctx.Committed() || ctx.CurrentStreamTimeMs() != 99 {
		t.Fatal("commit flag / stream time")
	}
	ctx.ResetCommit()
	if ctx.Committed() {
		t.Fatal("reset commit")
	}
	if _, err := ctx.StateStore("none"); !errors.Is(err, processor.ErrUnknownStore) {
		t.Fatalf("unknown store: %v", err)
	}
}

// The same word-count processor with strict gomock expectations: a generated mock context and a
// generated mock store.
func TestGomockWordCount(t *testing.T) {
	ctrl := gomock.NewController(t)
	ctx := mocks.NewMockProcessorContext[string, string](ctrl)
	kv := storemock.NewMockKeyValueStore[string, int32](ctrl)

	var punct processor.Punctuator
	ctx.EXPECT().Schedule(time.Second, processor.StreamTime, gomock.Any()).
		DoAndReturn(func(_ time.Duration, _ processor.PunctuationType, p processor.Punctuator) (processor.Cancellable, error) {
			punct = p
			return mocks.NewMockCancellable(ctrl), nil
		})
	ctx.EXPECT().StateStore("Counts").Return(kv, nil)

	p := &wordCountProcessor{}
	must(t, p.Init(ctx))

	gomock.InOrder(
		kv.EXPECT().Get("kafka").Return(int32(0), false, nil),
		kv.EXPECT().Put("kafka", int32(1)).Return(nil),
		kv.EXPECT().Get("streams").Return(int32(4), true, nil),
		kv.EXPECT().Put("streams", int32(5)).Return(nil),
	)
	must(t, p.Process(processor.NewRecord("", "Kafka STREAMS", 3)))

	kv.EXPECT().All().Return(store.SliceIterator([]store.KeyValue[string, int32]{store.Pair("kafka", int32(1)), store.Pair("streams", int32(5))}))
	gomock.InOrder(
		ctx.EXPECT().Forward(processor.NewRecord("kafka", "1", 7000)).Return(nil),
		ctx.EXPECT().Forward(processor.NewRecord("streams", "5", 7000)).Return(nil),
	)
	must(t, punct(7000))

	// A store error surfaces from Process.
	boom := errors.New("disk on fire")
	kv.EXPECT().Get("x").Return(int32(0), false, boom)
	if err := p.Process(processor.NewRecord("", "x", 4)); !errors.Is(err, boom) {
		t.Fatalf("store error: %v", err)
	}
}

// A store with logging enabled can be used with the mock context: nothing is logged (Java 4.4's
// MockProcessorContext.getStateStoreContext().logChange does nothing either).
func TestMockProcessorContextLoggedStore(t *testing.T) {
	ctx, err := NewMockProcessorContext[string, string](nil)
	must(t, err)
	st, err := store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("logged"), serde.String(), serde.Long()).Build()
	must(t, err)
	must(t, st.Init(ctx.StateStoreContext(), st))
	kv, err := processor.GetStateStore[store.KeyValueStore[string, int64]](ctx, "logged")
	must(t, err)
	must(t, kv.Put("a", 1))
	if v, ok, _ := kv.Get("a"); !ok || v != 1 {
		t.Fatalf("get = %v %v", v, ok)
	}
}
