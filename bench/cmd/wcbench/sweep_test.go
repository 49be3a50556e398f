package main

import (
	"strings"
	"testing"
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
