package cache

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// TestTracesMatchJava runs every testdata/*.trace script against this package and compares the
// transcript with the one Java's own ThreadCache (kafka-streams 4.4.0) wrote for the same script
// (testdata/*.transcript, from testdata/CacheTrace.java): sizes in bytes after every operation, entry
// and eviction counts, every flush-listener call with its entries in order, read results and
// range contents.
func TestTracesMatchJava(t *testing.T) {
	traces, err := filepath.Glob("testdata/*.trace")
	if err != nil || len(traces) == 0 {
		t.Fatalf("no traces: %v", err)
	}
	for _, tr := range traces {
		t.Run(filepath.Base(tr), func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(tr, ".trace") + ".transcript")
			if err != nil {
				t.Fatal(err)
			}
			got, err := runTrace(tr)
			if err != nil {
				t.Fatal(err)
			}
			wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
			for i := 0; i < max(len(wl), len(gl)); i++ {
				var w, g string
				if i < len(wl) {
					w = wl[i]
				}
				if i < len(gl) {
					g = gl[i]
				}
				if w != g {
					t.Fatalf("line %d differs:\njava: %s\ngo:   %s\n(go transcript so far:\n%s)", i+1, w, g, strings.Join(gl[:min(i+1, len(gl))], "\n"))
				}
			}
		})
	}
}

// runTrace interprets a trace script (format: testdata/CacheTrace.java) and returns the transcript.
func runTrace(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var out strings.Builder
	var c *ThreadCache
	str := func(b []byte) string {
		if b == nil {
			return "null"
		}
		return string(b)
	}
	val := func(s string) []byte {
		if s == "null" {
			return nil
		}
		return []byte(s)
	}
	bound := func(s string) []byte {
		if s == "-" {
			return nil
		}
		return []byte(s)
	}
	ctxString := func(e *Entry) string {
		rc := e.Context()
		topic := rc.Topic
		if topic == "" {
			topic = "-"
		}
		s := fmt.Sprintf("ts=%d off=%d part=%d topic=%s", rc.Timestamp, rc.Offset, rc.Partition, topic)
		for h := range rc.Headers.All() {
			s += " " + h.Key + "=" + str(h.Value)
		}
		return s + fmt.Sprintf(" dirty=%t size=%d", e.IsDirty(), e.Size())
	}
	entry := func(e *Entry) string {
		if e == nil {
			return "none"
		}
		return str(e.Value()) + " " + ctxString(e)
	}
	dirty := func(tok []string) (*Entry, error) {
		ts, err1 := strconv.ParseInt(tok[1], 10, 64)
		off, err2 := strconv.ParseInt(tok[2], 10, 64)
		part, err3 := strconv.ParseInt(tok[3], 10, 32)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("bad entry %v", tok)
		}
		rc := processor.RecordContext{Timestamp: ts, Offset: off, Partition: int32(part)}
		if tok[4] != "-" {
			rc.Topic = tok[4]
		}
		for _, h := range tok[5:] {
			k, v, _ := strings.Cut(h, "=")
			rc.Headers.Add(k, val(v))
		}
		return NewEntry(val(tok[0]), rc, true), nil
	}
	listener := func(ns, forwardTo string) FlushListener {
		return func(entries []DirtyEntry) error {
			fmt.Fprintf(&out, "  flush %s (%d)\n", ns, len(entries))
			for _, d := range entries {
				fmt.Fprintf(&out, "    %s -> %s %s\n", str(d.Key), str(d.NewValue), ctxString(d.Entry))
				if forwardTo != "" {
					rc := d.Entry.Context()
					if err := c.Put(forwardTo, d.Key, NewEntry(d.NewValue, rc, true)); err != nil {
						return err
					}
				}
			}
			return nil
		}
	}
	iterate := func(it *Iterator) {
		var parts []string
		for it.HasNext() {
			k, e := it.Next()
			parts = append(parts, str(k)+"="+str(e.Value()))
		}
		fmt.Fprintf(&out, "= [%s]\n", strings.Join(parts, ", "))
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		t := strings.Split(line, " ")
		fmt.Fprintf(&out, "> %s\n", line)
		var err error
		switch t[0] {
		case "max":
			n, _ := strconv.ParseInt(t[1], 10, 64)
			c = New(n)
		case "listener":
			c.AddDirtyEntryFlushListener(t[1], listener(t[1], ""))
		case "forward":
			c.AddDirtyEntryFlushListener(t[1], listener(t[1], t[2]))
		case "put":
			var e *Entry
			if e, err = dirty(t[3:]); err == nil {
				err = c.Put(t[1], []byte(t[2]), e)
			}
		case "clean":
			err = c.Put(t[1], []byte(t[2]), NewCleanEntry(val(t[3])))
		case "putifabsent":
			var e, old *Entry
			if e, err = dirty(t[3:]); err == nil {
				old, err = c.PutIfAbsent(t[1], []byte(t[2]), e)
				fmt.Fprintf(&out, "= %s\n", entry(old))
			}
		case "get":
			fmt.Fprintf(&out, "= %s\n", entry(c.Get(t[1], []byte(t[2]))))
		case "delete":
			fmt.Fprintf(&out, "= %s\n", entry(c.Delete(t[1], []byte(t[2]))))
		case "flush":
			err = c.Flush(t[1])
		case "clear":
			c.Clear(t[1])
		case "close":
			c.Close(t[1])
		case "resize":
			n, _ := strconv.ParseInt(t[1], 10, 64)
			err = c.Resize(n)
		case "range":
			iterate(c.Range(t[1], bound(t[2]), bound(t[3])))
		case "rangex":
			iterate(c.RangeInclusive(t[1], bound(t[2]), bound(t[3]), false))
		case "rrange":
			iterate(c.ReverseRange(t[1], bound(t[2]), bound(t[3])))
		case "all":
			iterate(c.All(t[1]))
		case "rall":
			iterate(c.ReverseAll(t[1]))
		default:
			return "", fmt.Errorf("unknown op %q", t[0])
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", line, err)
		}
		fmt.Fprintf(&out, "  size=%d entries=%d evicts=%d puts=%d gets=%d flushes=%d\n", c.SizeBytes(), c.Size(), c.Evicts(),
			c.Puts(), c.Gets(), c.Flushes())
	}
	return out.String(), sc.Err()
}

// The size of an entry follows Java's LRUCacheEntry/ProcessorRecordContext/LRUNode accounting:
// key + 24 + 1 + value + 8 + 8 + topic (UTF-16 units) + 4 + headers (key UTF-16 units + value bytes).
// The expected numbers are those Java printed in testdata/basic.transcript.
func TestEntrySizeAccounting(t *testing.T) {
	var h serde.Headers
	h.Add("h1", []byte("x")).Add("hé", []byte("ü"))
	e := NewEntry([]byte("value-two"), processor.RecordContext{Timestamp: 11, Offset: 1, Topic: "topic-in", Headers: h}, true)
	// Java: "k2 -> value-two ... size=" is not printed before the overwrite; the node grew the
	// cache from 57 to 128 bytes: 71 = len("k2") + 24 + entry size.
	if got := int64(len("k2")) + 24 + e.Size(); got != 128-57 {
		t.Fatalf("node size = %d, want %d", got, 128-57)
	}
	// "k4 -> v4 ts=14 off=4 part=0 topic=tópic ... size=28": ó is one UTF-16 unit (two UTF-8 bytes).
	if got := NewEntry([]byte("v4"), processor.RecordContext{Topic: "tópic"}, true).Size(); got != 28 {
		t.Fatalf("entry size = %d, want 28", got)
	}
	// "k5 -> null ... topic=- ... size=21": a tombstone without topic.
	if got := NewEntry(nil, processor.RecordContext{}, true).Size(); got != 21 {
		t.Fatalf("tombstone size = %d, want 21", got)
	}
	// Supplementary characters count two UTF-16 units, as Java's toCharArray.
	if got := utf16Len("a😀"); got != 3 {
		t.Fatalf("utf16Len = %d, want 3", got)
	}
}

func TestFlushWithoutListener(t *testing.T) {
	c := New(1000)
	if err := c.Put("0_0-x", []byte("k"), NewEntry([]byte("v"), processor.RecordContext{}, true)); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush("0_0-x"); err == nil || !strings.Contains(err.Error(), "0_0-x") {
		t.Fatalf("flush without listener: err = %v, want ErrNoListener", err)
	}
	if err := c.Put("0_0-x", []byte("k"), NewCleanEntry([]byte("v"))); err == nil {
		t.Fatal("a clean entry over a dirty one must be refused")
	}
}

func TestListenerErrorStopsPut(t *testing.T) {
	c := New(0)
	boom := fmt.Errorf("boom")
	c.AddDirtyEntryFlushListener("0_0-x", func([]DirtyEntry) error { return boom })
	if err := c.Put("0_0-x", []byte("k"), NewEntry([]byte("v"), processor.RecordContext{}, true)); err != boom {
		t.Fatalf("err = %v, want the listener's", err)
	}
}

// One writer (with a listener that writes into another named cache of its task) and concurrent
// readers taking the task's lock per read, as interactive queries do: run with -race. Readers
// only reorder the recency lists, so the accounting stays consistent.
func TestConcurrentReaders(t *testing.T) {
	c := New(2000)
	var task sync.Mutex // the runtime's task lock: both named caches are one task's
	c.AddDirtyEntryFlushListener("0_0-b", func([]DirtyEntry) error { return nil })
	c.AddDirtyEntryFlushListener("0_0-a", func(entries []DirtyEntry) error {
		for _, d := range entries {
			if err := c.Put("0_0-b", d.Key, NewEntry(d.NewValue, d.Entry.Context(), true)); err != nil {
				return err
			}
		}
		return nil
	})
	done := make(chan struct{})
	readers := readWhile(done, 2, func() {
		task.Lock()
		c.Get("0_0-a", []byte("k7"))
		drain(c.All("0_0-b"))
		task.Unlock()
		_ = c.SizeBytes()
	})
	for i := range 2000 {
		k := []byte(fmt.Sprintf("k%d", i%50))
		task.Lock()
		err := c.Put("0_0-a", k, NewEntry([]byte(strings.Repeat("v", i%30)), processor.RecordContext{Topic: "t"}, true))
		if err == nil && i%100 == 0 {
			err = c.Flush("0_0-a")
		}
		task.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	readers.Wait()
	if got := c.NamedCacheSizeBytes("0_0-a") + c.NamedCacheSizeBytes("0_0-b"); got != c.SizeBytes() {
		t.Fatalf("named caches hold %d bytes, the thread cache counts %d", got, c.SizeBytes())
	}
}

// readWhile runs read over and over on n goroutines of their own, as interactive queries do,
// until done is closed; the returned group is done once they all stopped.
func readWhile(done <-chan struct{}, n int, read func()) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				read()
			}
		}()
	}
	return &wg
}

// drain reads it to its end.
func drain(it *Iterator) {
	for it.HasNext() {
		it.Next()
	}
}

// The executors of a stream thread write different named caches of one thread cache at the
// same time (each its own, evicting and flushing under the shared budget) while interactive
// queries read them, each holding the task's lock (one read of a named cache at a time with
// its writer, as the runtime's task locks order them), then the budget shrinks: every last write of every key reaches its listener, the
// whole cache's size is the sum of the named caches', and the counters count every operation.
func TestConcurrentWriters(t *testing.T) {
	const writers, keys, writes = 4, 300, 5000
	c := New(16 << 10)
	last := make([]map[string]string, writers)
	handles := make([]*Named, writers)
	tasks := make([]sync.Mutex, writers) // the runtime's task locks
	for w := range writers {
		last[w] = map[string]string{}
		ns := fmt.Sprintf("1_%d-counts", w)
		handles[w] = c.AddDirtyEntryFlushListener(ns, func(entries []DirtyEntry) error {
			for _, d := range entries {
				last[w][string(d.Key)] = string(d.NewValue)
			}
			return nil
		})
	}
	done := make(chan struct{})
	readers := readWhile(done, 1, func() {
		for w := range writers {
			ns := fmt.Sprintf("1_%d-counts", w)
			tasks[w].Lock()
			c.Get(ns, []byte("k7"))
			drain(c.All(ns))
			tasks[w].Unlock()
		}
		_ = c.SizeBytes()
	})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns := fmt.Sprintf("1_%d-counts", w)
			for i := range writes {
				k := fmt.Sprintf("k%d", i%keys)
				v := []byte(fmt.Sprintf("%d-%d", w, i))
				var err error
				tasks[w].Lock()
				switch i % 3 {
				case 0:
					err = handles[w].PutDirtyString(k, v, processor.RecordContext{Topic: "t"})
				case 1:
					err = handles[w].PutDirty([]byte(k), v, processor.RecordContext{Topic: "t"})
				default:
					err = c.Put(ns, []byte(k), NewEntry(v, processor.RecordContext{Topic: "t"}, true))
				}
				if err == nil && i%500 == 0 {
					err = c.Flush(ns)
				}
				if err == nil {
					handles[w].GetString(fmt.Sprintf("k%d", (i*7)%keys))
				}
				tasks[w].Unlock()
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	if err := c.Resize(12 << 10); err != nil { // no named cache in use, as Resize asks
		t.Fatal(err)
	}
	sum := int64(0)
	for _, ns := range c.Namespaces() {
		sum += c.NamedCacheSizeBytes(ns)
	}
	if sum != c.SizeBytes() {
		t.Fatalf("named caches hold %d bytes, the thread cache counts %d", sum, c.SizeBytes())
	}
	if c.SizeBytes() > c.MaxBytes() {
		t.Errorf("size %d over the budget %d after every write evicted", c.SizeBytes(), c.MaxBytes())
	}
	if got, want := c.Puts(), int64(writers*writes); got != want {
		t.Errorf("Puts() = %d, want %d", got, want)
	}
	if c.Evicts() == 0 {
		t.Error("nothing was evicted: the budget does not exercise eviction")
	}
	for w := range writers {
		if err := c.Flush(fmt.Sprintf("1_%d-counts", w)); err != nil {
			t.Fatal(err)
		}
		for k := range keys {
			i := writes - keys + k // the last write of key k
			key, want := fmt.Sprintf("k%d", i%keys), fmt.Sprintf("%d-%d", w, i)
			if got := last[w][key]; got != want {
				t.Fatalf("writer %d: key %s flushed as %q, want its last write %q", w, key, got, want)
			}
		}
	}
}

// Resize walks the named caches in sorted order and counts every step as an eviction, an
// empty named cache's too (Java's resize counts numEvicts per step of its walk; its order is
// its hash map's, which the traces therefore leave out): a, b, a, b, a for three entries in a.
func TestResizeCountsEveryStep(t *testing.T) {
	c := New(1 << 20)
	c.AddDirtyEntryFlushListener("0_0-a", func([]DirtyEntry) error { return nil })
	c.AddDirtyEntryFlushListener("0_0-b", func([]DirtyEntry) error { return nil })
	for _, k := range []string{"k1", "k2", "k3"} {
		if err := c.Put("0_0-a", []byte(k), NewCleanEntry([]byte("v"))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Resize(0); err != nil {
		t.Fatal(err)
	}
	if c.Evicts() != 5 || c.SizeBytes() != 0 || c.Size() != 0 {
		t.Fatalf("after Resize(0): %d evictions, %d bytes, %d entries; want 5, 0, 0", c.Evicts(), c.SizeBytes(), c.Size())
	}
}

// A Named handle whose namespace was closed acts as the ThreadCache's methods do: a read finds
// nothing, a write creates the named cache anew, and the sizes and counters stay right.
func TestNamedAfterClose(t *testing.T) {
	c := New(1 << 20)
	n := c.AddDirtyEntryFlushListener("0_0-s", func([]DirtyEntry) error { return nil })
	if err := n.PutString("a", NewEntry([]byte("1"), processor.RecordContext{}, true)); err != nil {
		t.Fatal(err)
	}
	c.Close("0_0-s")
	if c.SizeBytes() != 0 || c.Size() != 0 {
		t.Fatalf("after Close: size %d bytes, %d entries; want 0", c.SizeBytes(), c.Size())
	}
	if e := n.GetString("a"); e != nil {
		t.Fatalf("a closed named cache returned %q", e.Value())
	}
	if err := n.Put([]byte("b"), NewCleanEntry([]byte("2"))); err != nil {
		t.Fatal(err)
	}
	if e := c.Get("0_0-s", []byte("b")); e == nil || string(e.Value()) != "2" {
		t.Fatalf("a write through the closed handle is not in the new named cache: %v", e)
	}
	if got := c.NamedCacheSizeBytes("0_0-s"); got != c.SizeBytes() || got == 0 {
		t.Fatalf("named cache %d bytes, thread cache %d", got, c.SizeBytes())
	}
	if c.Puts() != 2 || c.Gets() != 2 {
		t.Fatalf("puts %d, gets %d; want 2 and 2 (the closed cache's counted)", c.Puts(), c.Gets())
	}
}

// A panicking listener leaves the cache usable (no flush counted as still running), so an
// engine that recovers the panic can go on.
func TestListenerPanicKeepsCacheUsable(t *testing.T) {
	c := New(1000)
	c.AddDirtyEntryFlushListener("0_0-x", func([]DirtyEntry) error { panic("boom") })
	if err := c.Put("0_0-x", []byte("k"), NewEntry([]byte("v"), processor.RecordContext{}, true)); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		_ = c.Flush("0_0-x")
	}()
	if c.Get("0_0-x", []byte("k")) == nil || c.SizeBytes() <= 0 {
		t.Fatal("cache unusable after a listener panic")
	}
	if n := c.lookup("0_0-x").flushing; n != 0 {
		t.Fatalf("%d flushes still counted as running after the listener panicked", n)
	}
}

// PutDirty overwrites a key's entry in place while nothing can hold it, and puts a new entry
// while a flush listener runs (it was handed the old one) or once a range scan was made; the
// size accounting and the flush order are those of Put.
func TestPutDirtyReuse(t *testing.T) {
	c := New(1 << 20)
	var flushed []string
	c.AddDirtyEntryFlushListener("ns", func(es []DirtyEntry) error {
		for _, e := range es {
			flushed = append(flushed, string(e.Key)+"="+string(e.NewValue))
		}
		return nil
	})
	ctx := processor.RecordContext{Topic: "t", Timestamp: 5}
	if err := c.PutDirty("ns", []byte("a"), []byte("1"), ctx); err != nil {
		t.Fatal(err)
	}
	first := c.Get("ns", []byte("a"))
	if err := c.PutDirty("ns", []byte("b"), []byte("x"), ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.PutDirty("ns", []byte("a"), []byte("22"), ctx); err != nil {
		t.Fatal(err)
	}
	second := c.Get("ns", []byte("a"))
	if first != second || string(second.Value()) != "22" || !second.IsDirty() {
		t.Fatalf("in-place overwrite: same entry %v, value %q dirty %v", first == second, second.Value(), second.IsDirty())
	}
	want := NewEntry([]byte("22"), ctx, true).Size() + NewEntry([]byte("x"), ctx, true).Size() + 2*(1+24)
	if got := c.SizeBytes(); got != want {
		t.Errorf("size %d, want %d", got, want)
	}
	if err := c.Flush("ns"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(flushed, ","); got != "b=x,a=22" {
		t.Errorf("flushed %s, want b=x,a=22 (order of the last write)", got)
	}
	// A range scan: from then on a new entry per write.
	it := c.All("ns")
	it.HasNext()
	peeked := it.PeekNext()
	if err := c.PutDirty("ns", []byte("a"), []byte("333"), ctx); err != nil {
		t.Fatal(err)
	}
	if string(peeked.Value()) != "22" {
		t.Errorf("the iterator's peeked entry changed to %q", peeked.Value())
	}
}

// PutDirty remembers the UTF-16 length of the last topic it was written with; writes from
// other topics (longer, shorter, non-ASCII, none) are still accounted with their own.
func TestPutDirtyTopicLength(t *testing.T) {
	c := New(1 << 20)
	c.AddDirtyEntryFlushListener("ns", func([]DirtyEntry) error { return nil })
	var want int64
	for i, topic := range []string{"topic-in", "topic-in", "tópic😀", "", "a-much-longer-topic-name", "topic-in"} {
		ctx := processor.RecordContext{Topic: topic, Timestamp: 5}
		key := []byte{byte('a' + i)}
		if err := c.PutDirty("ns", key, []byte("v"), ctx); err != nil {
			t.Fatal(err)
		}
		want += int64(len(key)) + 24 + NewEntry([]byte("v"), ctx, true).Size()
		if got := c.SizeBytes(); got != want {
			t.Fatalf("after a write from topic %q: size %d, want %d", topic, got, want)
		}
	}
	// An overwrite in place is accounted with the new write's topic.
	ctx := processor.RecordContext{Topic: "tópic😀"}
	if err := c.PutDirty("ns", []byte("a"), []byte("v"), ctx); err != nil {
		t.Fatal(err)
	}
	want += NewEntry([]byte("v"), ctx, true).Size() - NewEntry([]byte("v"), processor.RecordContext{Topic: "topic-in"}, true).Size()
	if got := c.SizeBytes(); got != want {
		t.Fatalf("after an overwrite: size %d, want %d", got, want)
	}
	if got, w := NewEntry(nil, ctx, true).Size()-NewEntry(nil, processor.RecordContext{Topic: "topic"}, true).Size(), int64(2); got != w {
		t.Fatalf("tópic😀 counts %d UTF-16 units more than topic, want %d", got, w)
	}
}

// PutString and PutDirtyString keep the string they are given as the entry's map key (no
// copy), while the key bytes handed to the flush listener are a copy of their own. GetString,
// Get and the byte-keyed puts see the same entries, and an empty string is a key, not a null
// key.
func TestStringKeysAreKept(t *testing.T) {
	c := New(1 << 20)
	var flushed []DirtyEntry
	c.AddDirtyEntryFlushListener("ns", func(es []DirtyEntry) error {
		flushed = append(flushed, es...)
		return nil
	})
	ctx := processor.RecordContext{Topic: "t", Timestamp: 5}
	word := strings.Repeat("w", 3) // built at run time: its own allocation
	if err := c.PutDirtyString("ns", word, []byte("1"), ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.PutDirtyString("ns", "", []byte("e"), ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.PutString("ns", "clean", NewCleanEntry([]byte("c"))); err != nil {
		t.Fatal(err)
	}
	if e := c.Get("ns", []byte("www")); e == nil || string(e.Value()) != "1" {
		t.Fatalf("Get of a key put as a string: %v", e)
	}
	if e := c.GetString("ns", "clean"); e == nil || string(e.Value()) != "c" || e.IsDirty() {
		t.Fatalf("GetString of a clean entry: %v", e)
	}
	if err := c.PutDirty("ns", []byte("www"), []byte("2"), ctx); err != nil {
		t.Fatal(err)
	}
	if e := c.GetString("ns", "www"); e == nil || string(e.Value()) != "2" {
		t.Fatalf("GetString after a byte-keyed PutDirty: %v", e)
	}
	if err := c.Flush("ns"); err != nil {
		t.Fatal(err)
	}
	if len(flushed) != 2 {
		t.Fatalf("flushed %d entries, want 2", len(flushed))
	}
	if k := flushed[0].Key; string(k) != "" || k == nil {
		t.Errorf("first flushed key %q (nil %v), want the empty key", k, k == nil)
	}
	if k := flushed[1].Key; string(k) != "www" || unsafe.SliceData(k) == unsafe.StringData(word) {
		t.Errorf("flushed key %q: want a copy of its own, not the string's memory", k)
	}
	n := c.lookup("ns").nodes["www"]
	if n == nil || unsafe.StringData(n.skey) != unsafe.StringData(word) {
		t.Errorf("the map key of www is not the string put (a copy was made)")
	}
}

// PutDirtyStringCopy writes a value of the same length into the bytes of the key's entry while
// it is dirty and unflushed, and into new bytes otherwise: the bytes a flush listener was handed,
// and those of an entry read from below (clean), keep their value; the caller's buffer is never
// kept.
func TestPutDirtyStringCopy(t *testing.T) {
	c := New(1 << 20)
	var handed [][]byte
	n := c.AddDirtyEntryFlushListener("ns", func(es []DirtyEntry) error {
		for _, e := range es {
			handed = append(handed, e.NewValue)
		}
		return nil
	})
	ctx := processor.RecordContext{Topic: "t", Timestamp: 5}
	buf := []byte("v1")
	if err := n.PutDirtyStringCopy("a", buf, ctx); err != nil {
		t.Fatal(err)
	}
	buf[1] = 'X' // the caller's buffer is its own
	first := n.GetString("a").Value()
	if string(first) != "v1" {
		t.Fatalf("a = %q, want v1", first)
	}
	if err := n.PutDirtyStringCopy("a", []byte("v2"), ctx); err != nil {
		t.Fatal(err)
	}
	second := n.GetString("a").Value()
	if string(second) != "v2" || unsafe.SliceData(first) != unsafe.SliceData(second) {
		t.Fatalf("a = %q (same bytes %v): want v2 written into the dirty entry's bytes", second, unsafe.SliceData(first) == unsafe.SliceData(second))
	}
	if err := n.PutDirtyStringCopy("a", []byte("v33"), ctx); err != nil { // another length: new bytes
		t.Fatal(err)
	}
	if got := n.GetString("a").Value(); string(got) != "v33" || string(second) != "v2" {
		t.Fatalf("a = %q, the old bytes %q: want v33 in new bytes", got, second)
	}
	if err := c.Flush("ns"); err != nil {
		t.Fatal(err)
	}
	if err := n.PutDirtyStringCopy("a", []byte("v44"), ctx); err != nil { // flushed: new bytes
		t.Fatal(err)
	}
	if len(handed) != 1 || string(handed[0]) != "v33" {
		t.Fatalf("the flushed value became %q: want v33 kept", handed)
	}
	// A clean entry's bytes came from below and are never written.
	below := []byte("c1")
	if err := n.PutString("b", NewCleanEntry(below)); err != nil {
		t.Fatal(err)
	}
	if err := n.PutDirtyStringCopy("b", []byte("c2"), ctx); err != nil {
		t.Fatal(err)
	}
	if string(below) != "c1" || string(n.GetString("b").Value()) != "c2" {
		t.Fatalf("b = %q, the bytes read from below %q: want c2 and c1 kept", n.GetString("b").Value(), below)
	}
	if want := NewEntry([]byte("v44"), ctx, true).Size() + NewEntry([]byte("c2"), ctx, true).Size() + 2*(1+24); c.SizeBytes() != want {
		t.Errorf("size %d, want %d", c.SizeBytes(), want)
	}
}
