package testdriver

import (
	"fmt"
	"testing"

	"github.com/kstreams-go/kstreams/serde"
)

// BenchmarkWordCountProcessorPipe pipes lines through WordCountProcessorDemo (store writes,
// changelog capture, a punctuation every 1 s of stream time) and drains the output topics.
func BenchmarkWordCountProcessorPipe(b *testing.B) {
	t := &testing.T{}
	d, err := New(wordCountProcessorTopology(t), wordCountProcessorCase().props, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	in := CreateInputTopic(d, "streams-plaintext-input", serde.String(), serde.String())
	out := CreateOutputTopic(d, "streams-wordcount-processor-output", serde.String(), serde.String())
	cl := CreateOutputTopic(d, "streams-wordcount-processor-Counts-changelog", serde.ByteArray(), serde.ByteArray())
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		if err := in.PipeValueAt(fmt.Sprintf("the quick brown fox %d jumps over the lazy dog %d", i%100, i%7), i*10); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 0 {
			_, _ = out.ReadRecordsToList()
			_, _ = cl.ReadRecordsToList()
		}
		i++
	}
}
