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

// expectedLines computes the program's output from Script without the library: a map stands
// for the customers table at each point of the script, and every click is paired with every
// earlier impression of the same id at most ClickWindow before it (both ends included).
func expectedLines() []string {
	table := map[string]Customer{}
	var impressions []Impression
	var orders, matches []string
	for _, s := range Script {
		switch s.Topic {
		case "customers":
			if s.Value == nil {
				delete(table, s.Key)
			} else {
				table[s.Key] = s.Value.(Customer)
			}
		case "orders":
			o := s.Value.(Order)
			who := "unknown customer"
			if c, ok := table[o.CustomerID]; ok {
				who = fmt.Sprintf("%s (%s)", c.Name, c.Tier)
			}
			orders = append(orders, fmt.Sprintf("order\t%s\t%s\t%d\t%s", o.ID, o.CustomerID, o.AmountCents, who))
		case "impressions":
			impressions = append(impressions, s.Value.(Impression))
		case "clicks":
			c := s.Value.(Click)
			for _, i := range impressions {
				if d := c.At - i.At; i.ID == s.Key && d >= 0 && d <= ClickWindow.Milliseconds() {
					matches = append(matches, fmt.Sprintf("match\t%s\t%s\t%s\t%d", i.ID, i.Ad, i.User, d/1000))
				}
			}
		}
	}
	sort.Strings(orders)
	sort.Strings(matches)
	return append(orders, matches...)
}

func TestExpectedLinesByHand(t *testing.T) {
	want := []string{
		"order\to1\tc1\t2500\tAda (gold)",
		"order\to2\tc2\t1200\tBrian (silver)",
		"order\to3\tc9\t700\tunknown customer",
		"order\to4\tc2\t9900\tBrian (gold)",
		"order\to5\tc1\t300\tunknown customer",
		"match\ti1\tad-shoes\tu1\t180",
		"match\ti3\tad-shoes\tu3\t600",
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
	want := strings.Join(expectedLines(), "\n") + "\n"
	if out.String() != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestEmbeddedJoins(t *testing.T) {
	check(t)
}

func TestIntegrationJoins(t *testing.T) {
	b := kafkatest.Real(t)
	check(t, "-bootstrap", strings.Join(b.Addrs, ","), "-application-id", kafkatest.Name(t, "join"),
		"-topic-prefix", kafkatest.Name(t, "join"))
}
