package testdriver

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// This file ports Kafka's WordCountProcessorDemo (streams/examples, Processor API) to Go.

// javaNonWord is Java's \W+ (ASCII: [^A-Za-z0-9_]).
var javaNonWord = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// javaSplitNonWord is Java's s.split("\\W+"): leading empty string kept when s starts with a
// separator, trailing empty strings removed, [""] for "".
func javaSplitNonWord(s string) []string {
	if s == "" {
		return []string{""}
	}
	parts := javaNonWord.Split(s, -1)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// javaLowerRoot is Java's toLowerCase(Locale.ROOT) for what matters to \W splitting: Go's
// ToLower, except U+0130 which Java maps to "i" + U+0307.
func javaLowerRoot(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
}

type wordCountProcessor struct {
	ctx processor.ProcessorContext[string, string]
	kv  store.KeyValueStore[string, int32]
}

func (p *wordCountProcessor) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	if _, err := ctx.Schedule(time.Second, processor.StreamTime, func(ts int64) error {
		it := p.kv.All()
		defer it.Close()
		for it.Next() {
			if err := ctx.Forward(processor.NewRecord(it.Key(), strconv.Itoa(int(it.Value())), ts)); err != nil {
				return err
			}
		}
		return it.Err()
	}); err != nil {
		return err
	}
	kv, err := processor.GetStateStore[store.KeyValueStore[string, int32]](ctx, "Counts")
	p.kv = kv
	return err
}

func (p *wordCountProcessor) Process(r processor.Record[string, string]) error {
	for _, word := range javaSplitNonWord(javaLowerRoot(r.Value)) {
		old, ok, err := p.kv.Get(word)
		if err != nil {
			return err
		}
		if !ok {
			err = p.kv.Put(word, 1)
		} else {
			err = p.kv.Put(word, old+1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *wordCountProcessor) Close() error { return nil }
