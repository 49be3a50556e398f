package systemtest

import (
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	props, err := ParseProperties(strings.NewReader("# written by Kafka's system tests\n" +
		"bootstrap.servers=127.0.0.1:9092\n" +
		"  state.dir = /mnt/streams \n" +
		"! another comment\n\n" +
		"processing.guarantee:exactly_once_v2\n" +
		"flag\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"bootstrap.servers":    "127.0.0.1:9092",
		"state.dir":            "/mnt/streams",
		"processing.guarantee": "exactly_once_v2",
		"flag":                 "",
	}
	if len(props) != len(want) {
		t.Fatalf("got %v, want %v", props, want)
	}
	for k, v := range want {
		if props[k] != v {
			t.Errorf("%s = %q, want %q", k, props[k], v)
		}
	}
	if _, err := ParseProperties(strings.NewReader("a=b\\\n c\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a continuation line: err = %v, want a line 1 error", err)
	}
}

func TestEosProperties(t *testing.T) {
	in := map[string]string{"bootstrap.servers": "b:1", "application.id": "other", "num.stream.threads": "4"}
	out := EosProperties(in)
	if out["application.id"] != EosApplicationID || out["num.stream.threads"] != "1" || out["commit.interval.ms"] != "5000" ||
		out["bootstrap.servers"] != "b:1" || out["statestore.cache.max.bytes"] != "0" {
		t.Errorf("EosProperties = %v", out)
	}
	if in["application.id"] != "other" {
		t.Error("EosProperties changed its argument")
	}
}

func TestSmokeProperties(t *testing.T) {
	out := SmokeProperties(map[string]string{"processing.guarantee": "at_least_once"}, "n1", "/tmp/s")
	if out["application.id"] != SmokeApplicationID || out["processing.guarantee"] != "at_least_once" ||
		out["client.id"] != "SmokeTest-n1" || out["state.dir"] != "/tmp/s" {
		t.Errorf("SmokeProperties = %v", out)
	}
	if SmokeProperties(nil, "n", "d")["processing.guarantee"] != "exactly_once_v2" {
		t.Error("the default guarantee is not exactly_once_v2")
	}
	if got := SmokeProperties(map[string]string{"state.dir": "/mnt/p"}, "n", "/tmp/s")["state.dir"]; got != "/mnt/p" {
		t.Errorf("state.dir = %q: the properties file's should win, as in Java", got)
	}
}
