package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/chromedp/chromedp"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/changelog"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/store"
)

// chromium finds the headless browser: $KSTREAMS_CHROMIUM, else chromium on the PATH
// (Debian's package, which scripts/test.sh installs). Without one the test skips, except in
// CI, where a missing browser is a failure of the scripts.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("KSTREAMS_CHROMIUM"); p != "" {
		return p
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed, and CI must run the live page's browser test (scripts/test.sh installs Debian's chromium)")
	}
	t.Skip("chromium not found: the live page's browser test needs it (Debian: apt-get install chromium; make test installs it)")
	return ""
}

// holdRestore is a restore listener that holds the first batch's restore: it reports the
// batch and waits for release, so that the page can be read with a restore in its middle.
type holdRestore struct {
	once    sync.Once
	held    chan heldBatch
	release chan struct{}
}

type heldBatch struct {
	tp      changelog.TopicPartition
	last, n int64
}

func (h *holdRestore) OnRestoreStart(changelog.TopicPartition, string, int64, int64) {}
func (h *holdRestore) OnRestoreEnd(changelog.TopicPartition, string, int64)          {}
func (h *holdRestore) OnBatchRestored(tp changelog.TopicPartition, _ string, last, n int64) {
	first := false
	h.once.Do(func() { first = true })
	if first {
		h.held <- heldBatch{tp: tp, last: last, n: n}
		<-h.release
	}
}

// endOffsetOf asks the broker for the end offset of a partition.
func endOffsetOf(t *testing.T, b kafkatest.Broker, topic string, p int32) int64 {
	t.Helper()
	c, err := sarama.NewClient(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	off, err := c.GetOffset(topic, p, sarama.OffsetNewest)
	if err != nil {
		t.Fatal(err)
	}
	return off
}

// pageRow is a row of the rendered task table: its cells' text and its restore bar's width.
type pageRow struct {
	Cells []string
	Bar   string
}

const readTasks = `Array.from(document.querySelectorAll("#tasks tbody tr")).map(function(tr){
 var bar=tr.querySelector(".bar span");
 return {Cells:Array.from(tr.cells).map(function(c){return c.textContent}),Bar:bar?bar.style.width:""}})`

// lookupShown is the rendered answer of a lookup: its values, and all its text (for
// messages).
type lookupShown struct {
	Values []string
	Text   string
}

const lookupAnswer = `({Values:Array.from(document.querySelectorAll("#lk-result pre.value")).map(function(e){return e.textContent}),
 Text:document.getElementById("lk-result").textContent})`

// TestEmbeddedLivePageBrowser opens the live page in headless Chromium against a word count
// on the embedded broker and reads the page as rendered by its script. A first instance counts
// 2000 lines (expected counts from the generator) into a Pebble store and stops; a second
// one on an empty state directory restores the store, held after its first restore batch:
// the page shows that task restoring, its bar at the batch's share of the changelog
// partition's end offset (asked of the broker); released, the page shows the four tasks
// running and the task restored to that end offset; 500 more lines are counted on top of the
// restored counts, the page's thread row showing them processed; the drawing has every node of the topology; and a key typed into the
// lookup form answers the generator's count.
func TestEmbeddedLivePageBrowser(t *testing.T) {
	chrome := chromium(t)
	b := kafkatest.Embedded(t)
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "live")
	createTopics(t, b, 2, input, output)
	want := produceLines(t, b, input, 2000, 26)
	newApp := func(dir string) *kstreams.KafkaStreams {
		app, err := kstreams.New(wordCountTopologyWith(t, input, output, store.Stores.PersistentKeyValueStore("Counts")), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: 100 * time.Millisecond,
			StateDir: dir, Sarama: fastSarama, Consumer: fastConsumer, NumStreamThreads: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	out := readOutput(t, b, output, sarama.ReadUncommitted)
	first := newApp(t.TempDir())
	if err := first.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	out.waitFinal(t, want, time.Minute, first.Err)
	closeApp(t, first)

	hold := &holdRestore{held: make(chan heldBatch, 1), release: make(chan struct{})}
	released := false
	release := func() {
		if !released {
			released = true
			close(hold.release)
		}
	}
	app := newApp(t.TempDir())
	app.SetGlobalStateRestoreListener(hold)
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer closeApp(t, app)
	defer release()
	var held heldBatch
	select {
	case held = <-hold.held:
	case <-time.After(time.Minute):
		t.Fatalf("no restore batch in a minute (app error %v)", app.Err())
	}
	total := endOffsetOf(t, b, held.tp.Topic, held.tp.Partition)
	if held.tp.Topic != appID+"-Counts-changelog" || held.n <= 0 || held.n >= total {
		t.Fatalf("held batch %+v of a changelog partition ending at %d: want a first batch of Counts' changelog short of its end", held, total)
	}
	heldTask := fmt.Sprintf("1_%d", held.tp.Partition)

	mux := http.NewServeMux()
	mux.Handle("/kstreams/", http.StripPrefix("/kstreams", app.LivePage()))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1100),
		chromedp.Flag("disable-dev-shm-usage", true))...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(bctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if err := chromedp.Do(bctx); err != nil { // starts the browser, which lives as long as bctx
		t.Fatal(err)
	}
	run("open the page", chromedp.Navigate(srv.URL+"/kstreams/"))

	// 1. The restore held in its middle.
	var rows []pageRow
	wantBar := fmt.Sprintf("%d%%", (100*held.n+total/2)/total)
	if 100*held.n%total*2 == total { // JavaScript's Math.round rounds halves up, as above
		wantBar = fmt.Sprintf("%d%%", 100*held.n/total+1)
	}
	restoring := func() (pageRow, bool) {
		for _, r := range rows {
			if len(r.Cells) == 11 && r.Cells[0] == heldTask {
				return r, true
			}
		}
		return pageRow{}, false
	}
	rows = poll(t, bctx, "the held task restoring", readTasks, func(got []pageRow) bool {
		rows = got
		r, ok := restoring()
		return ok && r.Cells[1] == "restoring" && strings.HasSuffix(r.Cells[10], fmt.Sprintf(" %d/%d", held.n, total))
	})
	if r, _ := restoring(); r.Bar != wantBar {
		t.Errorf("task %s restoring %d of %d: bar %q, want %q", heldTask, held.n, total, r.Bar, wantBar)
	}

	// 2. Released: every task runs; the held one restored up to its changelog's end.
	release()
	wantTasks := []string{"0_0", "0_1", "1_0", "1_1"}
	rows = poll(t, bctx, "the four tasks running", readTasks, func(got []pageRow) bool {
		rows = got
		var ids []string
		for _, r := range rows {
			if len(r.Cells) == 11 && r.Cells[1] == "active" {
				ids = append(ids, r.Cells[0])
			}
		}
		slices.Sort(ids)
		r, _ := restoring()
		return slices.Equal(ids, wantTasks) && strings.HasSuffix(r.Cells[10], fmt.Sprintf(" %d/%d", total, total)) && r.Bar == "100%"
	})
	poll(t, bctx, "the instance running", `document.getElementById("state").textContent`, func(s string) bool { return s == "RUNNING" })
	// More lines, counted on top of the restored counts: the thread processes each line once
	// in sub-topology 0 and each of its words once in sub-topology 1.
	const more = 500
	wantProcessed := int64(more)
	for w, n := range produceLines(t, b, input, more, 27) {
		want[w] += n
		wantProcessed += n
	}
	out.waitFinal(t, want, time.Minute, app.Err)
	poll(t, bctx, "the records processed", `Array.from(document.querySelectorAll("#threadtab tbody tr")).map(function(tr){return tr.cells[2].textContent})`,
		func(processed []string) bool { return slices.Equal(processed, []string{fmt.Sprint(wantProcessed)}) })

	// 3. The topology drawn: every node's box.
	poll(t, bctx, "the topology drawn", `Array.from(document.querySelectorAll("#topology svg text")).map(function(e){return e.textContent})`, func(names []string) bool {
		for _, n := range []string{"Sub-topology 0", "Sub-topology 1", "Source", "Split", "RepartitionSink", "RepartitionSource", "Count", "Sink"} {
			if !slices.Contains(names, n) {
				return false
			}
		}
		return true
	})

	// 4. A key typed into the form: one task has it, with the generator's count.
	poll(t, bctx, "the store listed", `Array.from(document.querySelectorAll("#lk-store option")).map(function(o){return o.value})`,
		func(stores []string) bool { return slices.Equal(stores, []string{"Counts"}) })
	word := slices.Sorted(func(yield func(string) bool) {
		for w := range want {
			if !yield(w) {
				return
			}
		}
	})[0]
	run("type a key", chromedp.SetValue(chromedp.CSS("#lk-store"), "Counts"), chromedp.SendKeys(chromedp.CSS("#lk-key"), word),
		chromedp.Click(chromedp.CSS("#lk-go")))
	answer := poll(t, bctx, "the lookup's answer", lookupAnswer, func(a lookupShown) bool { return len(a.Values) > 0 })
	values := answer.Values
	if !slices.Equal(values, []string{fmt.Sprint(want[word])}) {
		t.Errorf("lookup of %q shows %q, want [%d] (one task has the key)", word, values, want[word])
	}
	search := poll(t, bctx, "the address", `location.search`, func(string) bool { return true })
	if search != "?store=Counts&key="+word {
		t.Errorf("address after the lookup: %q, want the store and key in it", search)
	}
	if path := os.Getenv("KSTREAMS_LIVEPAGE_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// 5. A key no task has: each running task of the store says so.
	poll(t, bctx, "clear the key", `document.getElementById("lk-key").value=""`, func(v string) bool { return v == "" })
	run("look up an absent key", chromedp.SendKeys(chromedp.CSS("#lk-key"), "absent<&>"),
		chromedp.Click(chromedp.CSS("#lk-go")))
	poll(t, bctx, "the absent key's answer", `Array.from(document.querySelectorAll("#lk-result tbody tr")).map(function(tr){return tr.textContent})`,
		func(absent []string) bool {
			return len(absent) == 2 && strings.Count(strings.Join(absent, "|"), "no value here") == 2
		})
	header := poll(t, bctx, "the key shown", `document.querySelector("#lk-result p b:last-child").textContent`, func(string) bool { return true })
	if header != "absent<&>" {
		t.Errorf("the looked-up key shows as %q, want it as typed", header)
	}
}

// poll evaluates js in the page until ok accepts its value, which it returns, or fails at
// the deadline with the last value.
func poll[T any](t *testing.T, bctx context.Context, what, js string, ok func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(bctx, time.Minute)
		v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			got, _ := json.Marshal(v)
			t.Fatalf("%s: not shown in a minute; the page shows %s", what, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
