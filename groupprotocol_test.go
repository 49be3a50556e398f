package kstreams

import (
	"errors"
	"strings"
	"testing"

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
		props := map[string]string{}
		for k, v := range base {
			props[k] = v
		}
		if c.value != "" {
			props[GroupProtocolConfig] = c.value
		}
		cfg, err := ConfigFromProperties(props)
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
		if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) || ce.Property != GroupProtocolConfig ||
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
