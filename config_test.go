package kstreams

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/processor"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{ApplicationID: "app", BootstrapServers: []string{"localhost:9092"}}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		prop string
	}{
		{"no app id", func(c *Config) { c.ApplicationID = "" }, props.ApplicationIDConfig},
		{"bad app id", func(c *Config) { c.ApplicationID = "a b" }, props.ApplicationIDConfig},
		{"no servers", func(c *Config) { c.BootstrapServers = nil }, props.BootstrapServersConfig},
		{"bad server", func(c *Config) { c.BootstrapServers = []string{"localhost"} }, props.BootstrapServersConfig},
		{"threads", func(c *Config) { c.NumStreamThreads = -1 }, props.NumStreamThreadsConfig},
		{"guarantee", func(c *Config) { c.ProcessingGuarantee = "exactly_once" }, props.ProcessingGuaranteeConfig},
		{"commit", func(c *Config) { c.CommitInterval = -time.Second }, props.CommitIntervalMsConfig},
		{"standby", func(c *Config) { c.NumStandbyReplicas = -1 }, props.NumStandbyReplicasConfig},
		{"cache", func(c *Config) { c.StateStoreCacheMaxBytes = Int64(-1) }, props.StateStoreCacheMaxBytesConfig},
		{"server", func(c *Config) { c.ApplicationServer = "host" }, props.ApplicationServerConfig},
		{"protocol", func(c *Config) { c.SecurityProtocol = "TLS" }, props.SecurityProtocolConfig},
		{"mechanism", func(c *Config) { c.SecurityProtocol = "SASL_SSL"; c.SASLMechanism = "GSSAPI" }, props.SASLMechanismConfig},
		{"sasl user", func(c *Config) { c.SecurityProtocol = "SASL_PLAINTEXT" }, props.SASLJAASConfig},
		{"rf", func(c *Config) { c.ReplicationFactor = -2 }, props.ReplicationFactorConfig},
		{"recovery lag", func(c *Config) { c.AcceptableRecoveryLag = Int64(-1) }, props.AcceptableRecoveryLagConfig},
		{"warmups", func(c *Config) { c.MaxWarmupReplicas = -1 }, props.MaxWarmupReplicasConfig},
		{"probing", func(c *Config) { c.ProbingRebalanceInterval = 59 * time.Second }, props.ProbingRebalanceIntervalMsConfig},
		{"task timeout", func(c *Config) { c.TaskTimeout = new(-time.Second) }, props.TaskTimeoutMsConfig},
		{"probing negative", func(c *Config) { c.ProbingRebalanceInterval = -time.Minute }, props.ProbingRebalanceIntervalMsConfig},
		{"tags", func(c *Config) {
			c.ClientTags = map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"}
		}, props.ClientTagPrefix},
		{"tag key", func(c *Config) { c.ClientTags = map[string]string{"a-key-longer-than-20-chars": "v"} }, props.ClientTagPrefix + "a-key-longer-than-20-chars"},
		{"tag value", func(c *Config) { c.ClientTags = map[string]string{"zone": "a-value-that-is-longer-than-30-chars"} }, props.ClientTagPrefix + "zone"},
	} {
		c := ok
		tc.mod(&c)
		err := c.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Property != tc.prop || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: got %v, want a ConfigError for %s", tc.name, err, tc.prop)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	d := ok.withDefaults()
	if d.NumStreamThreads != 1 || d.CommitInterval != 30*time.Second || *d.StateStoreCacheMaxBytes != 10<<20 ||
		d.ProcessingGuarantee != AtLeastOnce || d.ReplicationFactor != -1 || d.BufferedRecordsPerPartition != 1000 ||
		*d.AcceptableRecoveryLag != 10_000 || d.MaxWarmupReplicas != 2 || d.ProbingRebalanceInterval != 10*time.Minute ||
		d.TaskTimeout == nil || *d.TaskTimeout != 5*time.Minute {
		t.Fatalf("defaults: %+v", d)
	}
	lag0 := ok
	lag0.AcceptableRecoveryLag = Int64(0)
	if d := lag0.withDefaults(); *d.AcceptableRecoveryLag != 0 {
		t.Fatalf("acceptable.recovery.lag 0 became %d", *d.AcceptableRecoveryLag)
	}
	ok.ProcessingGuarantee = ExactlyOnceV2
	if d := ok.withDefaults(); d.CommitInterval != 100*time.Millisecond {
		t.Fatalf("EOS commit interval %v, want 100ms", d.CommitInterval)
	}
}

func TestConfigFromProperties(t *testing.T) {
	c, err := ConfigFromProperties(map[string]string{
		"application.id":             "wc",
		"bootstrap.servers":          "a:1, b:2",
		"num.stream.threads":         "3",
		"processing.guarantee":       "exactly_once_v2",
		"commit.interval.ms":         "250",
		"state.dir":                  "/tmp/x",
		"num.standby.replicas":       "1",
		"statestore.cache.max.bytes": "0",
		"max.task.idle.ms":           "20",
		"task.timeout.ms":            "0",
		"windowstore.changelog.additional.retention.ms": "3600000",
		"default.key.serde":                             "org.apache.kafka.common.serialization.Serdes$StringSerde",
		"default.value.serde":                           "org.apache.kafka.common.serialization.Serdes$LongSerde",
		"application.server":                            "localhost:8080",
		"deserialization.exception.handler":             "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler",
		"security.protocol":                             "SASL_PLAINTEXT",
		"sasl.mechanism":                                "SCRAM-SHA-512",
		"sasl.jaas.config":                              `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s\"ecret";`,
		"my.custom":                                     "x",
		"acceptable.recovery.lag":                       "500",
		"max.warmup.replicas":                           "4",
		"probing.rebalance.interval.ms":                 "120000",
		"client.tag.zone":                               "eu-west-1a",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.ApplicationID != "wc" || len(c.BootstrapServers) != 2 || c.BootstrapServers[1] != "b:2" || c.NumStreamThreads != 3 ||
		c.ProcessingGuarantee != ExactlyOnceV2 || c.CommitInterval != 250*time.Millisecond || c.StateDir != "/tmp/x" ||
		c.NumStandbyReplicas != 1 || c.StateStoreCacheMaxBytes == nil || *c.StateStoreCacheMaxBytes != 0 ||
		c.MaxTaskIdle != 20*time.Millisecond || c.TaskTimeout == nil || *c.TaskTimeout != 0 || c.DefaultKeySerde == nil || c.DefaultValueSerde == nil ||
		c.ApplicationServer != "localhost:8080" || c.DeserializationHandler == nil || c.SASLUsername != "alice" ||
		c.SASLPassword != `s"ecret` || c.Properties["my.custom"] != "x" ||
		c.WindowStoreChangelogAdditionalRetention == nil || *c.WindowStoreChangelogAdditionalRetention != time.Hour ||
		c.AcceptableRecoveryLag == nil || *c.AcceptableRecoveryLag != 500 || c.MaxWarmupReplicas != 4 ||
		c.ProbingRebalanceInterval != 2*time.Minute || c.ClientTags["zone"] != "eu-west-1a" || len(c.ClientTags) != 1 {
		t.Fatalf("config: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	sc := c.saramaConfig()
	if !sc.Net.SASL.Enable || sc.Net.SASL.Mechanism != "SCRAM-SHA-512" || sc.Net.SASL.SCRAMClientGeneratorFunc == nil {
		t.Fatalf("sarama SASL: %+v", sc.Net.SASL)
	}
	for prop, v := range map[string]string{
		"num.stream.threads":            "0",
		"commit.interval.ms":            "soon",
		"default.key.serde":             "com.example.MySerde",
		"sasl.jaas.config":              "nothing",
		"ssl.truststore.type":           "JKS",
		"max.warmup.replicas":           "0",
		"acceptable.recovery.lag":       "lots",
		"probing.rebalance.interval.ms": "1000",
	} {
		props := map[string]string{prop: v}
		if prop == "ssl.truststore.type" {
			props["security.protocol"] = "SSL"
		}
		_, err := ConfigFromProperties(props)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Property != prop {
			t.Errorf("%s=%s: got %v", prop, v, err)
		}
	}
}

func TestNewAndStates(t *testing.T) {
	if _, err := New(nil, Config{}); !errors.Is(err, ErrNilTopology) {
		t.Fatalf("nil topology: %v", err)
	}
	topo := processor.NewTopology()
	if _, err := New(topo, Config{ApplicationID: "x"}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("missing servers: %v", err)
	}
	app, err := New(topo, Config{ApplicationID: "x", BootstrapServers: []string{"127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if app.State() != StateCreated || app.State().String() != "CREATED" {
		t.Fatalf("state %v", app.State())
	}
	if err := app.Close(t.Context()); err != nil || app.State() != StateNotRunning {
		t.Fatalf("close: %v %v", err, app.State())
	}
	if err := app.Start(context.Background()); !errors.Is(err, ErrIllegalState) {
		t.Fatalf("start after close: %v", err)
	}
}

// Client properties are read as Java's StreamsConfig reads them: unprefixed, with consumer.,
// with main.consumer. (which wins over consumer. and the unprefixed one) or with producer.
func TestConfigClientProperties(t *testing.T) {
	c, err := ConfigFromProperties(map[string]string{
		"application.id":                        "app",
		"bootstrap.servers":                     "a:1",
		"session.timeout.ms":                    "20000",
		"consumer.session.timeout.ms":           "15000",
		"main.consumer.session.timeout.ms":      "10000",
		"consumer.heartbeat.interval.ms":        "1000",
		"max.poll.interval.ms":                  "60000",
		"main.consumer.auto.offset.reset":       "latest",
		"group.instance.id":                     "pod-1",
		"fetch.max.wait.ms":                     "50",
		"max.partition.fetch.bytes":             "2097152",
		"acks":                                  "1",
		"producer.linger.ms":                    "0",
		"linger.ms":                             "7",
		"batch.size":                            "65536",
		"producer.compression.type":             "lz4",
		"delivery.timeout.ms":                   "60000",
		"max.in.flight.requests.per.connection": "3",
	})
	if err != nil {
		t.Fatal(err)
	}
	co, pr := c.Consumer, c.Producer
	if co.SessionTimeout != 10*time.Second || co.HeartbeatInterval != time.Second || co.MaxPollInterval != time.Minute ||
		co.AutoOffsetReset != "latest" || co.GroupInstanceID != "pod-1" || co.FetchMaxWait != 50*time.Millisecond ||
		co.MaxPartitionFetchBytes != 2<<20 {
		t.Errorf("consumer settings %+v", co)
	}
	if pr.Acks != "1" || pr.Linger != -1 || pr.BatchSize != 65536 || pr.CompressionType != "lz4" ||
		pr.DeliveryTimeout != time.Minute || pr.MaxInFlight != 3 {
		t.Errorf("producer settings %+v", pr)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	pc := c.producerConfig()
	if pc.Linger != -1 || !pc.NoIdempotence || pc.BatchSize != 65536 {
		t.Errorf("producer config %+v", pc)
	}
	// Kafka Streams' defaults: linger.ms 100, and under exactly-once transaction.timeout.ms
	// 10 s with no delivery timeout.
	d := Config{ApplicationID: "a", BootstrapServers: []string{"a:1"}, ProcessingGuarantee: ExactlyOnceV2}
	if pc := d.producerConfig(); pc.Linger != 100*time.Millisecond || pc.TransactionTimeout != 10*time.Second ||
		pc.DeliveryTimeout != eosDeliveryTimeout || pc.NoIdempotence {
		t.Errorf("exactly-once producer defaults %+v", pc)
	}
	for _, tc := range []struct {
		props map[string]string
		prop  string
	}{
		{map[string]string{"main.consumer.session.timeout.ms": "soon"}, "main.consumer.session.timeout.ms"},
		{map[string]string{"heartbeat.interval.ms": "50000"}, props.HeartbeatIntervalMsConfig},
		{map[string]string{"auto.offset.reset": "smallest"}, props.AutoOffsetResetConfig},
		{map[string]string{"acks": "0"}, props.AcksConfig},
		{map[string]string{"acks": "1", "processing.guarantee": "exactly_once_v2"}, props.AcksConfig},
		{map[string]string{"compression.type": "brotli"}, props.CompressionTypeConfig},
		{map[string]string{"max.in.flight.requests.per.connection": "6"}, props.MaxInFlightRequestsConfig},
		{map[string]string{"producer.batch.size": "-1"}, "producer.batch.size"},
	} {
		props := map[string]string{"application.id": "a", "bootstrap.servers": "a:1"}
		for k, v := range tc.props {
			props[k] = v
		}
		c, err := ConfigFromProperties(props)
		if err == nil {
			err = c.Validate()
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Property != tc.prop {
			t.Errorf("%v: got %v, want a ConfigError for %s", tc.props, err, tc.prop)
		}
	}
}

// An empty property value is set, as in Java: an empty ssl.endpoint.identification.algorithm
// turns hostname checks off; an empty number is an error naming the property.
func TestConfigFromPropertiesEmptyValues(t *testing.T) {
	c, err := ConfigFromProperties(map[string]string{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": ""})
	if err != nil {
		t.Fatal(err)
	}
	if c.TLS == nil || !c.TLS.InsecureSkipVerify {
		t.Fatalf("ssl.endpoint.identification.algorithm= left hostname verification on (TLS %+v)", c.TLS)
	}
	c, err = ConfigFromProperties(map[string]string{"security.protocol": "SSL"})
	if err != nil || c.TLS == nil || c.TLS.InsecureSkipVerify {
		t.Fatalf("without the property hostname verification must stay on: %v, %+v", err, c.TLS)
	}
	_, err = ConfigFromProperties(map[string]string{"num.stream.threads": ""})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Property != "num.stream.threads" {
		t.Fatalf("empty num.stream.threads: %v, want a *ConfigError naming it", err)
	}
}

// Java's RocksDB tuning class is refused with a pointer to Config.Pebble, and Config.Pebble is
// validated by New.
func TestConfigPebble(t *testing.T) {
	_, err := ConfigFromProperties(map[string]string{"rocksdb.config.setter": "com.example.BoundedMemoryRocksDBConfig"})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Property != "rocksdb.config.setter" || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("rocksdb.config.setter: %v, want a *ConfigError naming it", err)
	}
	c := Config{ApplicationID: "app", BootstrapServers: []string{"localhost:9092"}}
	c.Pebble.BlockCacheBytes = 128 << 20
	if err := c.Validate(); err != nil {
		t.Fatalf("a 128 MiB block cache: %v", err)
	}
	c.Pebble.MaxMemTableBytes = 1024 // below the 1 MiB floor
	if err := c.Validate(); !errors.As(err, &ce) || ce.Property != "Config.Pebble" {
		t.Fatalf("a 1 KiB memtable cap: %v, want a *ConfigError on Config.Pebble", err)
	}
}
