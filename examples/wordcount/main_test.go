package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// plainCount counts words the plain Go way, independently of the example's Words: a word is
// a maximal run of letters and digits, lower-cased.
func plainCount(lines []string) map[string]int64 {
	m := map[string]int64{}
	for _, l := range lines {
		var cur []rune
		flush := func() {
			if len(cur) > 0 {
				m[strings.ToLower(string(cur))]++
				cur = cur[:0]
			}
		}
		for _, r := range l {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				cur = append(cur, r)
			} else {
				flush()
			}
		}
		flush()
	}
	return m
}

// expected formats counts as the program must print them.
func expected(m map[string]int64) string {
	words := make([]string, 0, len(m))
	for w := range m {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	for _, w := range words {
		fmt.Fprintf(&b, "%s\t%d\n", w, m[w])
	}
	return b.String()
}

func bundledLines(t *testing.T) []string {
	t.Helper()
	lines, err := readLines("", nil)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// runProgram runs the program with args and returns stdout and stderr.
func runProgram(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := run(ctx, args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestWords(t *testing.T) {
	cases := map[string][]string{
		"Once upon a midnight dreary,":  {"once", "upon", "a", "midnight", "dreary"},
		"'Tis some visitor—tapping":     {"tis", "some", "visitor", "tapping"},
		"Night's Plutonian shore!":      {"night", "s", "plutonian", "shore"},
		"lamp-light o'er him":           {"lamp", "light", "o", "er", "him"},
		"Émile und ÜBER naïve 42nd x_y": {"émile", "und", "über", "naïve", "42nd", "x", "y"},
		"   ":                           nil,
		"日本語 テキスト, ١٢٣ (Arabic digits)": {"日本語", "テキスト", "١٢٣", "arabic", "digits"},
	}
	for in, want := range cases {
		if got := Words(in); !slices.Equal(got, want) {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBundledTextIsSeveralHundredLines(t *testing.T) {
	lines := bundledLines(t)
	if len(lines) < 200 || !strings.Contains(strings.Join(lines, "\n"), "Quoth the Raven") {
		t.Fatalf("bundled text: %d lines", len(lines))
	}
}

// The quickstart: no flags, embedded broker, bundled text.
func TestEmbeddedWordCountBundledText(t *testing.T) {
	t.Parallel()
	out, errOut, err := runProgram(t, "")
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, errOut)
	}
	want := expected(plainCount(bundledLines(t)))
	if out != want {
		t.Fatalf("stdout differs from a plain count of the bundled text\ngot:\n%.500s\nwant:\n%.500s", out, want)
	}
	for _, s := range []string{"embedded Kafka broker", "wrote 215 lines", "output committed"} {
		if !strings.Contains(errOut, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errOut)
		}
	}
	if strings.Contains(out, "wordcount:") {
		t.Errorf("progress on stdout:\n%s", out)
	}
}

// -eos with lines from stdin, including non-ASCII words.
func TestEmbeddedWordCountExactlyOnceStdin(t *testing.T) {
	t.Parallel()
	text := "Émile and the naïve émile\nÜBER über 42 42nd\n\n日本語 and 日本語, again!\n"
	out, errOut, err := runProgram(t, text, "-eos", "-input", "-")
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, errOut)
	}
	want := "and\t2\némile\t2\nüber\t2\n日本語\t2\n42\t1\n42nd\t1\nagain\t1\nnaïve\t1\nthe\t1\n"
	if got := expected(plainCount(strings.Split(text, "\n"))); got != want {
		t.Fatalf("plain count %q, want %q", got, want)
	}
	if out != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if !strings.Contains(errOut, "exactly_once_v2") {
		t.Errorf("stderr does not mention exactly-once:\n%s", errOut)
	}
}

// hundredThousandLines writes a deterministic file of n lines (words from a vocabulary with
// non-ASCII letters, digits, punctuation and empty lines) and returns its path and lines.
func hundredThousandLines(t *testing.T, n int) (string, []string) {
	t.Helper()
	vocab := []string{"raven", "Raven", "nevermore", "Lenore", "chamber", "door", "Émile", "naïve", "über",
		"日本語", "42", "x7", "lamp-light", "o'er", "Night's", "the", "and", "of", "a", "I"}
	r := rand.New(rand.NewPCG(8, 100_000))
	lines := make([]string, n)
	for i := range lines {
		k := r.IntN(12)
		ws := make([]string, k)
		for j := range ws {
			ws[j] = vocab[r.IntN(len(vocab))]
		}
		lines[i] = strings.Join(ws, []string{" ", ", ", "; ", " — "}[r.IntN(4)])
	}
	p := filepath.Join(t.TempDir(), "lines.txt")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, lines
}

// -input with a file of 100 000 lines finishes and prints correct counts.
func TestEmbeddedWordCount100000Lines(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short")
	}
	path, lines := hundredThousandLines(t, 100_000)
	start := time.Now()
	out, errOut, err := runProgram(t, "", "-input", path)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, errOut)
	}
	t.Logf("100 000 lines on the embedded broker: %v", time.Since(start))
	if want := expected(plainCount(lines)); out != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", out, want)
	}
}

// An unreachable -bootstrap fails within a bounded time with one line naming the address:
// a refused connection, and a listener that accepts but never answers.
func TestUnreachableBootstrap(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	for name, addr := range map[string]string{"refused": refused, "silent": silent.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			out, errOut, err := runProgram(t, "", "-bootstrap", addr)
			took := time.Since(start)
			if err == nil {
				t.Fatalf("no error; stdout %q", out)
			}
			msg := "wordcount: " + oneLine(err.Error())
			if !strings.Contains(msg, "cannot reach Kafka at "+addr) || strings.Contains(msg, "\n") {
				t.Errorf("message %q does not name %s on one line", msg, addr)
			}
			if took > connectTimeout+5*time.Second {
				t.Errorf("took %v", took)
			}
			if out != "" || strings.Contains(errOut, "starting application") {
				t.Errorf("something started: stdout %q stderr %q", out, errOut)
			}
			t.Logf("%s after %v", msg, took.Round(time.Millisecond))
		})
	}
}

// An unreadable -input fails before anything starts (no broker, no application).
func TestUnreadableInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-file.txt")
	out, errOut, err := runProgram(t, "", "-input", missing)
	if err == nil || !strings.Contains(err.Error(), "cannot read -input") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("err = %v", err)
	}
	if out != "" || errOut != "" {
		t.Fatalf("something ran: stdout %q stderr %q", out, errOut)
	}
	dir := t.TempDir() // a directory opens but does not read
	if _, _, err := runProgram(t, "", "-input", dir); err == nil || !strings.Contains(err.Error(), "cannot read -input") {
		t.Fatalf("directory as input: err = %v", err)
	}
}

func TestDescribe(t *testing.T) {
	text, _, err := runProgram(t, "", "-describe")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := Topology("streams-plaintext-input", "streams-wordcount-output")
	if err != nil {
		t.Fatal(err)
	}
	if text != topo.Describe().String() || !strings.HasPrefix(text, "Topologies:\n   Sub-topology: 0\n") {
		t.Errorf("-describe:\n%s", text)
	}
	if same, _, _ := runProgram(t, "", "-describe=text"); same != text {
		t.Errorf("-describe=text differs from -describe")
	}
	m, _, err := runProgram(t, "", "-describe=mermaid")
	if err != nil || m != topo.Describe().Mermaid() || !strings.HasPrefix(m, "flowchart TB\n") {
		t.Errorf("-describe=mermaid: %v\n%s", err, m)
	}
	d, _, err := runProgram(t, "", "-describe=dot")
	if err != nil || !strings.HasPrefix(d, "digraph topology {") {
		t.Errorf("-describe=dot: %v\n%s", err, d)
	}
	if _, _, err := runProgram(t, "", "-describe=svg"); err == nil {
		t.Errorf("-describe=svg accepted")
	}
}

// lastValues reads topic to its end and returns the last Long value per key.
func lastValues(t *testing.T, addrs []string, topic string, iso sarama.IsolationLevel) map[string]int64 {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	cfg.Consumer.IsolationLevel = iso
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ps, err := c.Partitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, p := range ps {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		if iso == sarama.ReadCommitted && end > 0 {
			// The partition ends with the commit marker of the last transaction that wrote
			// to it; a read_committed consumer never sees it.
			end--
		}
		deadline := time.After(time.Minute)
		for next := int64(0); next < end; {
			select {
			case m := <-pc.Messages():
				out[string(m.Key)] = int64(binary.BigEndian.Uint64(m.Value))
				next = m.Offset + 1
			case <-deadline:
				t.Fatalf("%s/%d: not read to %d within a minute", topic, p, end)
			}
		}
		pc.Close()
	}
	return out
}

func runOnRealBroker(t *testing.T, lines []string, extra ...string) {
	b := kafkatest.Real(t)
	in, out := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts")
	path := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-bootstrap", strings.Join(b.Addrs, ","), "-application-id", kafkatest.Name(t, "wc"),
		"-input-topic", in, "-output-topic", out, "-input", path}, extra...)
	start := time.Now()
	stdout, errOut, err := runProgram(t, "", args...)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, errOut)
	}
	t.Logf("%d lines on Apache Kafka: %v", len(lines), time.Since(start))
	wantCounts := plainCount(lines)
	if want := expected(wantCounts); stdout != want {
		t.Fatalf("stdout:\n%.1000s\nwant:\n%.1000s", stdout, want)
	}
	iso := sarama.ReadUncommitted
	if slices.Contains(extra, "-eos") {
		iso = sarama.ReadCommitted
	}
	// Under exactly-once the transaction markers of the final commit reach the partitions
	// shortly after the commit returns, so the last stable offset can trail for a moment:
	// read again (bounded) until the read_committed view holds every word's final count.
	got := lastValues(t, b.Addrs, out, iso)
	for deadline := time.Now().Add(30 * time.Second); !maps.Equal(got, wantCounts) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // poll interval; the deadline bounds the wait
		got = lastValues(t, b.Addrs, out, iso)
	}
	if len(got) != len(wantCounts) {
		t.Errorf("output topic has %d words, want %d", len(got), len(wantCounts))
	}
	for w, n := range wantCounts {
		if got[w] != n {
			t.Errorf("output topic: %s = %d, want %d", w, got[w], n)
		}
	}
}

func TestIntegrationWordCountBundledText(t *testing.T) {
	runOnRealBroker(t, bundledLines(t))
}

func TestIntegrationWordCountExactlyOnce(t *testing.T) {
	runOnRealBroker(t, bundledLines(t), "-eos")
}

func TestIntegrationWordCount100000Lines(t *testing.T) {
	_, lines := hundredThousandLines(t, 100_000)
	runOnRealBroker(t, lines, "-eos")
}
