package kstreams

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/processor"
)

// group.protocol: classic (the default, any case) and streams (KIP-1071, any case) are
// accepted; consumer and anything else are refused as Java refuses them (a ConfigException
// naming group.protocol).
func TestGroupProtocolConfig(t *testing.T) {
	base := map[string]string{"application.id": "a", "bootstrap.servers": "127.0.0.1:1"}
	for _, c := range []struct {
		value  string
		reason string // "" when accepted
	}{
		{"", ""},
		{"classic", ""},
		{"CLASSIC", ""},
		{"streams", ""},
		{"Streams", ""},
		{"consumer", "must be classic or streams"},
		{"eager", "must be classic or streams"},
	} {
		pm := map[string]string{}
		for k, v := range base {
			pm[k] = v
		}
		if c.value != "" {
			pm["group.protocol"] = c.value
		}
		cfg, err := ConfigFromProperties(pm)
		if err != nil {
			t.Fatalf("%q: ConfigFromProperties: %v", c.value, err)
		}
		if string(cfg.GroupProtocol) != c.value {
			t.Errorf("%q: GroupProtocol %q", c.value, cfg.GroupProtocol)
		}
		app, err := New(processor.NewTopology(), cfg)
		if c.reason == "" {
			if err != nil {
				t.Errorf("%q: New: %v", c.value, err)
				continue
			}
			_ = app.Close(t.Context())
			continue
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) || ce.Property != "group.protocol" ||
			ce.Value != c.value || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%q: New = %v, want a ConfigError for group.protocol saying %q", c.value, err, c.reason)
		}
	}
	// The Go field takes the same values.
	cfg := Config{ApplicationID: "a", BootstrapServers: []string{"127.0.0.1:1"}, GroupProtocol: GroupProtocolStreams}
	if err := cfg.Validate(); err != nil {
		t.Errorf("GroupProtocolStreams: Validate = %v", err)
	}
	cfg.GroupProtocol = GroupProtocolClassic
	if err := cfg.Validate(); err != nil {
		t.Errorf("GroupProtocolClassic: Validate = %v", err)
	}
}

// On group.protocol=streams the standby count and the session and heartbeat timings are the
// group's configs: New warns about each one the instance sets, naming it, and about none on
// the classic protocol.
func TestStreamsProtocolIgnoredSettingsWarn(t *testing.T) {
	for _, c := range []struct {
		protocol GroupProtocol
		want     []string
	}{
		{GroupProtocolStreams, []string{"num.standby.replicas", "session.timeout.ms", "heartbeat.interval.ms"}},
		{GroupProtocolClassic, nil},
	} {
		var buf strings.Builder
		cfg := Config{ApplicationID: "a", BootstrapServers: []string{"127.0.0.1:1"}, GroupProtocol: c.protocol,
			NumStandbyReplicas: 1, Consumer: ConsumerConfig{SessionTimeout: 10 * time.Second, HeartbeatInterval: time.Second},
			StateDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&buf, nil))}
		app, err := New(processor.NewTopology(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		_ = app.Close(t.Context())
		var got []string
		for _, l := range strings.Split(buf.String(), "\n") {
			if strings.Contains(l, "group.protocol=streams") {
				got = append(got, l[strings.Index(l, "property=")+len("property="):])
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: warnings for %v, want %v\n%s", c.protocol, got, c.want, buf.String())
		}
	}
}

// A pattern source on group.protocol=streams is refused by New, as Java 4.4's KafkaStreams
// refuses it ("Pattern subscriptions are not supported with the STREAMS protocol"; Apache
// Kafka 4.4's coordinator answers SourceTopicRegex with INVALID_REQUEST, see streamsgroup's
// TestIntegrationSourceTopicRegexRefused); the same topology is accepted on the classic
// protocol, and a topology naming its topics on the streams protocol.
func TestGroupProtocolStreamsRefusesPatternSources(t *testing.T) {
	pattern := processor.NewTopology()
	if err := pattern.AddSourcePattern("Lines", "lines-.*"); err != nil {
		t.Fatal(err)
	}
	named := processor.NewTopology()
	if err := named.AddSource("Lines", []string{"lines-a"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		topo    *processor.Topology
		p       GroupProtocol
		refused bool
	}{{pattern, GroupProtocolStreams, true}, {pattern, "STREAMS", true}, {pattern, GroupProtocolClassic, false}, {named, GroupProtocolStreams, false}} {
		cfg := Config{ApplicationID: "a", BootstrapServers: []string{"127.0.0.1:1"}, GroupProtocol: c.p, StateDir: t.TempDir()}
		app, err := New(c.topo, cfg)
		if !c.refused {
			if err != nil {
				t.Errorf("%s: New: %v", c.p, err)
				continue
			}
			_ = app.Close(t.Context())
			continue
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) || ce.Property != "group.protocol" ||
			!strings.Contains(err.Error(), "lines-.*") || !strings.Contains(err.Error(), "source Lines") ||
			!strings.Contains(err.Error(), "not supported with the streams protocol") {
			t.Errorf("%s: New = %v, want a ConfigError for group.protocol naming source Lines and its pattern", c.p, err)
		}
	}
}
