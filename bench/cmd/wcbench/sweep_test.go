package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// -go-configs lists contenders; one listed twice is refused (its second run would find its
// output made and finish at once), also when written differently.
func TestParseGoConfigs(t *testing.T) {
	got, err := parseGoConfigs("1, 1:2,2")
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range got {
		labels = append(labels, c.label())
	}
	if s := strings.Join(labels, ","); s != "go t1,go t1e2,go t2" {
		t.Fatalf("contenders %s", s)
	}
	for _, bad := range []string{"1,1", "2:1, 2:1", "0", "1:0", "x"} {
		if _, err := parseGoConfigs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A run is compared with the mean throughput of the pipe runs beside it: a run of 10 s between
// pipes of 4 s and 6 s (0.25 and 0.1667 runs/s, mean 0.2083) ran at 48% of the pipe.
func TestBesidePipe(t *testing.T) {
	r := result{wall: 10 * time.Second, pipeBefore: 4 * time.Second, pipeAfter: 6 * time.Second}
	f, ok := r.besidePipe()
	if !ok || math.Abs(f-0.48) > 1e-9 {
		t.Fatalf("besidePipe = %v, %v; want 0.48, true", f, ok)
	}
	for _, r := range []result{
		{wall: 10 * time.Second, pipeAfter: 6 * time.Second},  // no pipe before it
		{wall: 10 * time.Second, pipeBefore: 4 * time.Second}, // the pipe after it failed
		{pipeBefore: 4 * time.Second, pipeAfter: 6 * time.Second},
	} {
		if f, ok := r.besidePipe(); ok {
			t.Errorf("%+v has a fraction %v of the pipe beside it", r, f)
		}
	}
}
