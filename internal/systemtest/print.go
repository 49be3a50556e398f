package systemtest

import (
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/processor"
)

// Printer is where the processors of a system-test topology write the progress lines Kafka's
// system tests wait for ("processed 100 records from topic=data"); one Printer is shared by
// every task and thread, so lines never interleave.
type Printer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewPrinter returns a Printer writing to w (nil: io.Discard).
func NewPrinter(w io.Writer) *Printer {
	if w == nil {
		w = io.Discard
	}
	return &Printer{w: w}
}

// Printf writes one formatted line (a newline is added).
func (p *Printer) Printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// printProcessor counts what it sees and reports it: Java's SmokeTestUtil.printProcessorSupplier.
type printProcessor[K, V any] struct {
	topic, name string
	out         *Printer
	total       *atomic.Int64

	ctx               processor.ProcessorContext[struct{}, struct{}]
	processed         int64
	smallest, largest int64
}

// printSupplier returns the supplier of a processor that counts the records of topic, prints
// "processed N records from topic=T" every 100 records (after a "name: time" line), its task
// when it starts and its totals when it closes, and adds its count to total when it closes
// (total may be nil). It forwards nothing. Java: SmokeTestUtil.printProcessorSupplier(topic,
// name, totalRecordsProcessed).
func printSupplier[K, V any](topic, name string, out *Printer, total *atomic.Int64) processor.ProcessorSupplier[K, V, struct{}, struct{}] {
	return processor.ProcessorSupplierFunc[K, V, struct{}, struct{}](func() processor.Processor[K, V, struct{}, struct{}] {
		return &printProcessor[K, V]{topic: topic, name: name, out: out, total: total}
	})
}

func (p *printProcessor[K, V]) Init(ctx processor.ProcessorContext[struct{}, struct{}]) error {
	p.ctx = ctx
	p.out.Printf("[DEV] initializing processor: topic=%s taskId=%s", p.topic, ctx.TaskID())
	p.processed, p.smallest, p.largest = 0, math.MaxInt64, math.MinInt64
	return nil
}

func (p *printProcessor[K, V]) Process(processor.Record[K, V]) error {
	p.processed++
	if p.processed%100 == 0 {
		p.out.Printf("%s: %s", p.name, time.Now().UTC().Format(time.RFC3339Nano))
		p.out.Printf("processed %d records from topic=%s", p.processed, p.topic)
	}
	if md, ok := p.ctx.RecordMetadata(); ok {
		p.smallest = min(p.smallest, md.Offset)
		p.largest = max(p.largest, md.Offset)
	}
	return nil
}

func (p *printProcessor[K, V]) Close() error {
	p.out.Printf("Close processor for task %s", p.ctx.TaskID())
	p.out.Printf("processed %d records", p.processed)
	var span int64
	if p.largest >= p.smallest {
		span = 1 + p.largest - p.smallest
	}
	p.out.Printf("offset %d to %d -> processed %d", p.smallest, p.largest, span)
	if p.total != nil {
		p.total.Add(p.processed)
	}
	return nil
}
