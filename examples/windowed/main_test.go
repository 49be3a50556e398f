package main

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// expectedLines computes, without the library, what the program must print for Views: each
// view lands in the 1-minute window holding its time, unless stream time (the largest time
// seen so far, this view included) has reached the window's end plus 30 s grace (then it is
// late); a window is emitted once stream time reaches its end plus grace.
func expectedLines() []string {
	const size, grace = int64(60_000), int64(30_000)
	type wp struct {
		start int64
		page  string
	}
	counts := map[wp]int64{}
	var late []string
	streamTime := int64(-1)
	for _, v := range Views {
		streamTime = max(streamTime, v.At)
		start := v.At - v.At%size
		if start+size <= streamTime-grace {
			late = append(late, fmt.Sprintf("late\t%s\t%s\t[%d,%d)", v.Page, clock(v.At), start, start+size))
			continue
		}
		counts[wp{start, v.Page}]++
	}
	var out []string
	for k, n := range counts {
		if k.start+size <= streamTime-grace {
			out = append(out, fmt.Sprintf("%s-%s\t%s\t%d", clock(k.start), clock(k.start+size), k.page, n))
		}
	}
	sort.Strings(out)
	return append(out, late...)
}

func TestExpectedLinesByHand(t *testing.T) {
	// The same, worked out by hand from the comment on Views.
	want := []string{
		"00:00:00-00:01:00\t/docs\t1",
		"00:00:00-00:01:00\t/home\t4",
		"00:00:00-00:01:00\t/pricing\t1",
		"00:01:00-00:02:00\t/docs\t4",
		"00:01:00-00:02:00\t/home\t1",
		"00:02:00-00:03:00\t/home\t3",
		"00:02:00-00:03:00\t/pricing\t1",
		fmt.Sprintf("late\t/pricing\t00:00:45\t[%d,%d)", Base, Base+60_000),
	}
	if got := expectedLines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("computed:\n%s\nby hand:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func check(t *testing.T, args ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, args, &out, &errOut); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, errOut.String())
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := expectedLines()
	if len(got) != len(want) {
		t.Fatalf("stdout:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
	for i := range want {
		if strings.HasPrefix(want[i], "late\t") {
			// The late line carries the library's reason text after the window.
			if !strings.HasPrefix(got[i], want[i]+"\t") || len(got[i]) == len(want[i])+1 {
				t.Errorf("line %d: %q, want %q<TAB>reason", i, got[i], want[i])
			}
			continue
		}
		if got[i] != want[i] {
			t.Errorf("line %d: %q, want %q", i, got[i], want[i])
		}
	}
}

func TestEmbeddedWindowedPageViews(t *testing.T) {
	check(t)
}

func TestIntegrationWindowedPageViews(t *testing.T) {
	b := kafkatest.Real(t)
	check(t, "-bootstrap", strings.Join(b.Addrs, ","), "-application-id", kafkatest.Name(t, "pv"),
		"-topic-prefix", kafkatest.Name(t, "pageviews"))
}
