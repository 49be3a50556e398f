package testdriver

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf16"

	propnames "github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// Ports of the Processor API reference topologies of conformance/README.md (papi-multi,
// papi-global, papi-sinks). Processors that must see Java nulls are written against
// Processor[any, any, any, any] (nil is null); the others are typed.

var stringDefaults = map[string]string{
	propnames.DefaultKeySerdeConfig:   "org.apache.kafka.common.serialization.Serdes$StringSerde",
	propnames.DefaultValueSerdeConfig: "org.apache.kafka.common.serialization.Serdes$StringSerde",
}

func withProps(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// javaString renders a value as Java's string concatenation does ("null" for null).
func javaString(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(v)
}

// --- papi-multi ---

type mergeProc struct {
	ctx    processor.ProcessorContext[any, any]
	shared store.KeyValueStore[string, int64]
}

func (p *mergeProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	p.shared, err = processor.GetStateStore[store.KeyValueStore[string, int64]](ctx, "Shared")
	return err
}

func (p *mergeProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil {
		return nil
	}
	key := r.Key.(string)
	if r.Value == nil {
		if _, _, err := p.shared.Delete(key); err != nil {
			return err
		}
		return p.ctx.Forward(r.WithValue[any](nil))
	}
	var delta int64
	switch v := r.Value.(type) {
	case int64:
		delta = v
	case string:
		delta = int64(len(utf16.Encode([]rune(v)))) // Java String.length(): UTF-16 units
	default:
		return fmt.Errorf("unexpected value type %T", r.Value)
	}
	old, _, err := p.shared.Get(key)
	if err != nil {
		return err
	}
	total := old + delta
	if err := p.shared.Put(key, total); err != nil {
		return err
	}
	return p.ctx.Forward(r.WithValue[any](total))
}

func (p *mergeProc) Close() error { return nil }

type auditProc struct {
	ctx    processor.ProcessorContext[any, any]
	shared store.KeyValueStore[string, int64]
}

func (p *auditProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	if p.shared, err = processor.GetStateStore[store.KeyValueStore[string, int64]](ctx, "Shared"); err != nil {
		return err
	}
	_, err = ctx.Schedule(10*time.Second, processor.WallClockTime, func(ts int64) error {
		kvs, err := store.Collect(p.shared.All())
		if err != nil {
			return err
		}
		return ctx.Forward(processor.Record[any, any]{Key: "entries", Value: strconv.Itoa(len(kvs)), Timestamp: ts})
	})
	return err
}

func (p *auditProc) Process(r processor.Record[any, any]) error {
	var total any
	if r.Key != nil {
		v, ok, err := p.shared.Get(r.Key.(string))
		if err != nil {
			return err
		}
		if ok {
			total = v
		}
	}
	return p.ctx.Forward(r.WithValue[any](javaString(r.Value) + "=" + javaString(total)))
}

func (p *auditProc) Close() error { return nil }

func untypedSupplier(f func() processor.Processor[any, any, any, any]) processor.ProcessorSupplier[any, any, any, any] {
	return processor.ProcessorSupplierFunc[any, any, any, any](f)
}

func papiMultiTopology(t *testing.T) *processor.Topology {
	topo := processor.NewTopology()
	str := serde.String()
	must(t, topo.AddSource("SourceA", []string{"papi-multi-input-a"}, processor.WithKeyDeserializer[string](str), processor.WithValueDeserializer[string](str)))
	must(t, topo.AddSource("SourceB", []string{"papi-multi-input-b"}, processor.WithKeyDeserializer[string](str), processor.WithValueDeserializer[int64](serde.Long())))
	must(t, topo.AddSource("SourceC", []string{"papi-multi-input-c"}, processor.WithKeyDeserializer[string](str), processor.WithValueDeserializer[string](str)))
	must(t, topo.AddProcessor("Merge", untypedSupplier(func() processor.Processor[any, any, any, any] { return &mergeProc{} }), "SourceA", "SourceB"))
	must(t, topo.AddProcessor("Audit", untypedSupplier(func() processor.Processor[any, any, any, any] { return &auditProc{} }), "SourceC"))
	must(t, topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Shared"), serde.String(), serde.Long()), "Merge"))
	must(t, topo.ConnectProcessorAndStateStores("Audit", "Shared"))
	must(t, topo.AddSink("TotalsSink", "papi-multi-totals", []string{"Merge"}, processor.WithKeySerializer[string](str), processor.WithValueSerializer[int64](serde.Long())))
	must(t, topo.AddSink("AuditSink", "papi-multi-audit", []string{"Audit"}, processor.WithKeySerializer[string](str), processor.WithValueSerializer[string](str)))
	return topo
}

func TestConformancePapiMulti(t *testing.T) { runConformance(t, papiMultiCase()) }

func papiMultiCase() conformanceCase {
	return conformanceCase{
		name:  "papi-multi",
		props: withProps(stringDefaults, propnames.ApplicationIDConfig, "papi-multi", "statestore.cache.max.bytes", "0"),
		build: papiMultiTopology,
		types: typesOf(map[string][2]conformance.Kind{
			"papi-multi-Shared-changelog": {conformance.KindString, conformance.KindLong},
			"papi-multi-totals":           {conformance.KindString, conformance.KindLong},
			"papi-multi-audit":            {conformance.KindString, conformance.KindString},
		}, nil),
	}
}

// --- papi-global ---

type ratesUpdater struct {
	rates store.KeyValueStore[string, float64]
}

func (p *ratesUpdater) Init(ctx processor.ProcessorContext[any, any]) error {
	var err error
	p.rates, err = processor.GetStateStore[store.KeyValueStore[string, float64]](ctx, "Rates")
	return err
}

func (p *ratesUpdater) Process(r processor.Record[any, any]) error {
	if r.Value == nil {
		_, _, err := p.rates.Delete(r.Key.(string))
		return err
	}
	return p.rates.Put(r.Key.(string), r.Value.(float64))
}

func (p *ratesUpdater) Close() error { return nil }

type convertProc struct {
	ctx   processor.ProcessorContext[any, any]
	rates store.KeyValueStore[string, float64]
}

func (p *convertProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	p.rates, err = processor.GetStateStore[store.KeyValueStore[string, float64]](ctx, "Rates")
	return err
}

func (p *convertProc) Process(r processor.Record[any, any]) error {
	var converted any
	if r.Key != nil && r.Value != nil {
		rate, ok, err := p.rates.Get(r.Key.(string))
		if err != nil {
			return err
		}
		if ok {
			converted = r.Value.(float64) * rate
		}
	}
	return p.ctx.Forward(r.WithValue(converted))
}

func (p *convertProc) Close() error { return nil }

func papiGlobalTopology(t *testing.T) *processor.Topology {
	topo := processor.NewTopology()
	must(t, topo.AddGlobalStore(
		store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Rates"), serde.String(), serde.Double()).WithLoggingDisabled(),
		"RatesSource", serde.Untyped(serde.String()), serde.Untyped(serde.Double()), "papi-global-rates", "RatesUpdater",
		untypedSupplier(func() processor.Processor[any, any, any, any] { return &ratesUpdater{} })))
	must(t, topo.AddSourcePattern("OrdersSource", "papi-global-orders-.*",
		processor.WithKeyDeserializer[string](serde.String()), processor.WithValueDeserializer[float64](serde.Double())))
	must(t, topo.AddProcessor("Convert", untypedSupplier(func() processor.Processor[any, any, any, any] { return &convertProc{} }), "OrdersSource"))
	must(t, topo.AddSink("ConvertedSink", "papi-global-converted", []string{"Convert"},
		processor.WithKeySerializer[string](serde.String()), processor.WithValueSerializer[float64](serde.Double())))
	return topo
}

func TestConformancePapiGlobal(t *testing.T) { runConformance(t, papiGlobalCase()) }

func papiGlobalCase() conformanceCase {
	return conformanceCase{
		name:  "papi-global",
		props: withProps(stringDefaults, propnames.ApplicationIDConfig, "papi-global"),
		build: papiGlobalTopology,
		types: typesOf(map[string][2]conformance.Kind{
			"papi-global-converted": {conformance.KindString, conformance.KindDouble},
		}, nil),
	}
}

// --- papi-sinks ---

// keyTopicExtractor sends a record to "papi-sinks-key-" + key ("none" for a null key).
type keyTopicExtractor struct{}

func (keyTopicExtractor) Extract(key, _ any, _ processor.RecordContext) (string, error) {
	if key == nil {
		return "papi-sinks-key-none", nil
	}
	return "papi-sinks-key-" + key.(string), nil
}

// String is what describe prints (Java: toString()).
func (keyTopicExtractor) String() string { return "KeyTopicExtractor" }

type routerProc struct {
	ctx processor.ProcessorContext[any, any]
}

func (p *routerProc) Init(ctx processor.ProcessorContext[any, any]) error { p.ctx = ctx; return nil }
func (p *routerProc) Process(r processor.Record[any, any]) error {
	if r.Value == nil || strings.HasPrefix(r.Value.(string), "!") {
		return p.ctx.ForwardTo(r, "ErrorSink")
	}
	if err := p.ctx.ForwardTo(r, "Upper"); err != nil {
		return err
	}
	return p.ctx.ForwardTo(r, "KeySink")
}
func (p *routerProc) Close() error { return nil }

// javaUpperRoot is Java's toUpperCase(Locale.ROOT), including the special-casing expansions.
func javaUpperRoot(s string) string {
	special := map[rune]string{'ß': "SS", 'ﬀ': "FF", 'ﬁ': "FI", 'ﬂ': "FL", 'ﬃ': "FFI", 'ﬄ': "FFL", 'ﬅ': "ST", 'ﬆ': "ST", 'ŉ': "ʼN"}
	var b strings.Builder
	for _, r := range s {
		if x, ok := special[r]; ok {
			b.WriteString(x)
		} else {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// upperProc keeps the key as any: a typed string key would turn a null key into "" (the typed
// adapters map nil to the zero value), which Java does not do.
type upperProc struct {
	ctx processor.ProcessorContext[any, string]
}

func (p *upperProc) Init(ctx processor.ProcessorContext[any, string]) error { p.ctx = ctx; return nil }
func (p *upperProc) Process(r processor.Record[any, string]) error {
	h := r.Headers.Clone()
	h.Add("stage", []byte("upper"))
	return p.ctx.Forward(r.WithValue(javaUpperRoot(r.Value)).WithHeaders(h))
}
func (p *upperProc) Close() error { return nil }

func papiSinksTopology(t *testing.T) *processor.Topology {
	topo := processor.NewTopology()
	str := serde.String()
	must(t, topo.AddSource("Input", []string{"papi-sinks-input"}, processor.WithKeyDeserializer[string](str), processor.WithValueDeserializer[string](str)))
	must(t, topo.AddProcessor("Router", untypedSupplier(func() processor.Processor[any, any, any, any] { return &routerProc{} }), "Input"))
	must(t, topo.AddProcessor("Upper", processor.ProcessorSupplierFunc[any, string, any, string](
		func() processor.Processor[any, string, any, string] { return &upperProc{} }), "Router"))
	must(t, topo.AddSink("UpperSink", "papi-sinks-upper", []string{"Upper"}, processor.WithKeySerializer[string](str), processor.WithValueSerializer[string](str)))
	must(t, topo.AddDynamicSink[any, any]("KeySink", keyTopicExtractor{}, []string{"Router"}, processor.WithKeySerializer[string](str), processor.WithValueSerializer[string](str)))
	must(t, topo.AddSink("ErrorSink", "papi-sinks-errors", []string{"Router"}))
	return topo
}

func TestConformancePapiSinks(t *testing.T) { runConformance(t, papiSinksCase()) }

func papiSinksCase() conformanceCase {
	strs := [2]conformance.Kind{conformance.KindString, conformance.KindString}
	return conformanceCase{
		name:  "papi-sinks",
		props: withProps(stringDefaults, propnames.ApplicationIDConfig, "papi-sinks"),
		build: papiSinksTopology,
		types: typesOf(map[string][2]conformance.Kind{"papi-sinks-upper": strs, "papi-sinks-errors": strs},
			map[string][2]conformance.Kind{"papi-sinks-key-": strs}),
	}
}
