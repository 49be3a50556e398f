package kstreams

import (
	"github.com/kstreams-go/kstreams/internal/javaclass"
	"strconv"
	"strings"
	"time"

	"github.com/kstreams-go/kstreams/internal/props"
)

// ConfigFromProperties builds a Config from Java properties, named as in a Java application's
// properties file (each Config field names its property: application.id, bootstrap.servers, ...).
// Java class names are accepted for serdes (Serdes$StringSerde, ...), timestamp extractors
// and the LogAndContinue / LogAndFail handlers. Unknown properties are kept in Properties, and
// New logs a warning naming each with the known property it likely misspells
// (UnknownProperties: "bootstrap.server", did you mean "bootstrap.servers"), as Java warns of
// configs supplied but not used.
// Errors: *ConfigError naming the property. The result is not validated: New does that.
func ConfigFromProperties(properties map[string]string) (Config, error) {
	c := Config{Properties: map[string]string{}}
	for k, v := range properties {
		c.Properties[k] = v
	}
	// get returns a property's value and whether it is set: an empty value is set (Java's
	// ssl.endpoint.identification.algorithm= turns hostname checks off; an empty number is an
	// error, as in Java).
	get := func(k string) (string, bool) {
		v, ok := properties[k]
		return strings.TrimSpace(v), ok
	}
	atoi := func(k string) (int64, bool, error) {
		v, ok := get(k)
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false, &ConfigError{Property: k, Value: v, Reason: "not an integer"}
		}
		return n, true, nil
	}
	c.ApplicationID, _ = get(props.ApplicationIDConfig)
	if v, ok := get(props.BootstrapServersConfig); ok {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.BootstrapServers = append(c.BootstrapServers, s)
			}
		}
	}
	c.ClientID, _ = get(props.ClientIDConfig)
	if v, ok := get(props.ProcessingGuaranteeConfig); ok {
		c.ProcessingGuarantee = ProcessingGuarantee(v)
	}
	c.StateDir, _ = get(props.StateDirConfig)
	c.ApplicationServer, _ = get(props.ApplicationServerConfig)
	c.DeadLetterQueueTopic, _ = get(props.DeadLetterQueueTopicConfig)
	c.MetricsRecordingLevel, _ = get(props.MetricsRecordingLevelConfig)
	for _, f := range []struct {
		k   string
		set func(int64)
	}{
		{props.NumStreamThreadsConfig, func(n int64) { c.NumStreamThreads = int(n) }},
		{props.NumTaskExecutorsConfig, func(n int64) { c.NumTaskExecutors = int(n) }},
		{props.CommitIntervalMsConfig, func(n int64) { c.CommitInterval = time.Duration(n) * time.Millisecond }},
		{props.NumStandbyReplicasConfig, func(n int64) { c.NumStandbyReplicas = int(n) }},
		{props.AcceptableRecoveryLagConfig, func(n int64) { c.AcceptableRecoveryLag = Int64(n) }},
		{props.MaxWarmupReplicasConfig, func(n int64) { c.MaxWarmupReplicas = int(n) }},
		{props.ProbingRebalanceIntervalMsConfig, func(n int64) { c.ProbingRebalanceInterval = time.Duration(n) * time.Millisecond }},
		{props.StateStoreCacheMaxBytesConfig, func(n int64) { c.StateStoreCacheMaxBytes = Int64(n) }},
		{props.MaxTaskIdleMsConfig, func(n int64) { c.MaxTaskIdle = time.Duration(n) * time.Millisecond }},
		{props.TaskTimeoutMsConfig, func(n int64) {
			d := time.Duration(n) * time.Millisecond
			c.TaskTimeout = &d
		}},
		{props.BufferedRecordsPerPartitionConfig, func(n int64) { c.BufferedRecordsPerPartition = int(n) }},
		{props.ReplicationFactorConfig, func(n int64) { c.ReplicationFactor = int16(n) }},
		{props.WindowStoreChangelogAdditionalRetentionMsConfig, func(n int64) {
			d := time.Duration(n) * time.Millisecond
			c.WindowStoreChangelogAdditionalRetention = &d
		}},
	} {
		n, ok, err := atoi(f.k)
		if err != nil {
			return c, err
		}
		if ok {
			if (f.k == props.NumStreamThreadsConfig || f.k == props.MaxWarmupReplicasConfig) && n < 1 {
				return c, &ConfigError{Property: f.k, Value: strconv.FormatInt(n, 10), Reason: "must be at least 1"}
			}
			if f.k == props.ProbingRebalanceIntervalMsConfig && n < minProbingRebalanceInterval.Milliseconds() {
				return c, &ConfigError{Property: f.k, Value: strconv.FormatInt(n, 10), Reason: "must be at least 60000 (1 min)"}
			}
			if f.k == props.CommitIntervalMsConfig && n == 0 {
				// commit as often as possible
				c.CommitInterval = time.Nanosecond
				continue
			}
			f.set(n)
		}
	}
	for k := range properties {
		if tag, ok := strings.CutPrefix(k, props.ClientTagPrefix); ok {
			if c.ClientTags == nil {
				c.ClientTags = map[string]string{}
			}
			c.ClientTags[tag], _ = get(k)
		}
	}
	if err := clientFromProperties(&c, get); err != nil {
		return c, err
	}
	var err error
	if v, ok := get(props.DefaultKeySerdeConfig); ok {
		if c.DefaultKeySerde, err = javaclass.Serde(v); err != nil {
			return c, &ConfigError{Property: props.DefaultKeySerdeConfig, Value: v, Reason: err.Error()}
		}
	}
	if v, ok := get(props.DefaultValueSerdeConfig); ok {
		if c.DefaultValueSerde, err = javaclass.Serde(v); err != nil {
			return c, &ConfigError{Property: props.DefaultValueSerdeConfig, Value: v, Reason: err.Error()}
		}
	}
	if v, ok := get(props.DefaultTimestampExtractorConfig); ok {
		if c.DefaultTimestampExtractor, err = javaclass.TimestampExtractor(v); err != nil {
			return c, &ConfigError{Property: props.DefaultTimestampExtractorConfig, Value: v, Reason: err.Error()}
		}
	}
	const errs = "org.apache.kafka.streams.errors."
	if v, ok := get(props.DeserializationExceptionHandlerConfig); ok {
		switch v {
		case errs + "LogAndFailExceptionHandler":
		case errs + "LogAndContinueExceptionHandler":
			c.DeserializationHandler = LogAndContinueDeserialization
		default:
			return c, &ConfigError{Property: props.DeserializationExceptionHandlerConfig, Value: v, Reason: "unknown handler class"}
		}
	}
	if v, ok := get(props.ProcessingExceptionHandlerConfig); ok {
		switch v {
		case errs + "LogAndFailProcessingExceptionHandler":
		case errs + "LogAndContinueProcessingExceptionHandler":
			c.ProcessingHandler = LogAndContinueProcessing
		default:
			return c, &ConfigError{Property: props.ProcessingExceptionHandlerConfig, Value: v, Reason: "unknown handler class"}
		}
	}
	if v, ok := get(props.ProductionExceptionHandlerConfig); ok {
		switch v {
		case errs + "DefaultProductionExceptionHandler":
		default:
			return c, &ConfigError{Property: props.ProductionExceptionHandlerConfig, Value: v, Reason: "unknown handler class"}
		}
	}
	c.SecurityProtocol, _ = get(props.SecurityProtocolConfig)
	c.SASLMechanism, _ = get(props.SASLMechanismConfig)
	if strings.EqualFold(c.SASLMechanism, "OAUTHBEARER") {
		if err := oauthFromProperties(&c, get); err != nil {
			return c, err
		}
	} else if v, ok := get(props.SASLJAASConfig); ok {
		for _, m := range jaasOption.FindAllStringSubmatch(v, -1) {
			val := strings.ReplaceAll(m[2], `\"`, `"`)
			switch m[1] {
			case "username":
				c.SASLUsername = val
			case "password":
				c.SASLPassword = val
			}
		}
		if c.SASLUsername == "" {
			return c, &ConfigError{Property: props.SASLJAASConfig, Value: "(hidden)", Reason: `no username="..." option`}
		}
	}
	if p := strings.ToUpper(c.SecurityProtocol); p == "SSL" || p == "SASL_SSL" {
		if c.TLS, err = tlsFromProperties(get); err != nil {
			return c, err
		}
	}
	if _, ok := get(props.RocksDBConfigSetterConfig); ok {
		return c, &ConfigError{Property: props.RocksDBConfigSetterConfig, Reason: "state stores run on Pebble, not RocksDB: " +
			"tune them with Config.Pebble (store.PebbleOptions: block cache, memtable budget, sync)"}
	}
	if v, ok := get(props.GroupProtocolConfig); ok {
		c.GroupProtocol = GroupProtocol(v)
	}
	return c, nil
}
