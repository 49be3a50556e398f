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

// expectedLines computes the program's output without the library: every order priced from the
// catalog, or dead-lettered when its SKU is not in it.
func expectedLines(n int) []string {
	var lines []string
	for i := range n {
		customer, o := MakeOrder(i)
		if unit, ok := Catalog[o.SKU]; ok {
			lines = append(lines, fmt.Sprintf("priced\t%s\t%s\t%s\t%d\t%d", o.ID, customer, o.SKU, o.Qty, unit*o.Qty))
		} else {
			lines = append(lines, fmt.Sprintf("dead\t%s\t%s\t%s", o.ID, customer, o.SKU))
		}
	}
	sort.Strings(lines)
	sort.SliceStable(lines, func(i, j int) bool { return strings.Split(lines[i], "\t")[1] < strings.Split(lines[j], "\t")[1] })
	return lines
}

func check(t *testing.T, args ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, append(args, "-orders", "300"), &out, &errOut); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, errOut.String())
	}
	want := strings.Join(expectedLines(300), "\n") + "\n"
	if out.String() != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s\nstderr:\n%s", out.String(), want, errOut.String())
	}
	t.Log(strings.TrimSpace(errOut.String()))
}

func TestEmbeddedEnrich(t *testing.T) { check(t) }

func TestIntegrationEnrich(t *testing.T) {
	b := kafkatest.Real(t)
	check(t, "-bootstrap", strings.Join(b.Addrs, ","), "-application-id", kafkatest.Name(t, "enrich"),
		"-topic-prefix", kafkatest.Name(t, "enrich"))
}
