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

// check runs the program and compares every user's count with a plain count of the
// generated clicks; users owned by instance B must come back redirected, and both instances
// must serve some.
func check(t *testing.T, args ...string) {
	t.Helper()
	const n = 2000
	args = append(args, "-clicks", fmt.Sprint(n))
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := run(ctx, args, &out, &errOut); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, errOut.String())
	}
	if strings.Contains(errOut.String(), "close:") {
		// Not an error of the example: the counts below are still checked.
		t.Logf("an instance did not close cleanly:\n%s", errOut.String())
	}
	want := map[string]int64{}
	for _, c := range Clicks(n) {
		want[c.User]++
	}
	users := make([]string, 0, len(want))
	for u := range want {
		users = append(users, u)
	}
	sort.Strings(users)
	var wantLines []string
	for _, u := range users {
		wantLines = append(wantLines, fmt.Sprintf("%s\t%d", u, want[u]))
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(wantLines) {
		t.Fatalf("stdout:\n%s\nwant users and counts:\n%s", out.String(), strings.Join(wantLines, "\n"))
	}
	servers := map[string]int{}
	var a string
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 4 || f[0]+"\t"+f[1] != wantLines[i] {
			t.Errorf("line %q, want %q<TAB>served by<TAB>how", l, wantLines[i])
			continue
		}
		servers[f[2]]++
		if f[3] == "direct" {
			if a != "" && a != f[2] {
				t.Errorf("direct answers from two addresses: %s, %s", a, f[2])
			}
			a = f[2]
		}
	}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) == 4 && f[2] != a && f[3] != "redirected from "+a {
			t.Errorf("%s served by %s without a redirect from A (%s)", f[0], f[2], a)
		}
	}
	if len(servers) != 2 {
		t.Errorf("served by %v, want both instances", servers)
	}
}

func TestEmbeddedInteractiveQueries(t *testing.T) {
	check(t)
}

func TestIntegrationInteractiveQueries(t *testing.T) {
	b := kafkatest.Real(t)
	check(t, "-bootstrap", strings.Join(b.Addrs, ","), "-application-id", kafkatest.Name(t, "iq"),
		"-input-topic", kafkatest.Name(t, "clicks"))
}
