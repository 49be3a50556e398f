package processor_test

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// wordCount is Kafka's WordCountProcessorDemo processor: it counts words in a key-value store
// and forwards every count once per second of stream time.
type wordCount struct {
	processor.ContextualProcessor[string, string]
	counts store.KeyValueStore[string, int32]
}

func (p *wordCount) Init(ctx processor.ProcessorContext[string, string]) error {
	if err := p.ContextualProcessor.Init(ctx); err != nil {
		return err
	}
	counts, err := processor.GetStateStore[store.KeyValueStore[string, int32]](ctx, "Counts")
	if err != nil {
		return err
	}
	p.counts = counts
	_, err = ctx.Schedule(time.Second, processor.StreamTime, func(ts int64) error {
		it := p.counts.All()
		defer it.Close()
		for it.Next() {
			if err := ctx.Forward(processor.NewRecord(it.Key(), strconv.Itoa(int(it.Value())), ts)); err != nil {
				return err
			}
		}
		return it.Err()
	})
	return err
}

func (p *wordCount) Process(r processor.Record[string, string]) error {
	for _, w := range strings.Fields(strings.ToLower(r.Value)) {
		n, _, err := p.counts.Get(w)
		if err != nil {
			return err
		}
		if err := p.counts.Put(w, n+1); err != nil {
			return err
		}
	}
	return nil
}

// The Processor API version of Kafka's WordCountProcessorDemo. The printed text is what Java's
// topology.describe() prints for the same topology (conformance/golden/wordcount-processor.describe.txt).
func ExampleTopology() {
	topo := processor.NewTopology()
	if err := topo.AddSource("Source", []string{"streams-plaintext-input"},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())); err != nil {
		panic(err)
	}
	if err := topo.AddProcessor("Process", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &wordCount{} }), "Source"); err != nil {
		panic(err)
	}
	counts := store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Integer())
	if err := topo.AddStateStore(counts, "Process"); err != nil {
		panic(err)
	}
	if err := topo.AddSink("Sink", "streams-wordcount-processor-output", []string{"Process"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.String())); err != nil {
		panic(err)
	}
	fmt.Print(topo.Describe())
	// Output:
	// Topologies:
	//    Sub-topology: 0
	//     Source: Source (topics: [streams-plaintext-input])
	//       --> Process
	//     Processor: Process (stores: [Counts])
	//       --> Sink
	//       <-- Source
	//     Sink: Sink (topic: streams-wordcount-processor-output)
	//       <-- Process
}
