package conformance

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// javaSplitWords does what Java's line.toLowerCase(Locale.ROOT).split("\\W+") does for the
// word-count demos, computed independently of Java: \W is [^A-Za-z0-9_] (no
// UNICODE_CHARACTER_CLASS), so every non-ASCII character separates words. Java's split keeps
// a leading empty string when the line starts with a separator, drops trailing empty strings,
// and returns the whole input (so [""] for "") when nothing matches.
func javaSplitWords(line string) []string {
	lower := strings.ToLower(line) // equals Java's toLowerCase(Locale.ROOT) on the vectors' text
	isWord := func(r rune) bool {
		return r < 0x80 && (r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}
	var parts []string
	var cur strings.Builder
	inSep, matched := false, false
	for _, r := range lower {
		if isWord(r) {
			if inSep {
				inSep = false
			}
			cur.WriteRune(r)
			continue
		}
		if !inSep {
			parts = append(parts, cur.String())
			cur.Reset()
			inSep, matched = true, true
		}
	}
	if !matched {
		return []string{lower}
	}
	parts = append(parts, cur.String())
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func TestJavaSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		"":                 {""},
		"!!!":              {},
		"a":                {"a"},
		" Hello, hello!":   {"", "hello", "hello"},
		"Café au-lait_1 ":  {"caf", "au", "lait_1"},
		"x  y":             {"x", "y"},
		",a,,b,,":          {"", "a", "b"},
		"ÉTÉ":              {"", "t"},
		"Join KAFKA.  now": {"join", "kafka", "now"},
	} {
		got := javaSplitWords(in)
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("split(%q) = %q, want %q", in, got, want)
		}
	}
}

// checkBytesMatchTyped checks that each output's raw bytes are the serialization of its typed
// key and value (Go encoder vs Java serializer).
func checkBytesMatchTyped(t *testing.T, outs []OutputRecord) {
	t.Helper()
	for i, o := range outs {
		kb, err := o.Key.Serialize()
		if err != nil || !bytes.Equal(kb, o.KeyBytes) || (kb == nil) != (o.KeyBytes == nil) {
			t.Errorf("output %d: key %v serializes to %x (%v), raw bytes are %x", i, o.Key, kb, err, o.KeyBytes)
		}
		vb, err := o.Value.Serialize()
		if err != nil || !bytes.Equal(vb, o.ValueBytes) || (vb == nil) != (o.ValueBytes == nil) {
			t.Errorf("output %d: value %v serializes to %x (%v), raw bytes are %x", i, o.Value, vb, err, o.ValueBytes)
		}
	}
}

// wordCountDescribe is Java 4.4's describe().toString() of WordCountDemo. The numbering
// follows the one-counter-per-builder rule: source 0, flatMapValues 1, groupBy's key selector
// 2, count's store 3 and processor 4, then the repartition takes three numbers (sink 5, filter
// 6, source 7), toStream 8, sink 9. Kafka's tutorial shows the same shape in an older, condensed
// format (arrows on one line, no brackets around topics, "Global Stores: none"); 4.4 puts each
// arrow on its own line, indents the first sub-topology by three spaces and the others by two,
// ends each sub-topology with a blank line, and prints the repartition topic without the
// application.id prefix.
const wordCountDescribe = `Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [streams-plaintext-input])
      --> KSTREAM-FLATMAPVALUES-0000000001
    Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])
      --> KSTREAM-KEY-SELECT-0000000002
      <-- KSTREAM-SOURCE-0000000000
    Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])
      --> KSTREAM-FILTER-0000000006
      <-- KSTREAM-FLATMAPVALUES-0000000001
    Processor: KSTREAM-FILTER-0000000006 (stores: [])
      --> KSTREAM-SINK-0000000005
      <-- KSTREAM-KEY-SELECT-0000000002
    Sink: KSTREAM-SINK-0000000005 (topic: KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition)
      <-- KSTREAM-FILTER-0000000006

  Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000007 (topics: [KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition])
      --> KSTREAM-AGGREGATE-0000000004
    Processor: KSTREAM-AGGREGATE-0000000004 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000003])
      --> KTABLE-TOSTREAM-0000000008
      <-- KSTREAM-SOURCE-0000000007
    Processor: KTABLE-TOSTREAM-0000000008 (stores: [])
      --> KSTREAM-SINK-0000000009
      <-- KSTREAM-AGGREGATE-0000000004
    Sink: KSTREAM-SINK-0000000009 (topic: streams-wordcount-output)
      <-- KTABLE-TOSTREAM-0000000008

`

func TestJavaWordCount(t *testing.T) {
	vector := filepath.Join("../../conformance/vectors", "wordcount.jsonl")
	events, err := ReadEventsFile(vector)
	if err != nil {
		t.Fatal(err)
	}
	outs, describe := RunJava(t, "wordcount", vector)

	const (
		outputTopic    = "streams-wordcount-output"
		changelogTopic = "streams-wordcount-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog"
		repartition    = "streams-wordcount-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition"
	)
	// Expected, from the input alone: the running count of every word occurrence, per step.
	type wc struct {
		word  string
		count int64
	}
	counts := map[string]int64{}
	wantPerStep := map[int][]wc{}
	totalWords := 0
	for step, ev := range events {
		if ev.Record == nil {
			continue
		}
		line, ok := ev.Record.Value.Value.(string)
		if !ok {
			t.Fatalf("event %d: value %v is not a string", step, ev.Record.Value)
		}
		for _, w := range javaSplitWords(line) {
			counts[w]++
			totalWords++
			wantPerStep[step] = append(wantPerStep[step], wc{w, counts[w]})
		}
	}
	if len(counts) < 10 || counts["kafka"] != 4 || counts[""] != 2 {
		t.Fatalf("vector changed? counts = %v", counts)
	}

	byTopic := map[string][]OutputRecord{}
	for _, o := range outs {
		byTopic[o.Topic] = append(byTopic[o.Topic], o)
		if o.Step < 0 || o.Step >= len(events) || events[o.Step].Record == nil {
			t.Errorf("output %v was not caused by an input record", o)
			continue
		}
		if o.Timestamp != events[o.Step].Record.Timestamp {
			t.Errorf("output %v: timestamp %d, want the input's %d", o, o.Timestamp, events[o.Step].Record.Timestamp)
		}
	}
	if len(byTopic) != 3 {
		t.Errorf("produced topics %v, want output, changelog and repartition", keys(byTopic))
	}
	checkBytesMatchTyped(t, outs)

	// With statestore.cache.max.bytes=0 (the demo's setting) every word occurrence gives one
	// record on each topic, in input order within a step.
	for _, topic := range []string{outputTopic, changelogTopic} {
		recs := byTopic[topic]
		if len(recs) != totalWords {
			t.Errorf("%s: %d records, want one per word occurrence (%d)", topic, len(recs), totalWords)
		}
		last := map[string]int64{}
		i := 0
		for step := 0; step < len(events); step++ {
			for _, w := range wantPerStep[step] {
				if i >= len(recs) {
					break
				}
				r := recs[i]
				if r.Step != step || !r.Key.Equal(String(w.word)) || !r.Value.Equal(Long(w.count)) {
					t.Errorf("%s record %d = %v, want step %d key %q count %d", topic, i, r, step, w.word, w.count)
				}
				i++
			}
		}
		for _, r := range recs {
			k, _ := r.Key.Value.(string)
			n, _ := r.Value.Value.(int64)
			last[k] = n
		}
		if len(last) != len(counts) {
			t.Errorf("%s: %d distinct words, want %d", topic, len(last), len(counts))
		}
		for w, n := range counts {
			if last[w] != n {
				t.Errorf("%s: final count of %q = %d, want %d", topic, w, last[w], n)
			}
		}
	}
	// The repartition topic carries (word, word) for each occurrence.
	if got := len(byTopic[repartition]); got != totalWords {
		t.Errorf("%s: %d records, want %d", repartition, got, totalWords)
	}
	for _, r := range byTopic[repartition] {
		if !r.Key.Equal(r.Value) || r.Key.Kind != KindString {
			t.Errorf("repartition record %v: want key == value (the word)", r)
		}
	}

	if describe != wordCountDescribe {
		t.Errorf("describe text:\n%s\nwant:\n%s", describe, wordCountDescribe)
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestJavaPipe(t *testing.T) {
	vector := filepath.Join("../../conformance/vectors", "pipe.jsonl")
	events, err := ReadEventsFile(vector)
	if err != nil {
		t.Fatal(err)
	}
	outs, describe := RunJava(t, "pipe", vector)
	checkBytesMatchTyped(t, outs)

	var want []OutputRecord
	for step, ev := range events {
		r := ev.Record
		if r == nil {
			continue
		}
		kb, err := r.Key.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		vb, err := r.Value.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		var hs []Header
		for _, h := range r.Headers {
			b, err := h.Value.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			hv := Null()
			if b != nil {
				hv = Bytes(b)
			}
			hs = append(hs, Header{Key: h.Key, Value: hv})
		}
		want = append(want, OutputRecord{Step: step, Topic: "streams-pipe-output", Key: r.Key, Value: r.Value,
			KeyBytes: kb, ValueBytes: vb, Timestamp: r.Timestamp, Headers: hs})
	}
	if len(want) < 4 {
		t.Fatalf("vector changed? %d records", len(want))
	}
	if d := DiffOutputs(want, outs); d != "" {
		t.Errorf("pipe output differs from its input:\n%s", d)
	}

	wantDescribe := "Topologies:\n" +
		"   Sub-topology: 0\n" +
		"    Source: KSTREAM-SOURCE-0000000000 (topics: [streams-plaintext-input])\n" +
		"      --> KSTREAM-SINK-0000000001\n" +
		"    Sink: KSTREAM-SINK-0000000001 (topic: streams-pipe-output)\n" +
		"      <-- KSTREAM-SOURCE-0000000000\n\n"
	if describe != wantDescribe {
		t.Errorf("describe text:\n%q\nwant:\n%q", describe, wantDescribe)
	}
}

// TestJavaWordCountProcessor checks what WordCountProcessorDemo is known to do, computed from
// the vector alone: process() writes each word's new count to the "Counts" changelog; outputs
// come only from the stream-time punctuator, each batch listing every word seen so far with
// its count (as text), in key order, stamped with one timestamp that is the stream time (the
// largest input timestamp so far). Wall-clock advances produce nothing.
func TestJavaWordCountProcessor(t *testing.T) {
	vector := filepath.Join("../../conformance/vectors", "wordcount-processor.jsonl")
	events, err := ReadEventsFile(vector)
	if err != nil {
		t.Fatal(err)
	}
	outs, describe := RunJava(t, "wordcount-processor", vector)
	checkBytesMatchTyped(t, outs)

	const (
		outputTopic    = "streams-wordcount-processor-output"
		changelogTopic = "streams-wordcount-processor-Counts-changelog"
	)
	byStep := map[int][]OutputRecord{}
	for _, o := range outs {
		if o.Topic == outputTopic {
			byStep[o.Step] = append(byStep[o.Step], o)
		} else if o.Topic != changelogTopic {
			t.Errorf("unexpected topic in %v", o)
		}
	}
	counts := map[string]int32{}
	var changelog []OutputRecord
	for _, o := range outs {
		if o.Topic == changelogTopic {
			changelog = append(changelog, o)
		}
	}
	ci := 0
	streamTime := int64(-1)
	batches := 0
	for step, ev := range events {
		if ev.Record == nil {
			if len(byStep[step]) != 0 {
				t.Errorf("wall-clock advance at step %d produced %d records", step, len(byStep[step]))
			}
			continue
		}
		streamTime = max(streamTime, ev.Record.Timestamp)
		for _, w := range javaSplitWords(ev.Record.Value.Value.(string)) {
			counts[w]++
			if ci >= len(changelog) {
				t.Fatalf("changelog ends early at step %d", step)
			}
			c := changelog[ci]
			ci++
			if c.Step != step || !c.Key.Equal(String(w)) || !c.Value.Equal(Integer(counts[w])) || c.Timestamp != ev.Record.Timestamp {
				t.Errorf("changelog record %v, want step %d %q=%d at %d", c, step, w, counts[w], ev.Record.Timestamp)
			}
		}
		batch := byStep[step]
		if len(batch) == 0 {
			continue
		}
		batches++
		if len(batch) != len(counts) {
			t.Errorf("step %d: punctuation emitted %d words, want all %d seen so far", step, len(batch), len(counts))
		}
		for i, o := range batch {
			k, _ := o.Key.Value.(string)
			if i > 0 && o.Key.Value.(string) <= batch[i-1].Key.Value.(string) {
				t.Errorf("step %d: %q not in ascending key order", step, k)
			}
			if want := String(strconv.Itoa(int(counts[k]))); !o.Value.Equal(want) {
				t.Errorf("step %d: %q = %v, want %v", step, k, o.Value, want)
			}
			if o.Timestamp != streamTime {
				t.Errorf("step %d: %q stamped %d, want stream time %d", step, k, o.Timestamp, streamTime)
			}
		}
	}
	if ci != len(changelog) {
		t.Errorf("%d changelog records, want %d", len(changelog), ci)
	}
	if batches < 3 {
		t.Errorf("only %d punctuations; the vector should trigger several", batches)
	}
	if want := "Topologies:\n" +
		"   Sub-topology: 0\n" +
		"    Source: Source (topics: [streams-plaintext-input])\n" +
		"      --> Process\n" +
		"    Processor: Process (stores: [Counts])\n" +
		"      --> Sink\n" +
		"      <-- Source\n" +
		"    Sink: Sink (topic: streams-wordcount-processor-output)\n" +
		"      <-- Process\n\n"; describe != want {
		t.Errorf("describe text:\n%q\nwant:\n%q", describe, want)
	}
}
