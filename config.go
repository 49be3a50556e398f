package kstreams

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kstreams-go/kstreams/internal/kafka/oauthbearer"
	"github.com/kstreams-go/kstreams/internal/props"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// ProcessingGuarantee is processing.guarantee. Java: StreamsConfig.AT_LEAST_ONCE /
// EXACTLY_ONCE_V2.
type ProcessingGuarantee string

const (
	// AtLeastOnce is "at_least_once" (the default): offsets are committed after the output is
	// acknowledged; a failure may reprocess records.
	AtLeastOnce ProcessingGuarantee = "at_least_once"
	// ExactlyOnceV2 is "exactly_once_v2" (KIP-447): output, changelog writes and input offsets
	// of a commit interval land atomically in one transaction per stream thread.
	ExactlyOnceV2 ProcessingGuarantee = "exactly_once_v2"
)

// Defaults of the configuration, as Java's StreamsConfig.
const (
	// defaultCommitInterval is commit.interval.ms's default under at-least-once (30 000 ms).
	defaultCommitInterval = 30 * time.Second
	// defaultEOSCommitInterval is commit.interval.ms's default under exactly-once (100 ms).
	defaultEOSCommitInterval = 100 * time.Millisecond
	// defaultCacheMaxBytes is statestore.cache.max.bytes's default (10 MiB).
	defaultCacheMaxBytes int64 = 10 * 1024 * 1024
	// defaultTaskTimeout is task.timeout.ms's default (300 000 ms).
	defaultTaskTimeout = 5 * time.Minute
	// defaultBufferedRecordsPerPartition is buffered.records.per.partition's default (1000).
	defaultBufferedRecordsPerPartition = 1000
	// defaultAcceptableRecoveryLag is acceptable.recovery.lag's default (10 000 offsets).
	defaultAcceptableRecoveryLag int64 = 10_000
	// defaultMaxWarmupReplicas is max.warmup.replicas's default (2).
	defaultMaxWarmupReplicas = 2
	// defaultProbingRebalanceInterval is probing.rebalance.interval.ms's default (10 min).
	defaultProbingRebalanceInterval = 10 * time.Minute
	// minProbingRebalanceInterval is the least probing.rebalance.interval.ms Java accepts (1 min).
	minProbingRebalanceInterval = time.Minute
	// maxClientTags, MaxClientTagKeyLength and MaxClientTagValueLength bound the client tags
	// (Java: StreamsConfig.MAX_RACK_AWARE_ASSIGNMENT_TAG_LIST_SIZE, ..._KEY_LENGTH,
	// ..._VALUE_LENGTH).
	maxClientTags           = 5
	maxClientTagKeyLength   = 20
	maxClientTagValueLength = 30
)

// ConfigError is an invalid configuration value; Property is the Java property name.
// Java: ConfigException.
type ConfigError struct {
	// Property is the Java property name, e.g. "application.id".
	Property string
	// Value is the offending value as text ("" when missing).
	Value string
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *ConfigError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("kstreams: invalid configuration %s: %s", e.Property, e.Reason)
	}
	return fmt.Sprintf("kstreams: invalid value %q for configuration %s: %s", e.Value, e.Property, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// ErrInvalidConfig is wrapped by every *ConfigError.
var ErrInvalidConfig = errors.New("kstreams: invalid configuration")

// DeserializationHandler decides about an input record whose key or value fails to
// deserialize: Continue skips it (and sends it to the dead-letter topic when one is set), Fail
// stops the thread. Java: DeserializationExceptionHandler.
type DeserializationHandler func(topic string, partition int32, offset int64, err error) HandlerResponse

// ProcessingHandler decides about an error returned (or a panic raised) by a processor or
// punctuator at node: Continue drops the record there (and sends the input record to the
// dead-letter topic when one is set), Fail stops the thread.
// Java: ProcessingExceptionHandler (KIP-1033).
type ProcessingHandler func(node string, err error) HandlerResponse

// ProductionHandler decides about an output record a sink could not serialize, and about one
// the producer could not send (after its retries): Continue drops it (and sends the input
// record whose processing produced it to the dead-letter topic when one is set), Fail stops
// the thread. Under exactly-once a failed send always aborts the transaction (a
// serialization failure can still continue, its dead letter inside the transaction).
// Java: ProductionExceptionHandler handle and handleSerializationError (KIP-399).
type ProductionHandler func(topic string, err error) HandlerResponse

// HandlerResponse is an exception handler's answer.
type HandlerResponse int

const (
	// Fail stops processing with the error (Java: FAIL).
	Fail HandlerResponse = iota
	// Continue skips the record and goes on (Java: CONTINUE).
	Continue
)

// LogAndContinueDeserialization is a DeserializationHandler that always continues: the record
// is skipped (the stream thread logs it at WARN, counts it in dropped records and sends it to
// the dead-letter topic when one is set). Set it as Config.DeserializationHandler. Java:
// LogAndContinueExceptionHandler.
func LogAndContinueDeserialization(topic string, partition int32, offset int64, err error) HandlerResponse {
	return Continue
}

// LogAndContinueProcessing is a ProcessingHandler that always continues: the record is
// dropped at the failing node (logged at WARN and counted in dropped records). Set it as
// Config.ProcessingHandler. Java: LogAndContinueProcessingExceptionHandler (KIP-1033).
func LogAndContinueProcessing(node string, err error) HandlerResponse { return Continue }

// Config configures an application instance. Zero values mean the Java default given per
// field. Java: StreamsConfig.
type Config struct {
	// ApplicationID is application.id: the consumer group id, the prefix of internal topics
	// and of transactional ids. Required; letters, digits, '.', '_' and '-'.
	ApplicationID string
	// BootstrapServers is bootstrap.servers: host:port pairs. Required.
	BootstrapServers []string
	// ClientID is client.id, the prefix of the clients' ids; default "<application.id>-<process id>".
	ClientID string
	// NumStreamThreads is num.stream.threads; default 1. Each stream thread is a group member
	// with its own producer, its own share of the tasks and its own commits, as in Java.
	NumStreamThreads int
	// NumTaskExecutors is how many goroutines of each stream thread process its tasks in
	// parallel (property num.task.executors, a kstreams-go extension): a task is processed by
	// one executor at a time, its punctuators run there, and the thread polls, commits and
	// rebalances between two rounds of processing, with every task handed back (a commit is a
	// barrier); a commit's record-cache and store flushes run on the executors too, one task
	// per goroutine. Default 0: GOMAXPROCS divided by NumStreamThreads, at least 1; 1 processes
	// the thread's tasks one after another, as Java's classic stream thread. Measured on 2 CPUs
	// with the broker on them (the word count, 1 000 000 lines, two runs of 3 interleaved
	// rounds), a second executor on one thread gave 11-13% more throughput under at-least-once
	// and 2-10% under exactly-once (medians), for 3-14% more CPU per record. With more than one,
	// the exception handlers, a StreamPartitioner and the processors downstream of a cached store
	// (which forward its flushed records at commit) may be called from several goroutines at
	// once, for different tasks. Must not be negative. Java counterpart: the processing threads of
	// TaskManager's TaskExecutors (internal flag __processing.threads.enabled__, Kafka 3.7+).
	NumTaskExecutors int
	// ProcessingGuarantee is processing.guarantee; default AtLeastOnce.
	ProcessingGuarantee ProcessingGuarantee
	// CommitInterval is commit.interval.ms; default 30 s, 100 ms under exactly-once. Must not
	// be negative.
	CommitInterval time.Duration
	// StateDir is state.dir; default "<os.TempDir()>/kafka-streams".
	StateDir string
	// NumStandbyReplicas is num.standby.replicas; default 0. Each task gets that many standby
	// copies on other instances (other process ids), kept current from the changelogs, so a
	// fail-over restores only the tail.
	NumStandbyReplicas int
	// AcceptableRecoveryLag is acceptable.recovery.lag, in offsets summed over a task's
	// changelog partitions: an instance whose state of a stateful task lags the changelogs' end
	// by at most this much counts as caught up and may take the task over as active at once;
	// a task's balanced owner that is further behind first gets it as a warm-up replica (a
	// standby) while the caught-up owner keeps it, until a probing rebalance finds it caught up.
	// Used when this instance leads the group. nil means 10 000; must not be negative
	// (math.MaxInt64 counts every instance caught up). Java: StreamsConfig.ACCEPTABLE_RECOVERY_LAG_CONFIG (KIP-441).
	AcceptableRecoveryLag *int64
	// MaxWarmupReplicas is max.warmup.replicas: how many warm-up replicas one rebalance may
	// assign beyond num.standby.replicas. 0 means the default, 2; otherwise at least 1.
	// Java: StreamsConfig.MAX_WARMUP_REPLICAS_CONFIG (KIP-441).
	MaxWarmupReplicas int
	// ProbingRebalanceInterval is probing.rebalance.interval.ms (ms precision): while warm-up
	// replicas catch up, the group leader's instance triggers a rebalance this long after the
	// assignment, to move the tasks whose warm-ups caught up. 0 means the default, 10 min;
	// otherwise at least 1 min. Java: StreamsConfig.PROBING_REBALANCE_INTERVAL_MS_CONFIG (KIP-441).
	ProbingRebalanceInterval time.Duration
	// ClientTags are the client.tag.<key>=<value> properties, sent in the subscription so that
	// a Java group leader with rack.aware.assignment.tags can spread standbys over them
	// (KIP-708; this library's own assignor does not use them). At most 5, keys of at most 20
	// and values of at most 30 characters. Default none.
	ClientTags map[string]string
	// StateStoreCacheMaxBytes is statestore.cache.max.bytes in bytes; nil means 10 MiB.
	StateStoreCacheMaxBytes *int64
	// MaxTaskIdle is max.task.idle.ms (ms precision); default 0. A task reading several
	// partitions (joins, merges) processes in timestamp order across them: while one of them has
	// nothing buffered it waits until the partition's records on the broker are fetched, and when
	// the partition is caught up (fetched lag 0) it waits MaxTaskIdle more for new records before
	// processing the others anyway ("enforced processing", counted in
	// kstreams_enforced_processing_total). 0 waits only for records already on the broker; a
	// negative value (Java: -1) disables waiting: buffered records are processed at once, maybe
	// out of timestamp order. Java: StreamsConfig.MAX_TASK_IDLE_MS_CONFIG.
	MaxTaskIdle time.Duration
	// TaskTimeout is task.timeout.ms (ms precision): how long a stream thread retries a failure
	// that keeps its tasks from making progress but that time may cure, before it fails with a
	// *TaskTimeoutError (errors.Is ErrTaskTimeout) naming the topic, which goes to the
	// uncaught-exception handler (SetUncaughtExceptionHandler; by default the instance moves to
	// StateError and Err returns it). Such failures are a sink's output topic or partition that
	// does not exist, a partition without leader, and records not acknowledged within
	// delivery.timeout.ms; each retry closes the tasks without commit, waits a backoff (100 ms,
	// doubling up to 5 s) and rejoins the group, so the tasks reprocess from the last commit. The
	// time counts from the first such failure after the last successful commit. It also bounds
	// how long the committed offsets of newly assigned input partitions may stay unreadable
	// (UNSTABLE_OFFSET_COMMIT: a transaction that commits offsets for them stays open, as a
	// hanging transaction does); meanwhile the thread polls and processes its other tasks, and
	// the error then names the partitions. nil means
	// 5 min (Java's 300000); 0 fails at the first such failure; must not be negative.
	// Java: StreamsConfig.TASK_TIMEOUT_MS_CONFIG (KIP-572).
	TaskTimeout *time.Duration
	// BufferedRecordsPerPartition is buffered.records.per.partition; default 1000. Fetching a
	// partition pauses while this many of its records are buffered.
	BufferedRecordsPerPartition int
	// DefaultKeySerde and DefaultValueSerde are default.key.serde / default.value.serde, used
	// by sources, sinks and stores without their own serde; nil means none (an error when needed).
	DefaultKeySerde, DefaultValueSerde serde.Serde[any]
	// DefaultTimestampExtractor is default.timestamp.extractor; nil means
	// processor.FailOnInvalidTimestamp.
	DefaultTimestampExtractor processor.TimestampExtractor
	// ApplicationServer is application.server ("host:port") for interactive-query routing;
	// default "".
	ApplicationServer string
	// ReplicationFactor is replication.factor of internal topics; default -1 (broker default).
	ReplicationFactor int16
	// WindowStoreChangelogAdditionalRetention is windowstore.changelog.additional.retention.ms
	// (ms precision): added to a window or session store's retention period for the
	// retention.ms of its changelog topic (cleanup.policy=compact,delete) when the store's log
	// config does not set retention.ms; nil means 24 h (Java's default 86400000). Must not be
	// negative.
	WindowStoreChangelogAdditionalRetention *time.Duration
	// DeserializationHandler is deserialization.exception.handler; nil fails
	// (LogAndFailExceptionHandler).
	DeserializationHandler DeserializationHandler
	// ProcessingHandler is processing.exception.handler; nil fails.
	ProcessingHandler ProcessingHandler
	// ProductionHandler is production.exception.handler; nil fails
	// (DefaultProductionExceptionHandler).
	ProductionHandler ProductionHandler
	// DeadLetterQueueTopic is errors.dead.letter.queue.topic.name (KIP-1034): when a
	// deserialization, processing or production handler continues, the input record is
	// written there (its raw key, value and headers, with headers __streams.errors.exception,
	// .message, .stacktrace, .topic, .partition and .offset naming the cause and where the
	// record came from; key and value null for a failing punctuation) by the task's producer,
	// so under exactly_once_v2 in the task's transaction (once, with the offsets that skip the
	// record); default "" (none).
	DeadLetterQueueTopic string

	// Security: security.protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL); default PLAINTEXT.
	SecurityProtocol string
	// SASLMechanism is sasl.mechanism: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER;
	// default PLAIN.
	SASLMechanism string
	// SASLUsername and SASLPassword are the credentials of PLAIN and SCRAM (from
	// sasl.jaas.config's username and password options).
	SASLUsername, SASLPassword string
	// SASLOAuthBearerTokenProvider supplies the access tokens of OAUTHBEARER (required with
	// it; see OAuthBearerTokenProvider for when it is called, refresh and errors). Java:
	// sasl.login.callback.handler.class; ConfigFromProperties sets it from
	// sasl.oauthbearer.token.endpoint.url and sasl.jaas.config as Java's OAuthBearerLoginModule
	// reads them.
	SASLOAuthBearerTokenProvider OAuthBearerTokenProvider
	// TLS is the TLS configuration for SSL and SASL_SSL; nil means system roots (built from the
	// ssl.* PEM properties by ConfigFromProperties).
	TLS *tls.Config

	// Consumer holds the stream threads' group and fetch settings (session.timeout.ms,
	// max.poll.interval.ms, auto.offset.reset, ...).
	Consumer ConsumerConfig
	// Producer holds the stream threads' producer settings (acks, linger.ms, batch.size, ...).
	Producer ProducerConfig

	// Properties are all Java properties (including unknown ones), handed to processors as
	// their AppConfigs.
	Properties map[string]string
	// Logger receives the instance's logs; nil means slog.Default().
	Logger *slog.Logger
	// Registry receives the Prometheus metrics; nil means they are not registered.
	// KafkaStreams.Metrics reads the same figures in process either way.
	Registry prometheus.Registerer
	// MetricsRecordingLevel is metrics.recording.level: "INFO" (default; client, thread and
	// the cheap task figures), "DEBUG" (adds the task-level families and the state stores'
	// call latencies, which read the clock around every store call) or "TRACE" (as DEBUG).
	// Case-insensitive. Java: the same property and levels.
	MetricsRecordingLevel string
	// Sarama, when set, adjusts each sarama configuration the instance creates (after all
	// settings above are applied): its Net (TLS, SASL, dial, read and write timeouts),
	// Metadata and Version sections apply to every connection. The stream threads consume and
	// produce with the library's own batch-level client on sarama's protocol layer, so the
	// Consumer and Producer sections do not apply to them: set Consumer and Producer above.
	Sarama func(*sarama.Config)

	// Pebble tunes the Pebble engine every persistent store of the instance runs on (one block
	// cache and one memtable budget shared by all of them; see store.PebbleOptions for each
	// setting and its default). The zero value is the defaults. Java users tune RocksDB with
	// rocksdb.config.setter instead, which ConfigFromProperties refuses with a pointer here.
	Pebble store.PebbleOptions

	// GroupProtocol is group.protocol, the rebalance protocol of the stream threads' group:
	// GroupProtocolClassic (the default: JoinGroup/SyncGroup with the streams assignor) or
	// GroupProtocolStreams (KIP-1071: the broker assigns the tasks, StreamsGroupHeartbeat),
	// case-insensitive. On GroupProtocolStreams each stream thread is a member of a streams
	// group: the group coordinator assigns the tasks (active, standby, warm-up;
	// num.standby.replicas and acceptable.recovery.lag are then the group's configs,
	// group.streams.num.standby.replicas and friends, set on the broker, or the group
	// configs streams.num.standby.replicas, streams.session.timeout.ms and
	// streams.heartbeat.interval.ms, so Consumer.SessionTimeout and HeartbeatInterval do not
	// apply either; Consumer.MaxPollInterval does); the instance
	// creates no internal topics: it describes them (partition counts, configs, replication
	// factor) with its topology and the group coordinator creates the missing ones, as for
	// Java 4.4 (existing ones are still checked at start). Every
	// instance of an application must use the same protocol; an instance started against a
	// group of the other protocol fails at once (Run returns an error naming the group).
	// "consumer" is refused, as Java refuses it for Kafka Streams. A topology with a pattern
	// source is refused on GroupProtocolStreams (New returns a *ConfigError), as Java 4.4
	// refuses it: the group coordinator takes no source topic patterns yet. Java:
	// StreamsConfig.GROUP_PROTOCOL_CONFIG.
	GroupProtocol GroupProtocol

	// tokens is the OAUTHBEARER token cache every connection of the instance shares (set by
	// withDefaults).
	tokens *oauthbearer.Source
}

// GroupProtocol is group.protocol's value. Java: org.apache.kafka.streams.GroupProtocol.
type GroupProtocol string

const (
	// GroupProtocolClassic is "classic", the default: the classic group protocol with the
	// streams partition assignor run by the group's leader.
	GroupProtocolClassic GroupProtocol = "classic"
	// GroupProtocolStreams is "streams", the streams rebalance protocol (KIP-1071): the group
	// coordinator assigns the tasks. Needs Apache Kafka 4.1 or later with the protocol enabled
	// (group.coordinator.rebalance.protocols includes streams, as Apache Kafka 4.4 has by default).
	GroupProtocolStreams GroupProtocol = "streams"
)

// ignoredOnStreamsProtocol names the settings c sets that a streams group (KIP-1071) takes
// from its own configuration instead (streams.num.standby.replicas, streams.session.timeout.ms,
// streams.heartbeat.interval.ms): New logs a warning for each, since they do nothing there.
func (c *Config) ignoredOnStreamsProtocol() []string {
	if !strings.EqualFold(string(c.GroupProtocol), string(GroupProtocolStreams)) {
		return nil
	}
	var out []string
	if c.NumStandbyReplicas > 0 {
		out = append(out, "num.standby.replicas")
	}
	if c.Consumer.SessionTimeout > 0 {
		out = append(out, "session.timeout.ms")
	}
	if c.Consumer.HeartbeatInterval > 0 {
		out = append(out, "heartbeat.interval.ms")
	}
	return out
}

// validateGroupProtocol checks group.protocol (case-insensitive, as Java).
func (c *Config) validateGroupProtocol() error {
	switch GroupProtocol(strings.ToLower(string(c.GroupProtocol))) {
	case "", GroupProtocolClassic, GroupProtocolStreams:
		return nil
	default:
		return &ConfigError{Property: props.GroupProtocolConfig, Value: string(c.GroupProtocol),
			Reason: "must be classic or streams (case insensitive); Kafka Streams does not run on the consumer protocol"}
	}
}

// Int64 returns a pointer to v, for optional fields such as StateStoreCacheMaxBytes.
func Int64(v int64) *int64 { return &v }

var appIDPattern = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// Validate checks the configuration and returns the first problem as a *ConfigError naming
// the Java property.
func (c *Config) Validate() error {
	switch {
	case c.ApplicationID == "":
		return &ConfigError{Property: props.ApplicationIDConfig, Reason: "missing; it is required"}
	case !appIDPattern.MatchString(c.ApplicationID):
		return &ConfigError{Property: props.ApplicationIDConfig, Value: c.ApplicationID, Reason: "only letters, digits, '.', '_' and '-' are allowed"}
	case len(c.BootstrapServers) == 0:
		return &ConfigError{Property: props.BootstrapServersConfig, Reason: "missing; it is required"}
	case !validRecordingLevel(c.MetricsRecordingLevel):
		return &ConfigError{Property: props.MetricsRecordingLevelConfig, Value: c.MetricsRecordingLevel, Reason: "must be INFO, DEBUG or TRACE"}
	case c.NumStreamThreads < 0:
		return &ConfigError{Property: props.NumStreamThreadsConfig, Value: strconv.Itoa(c.NumStreamThreads), Reason: "must be at least 1"}
	case c.NumTaskExecutors < 0:
		return &ConfigError{Property: props.NumTaskExecutorsConfig, Value: strconv.Itoa(c.NumTaskExecutors), Reason: "must not be negative"}
	case c.CommitInterval < 0:
		return &ConfigError{Property: props.CommitIntervalMsConfig, Value: fmt.Sprint(c.CommitInterval.Milliseconds()), Reason: "must not be negative"}
	case c.NumStandbyReplicas < 0:
		return &ConfigError{Property: props.NumStandbyReplicasConfig, Value: strconv.Itoa(c.NumStandbyReplicas), Reason: "must not be negative"}
	case c.AcceptableRecoveryLag != nil && *c.AcceptableRecoveryLag < 0:
		return &ConfigError{Property: props.AcceptableRecoveryLagConfig, Value: fmt.Sprint(*c.AcceptableRecoveryLag), Reason: "must not be negative"}
	case c.MaxWarmupReplicas < 0:
		return &ConfigError{Property: props.MaxWarmupReplicasConfig, Value: strconv.Itoa(c.MaxWarmupReplicas), Reason: "must be at least 1"}
	case c.ProbingRebalanceInterval < 0 || (c.ProbingRebalanceInterval > 0 && c.ProbingRebalanceInterval < minProbingRebalanceInterval):
		return &ConfigError{Property: props.ProbingRebalanceIntervalMsConfig, Value: fmt.Sprint(c.ProbingRebalanceInterval.Milliseconds()),
			Reason: "must be at least 60000 (1 min)"}
	case len(c.ClientTags) > maxClientTags:
		return &ConfigError{Property: props.ClientTagPrefix, Value: fmt.Sprint(len(c.ClientTags)), Reason: "at most 5 client tags can be specified"}
	case c.StateStoreCacheMaxBytes != nil && *c.StateStoreCacheMaxBytes < 0:
		return &ConfigError{Property: props.StateStoreCacheMaxBytesConfig, Value: fmt.Sprint(*c.StateStoreCacheMaxBytes), Reason: "must not be negative"}
	case c.BufferedRecordsPerPartition < 0:
		return &ConfigError{Property: props.BufferedRecordsPerPartitionConfig, Value: strconv.Itoa(c.BufferedRecordsPerPartition), Reason: "must be at least 1"}
	case c.TaskTimeout != nil && *c.TaskTimeout < 0:
		return &ConfigError{Property: props.TaskTimeoutMsConfig, Value: fmt.Sprint(c.TaskTimeout.Milliseconds()), Reason: "must not be negative"}
	case c.WindowStoreChangelogAdditionalRetention != nil && *c.WindowStoreChangelogAdditionalRetention < 0:
		return &ConfigError{Property: props.WindowStoreChangelogAdditionalRetentionMsConfig,
			Value: fmt.Sprint(c.WindowStoreChangelogAdditionalRetention.Milliseconds()), Reason: "must not be negative"}
	case c.ReplicationFactor == 0 || c.ReplicationFactor < -1:
		if c.ReplicationFactor != 0 {
			return &ConfigError{Property: props.ReplicationFactorConfig, Value: fmt.Sprint(c.ReplicationFactor), Reason: "must be -1 or at least 1"}
		}
	}
	for k, v := range c.ClientTags {
		if utf8.RuneCountInString(k) > maxClientTagKeyLength {
			return &ConfigError{Property: props.ClientTagPrefix + k, Value: k, Reason: "tag key exceeds the maximum length of 20"}
		}
		if utf8.RuneCountInString(v) > maxClientTagValueLength {
			return &ConfigError{Property: props.ClientTagPrefix + k, Value: v, Reason: "tag value exceeds the maximum length of 30"}
		}
	}
	if err := c.validateClient(); err != nil {
		return err
	}
	switch c.ProcessingGuarantee {
	case "", AtLeastOnce, ExactlyOnceV2:
	default:
		return &ConfigError{Property: props.ProcessingGuaranteeConfig, Value: string(c.ProcessingGuarantee), Reason: "must be at_least_once or exactly_once_v2"}
	}
	for _, s := range c.BootstrapServers {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return &ConfigError{Property: props.BootstrapServersConfig, Value: s, Reason: "must be host:port"}
		}
	}
	if c.ApplicationServer != "" {
		if _, port, err := net.SplitHostPort(c.ApplicationServer); err != nil || port == "" {
			return &ConfigError{Property: props.ApplicationServerConfig, Value: c.ApplicationServer, Reason: "must be host:port"}
		}
	}
	switch strings.ToUpper(c.SecurityProtocol) {
	case "", "PLAINTEXT", "SSL":
	case "SASL_PLAINTEXT", "SASL_SSL":
		switch strings.ToUpper(c.SASLMechanism) {
		case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
			if c.SASLUsername == "" {
				return &ConfigError{Property: props.SASLJAASConfig, Reason: "SASL needs a username and password"}
			}
		case "OAUTHBEARER":
			if c.SASLOAuthBearerTokenProvider == nil {
				return &ConfigError{Property: props.SASLLoginCallbackHandlerClassConfig, Reason: "OAUTHBEARER needs a token provider: " +
					"set Config.SASLOAuthBearerTokenProvider (ConfigFromProperties sets it from sasl.jaas.config and sasl.oauthbearer.token.endpoint.url)"}
			}
			if _, err := oauthRefresh(c.Properties); err != nil {
				return err
			}
		default:
			return &ConfigError{Property: props.SASLMechanismConfig, Value: c.SASLMechanism, Reason: "supported: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER"}
		}
	default:
		return &ConfigError{Property: props.SecurityProtocolConfig, Value: c.SecurityProtocol, Reason: "must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"}
	}
	pebble := c.Pebble
	if err := pebble.EnsureDefaults().Validate(); err != nil {
		return &ConfigError{Property: "Config.Pebble", Reason: err.Error()}
	}
	return c.validateGroupProtocol()
}

// withDefaults returns a copy with Java's defaults filled in.
func (c Config) withDefaults() Config {
	if c.NumStreamThreads == 0 {
		c.NumStreamThreads = 1
	}
	if c.NumTaskExecutors == 0 {
		c.NumTaskExecutors = max(goruntime.GOMAXPROCS(0)/c.NumStreamThreads, 1)
	}
	if c.ProcessingGuarantee == "" {
		c.ProcessingGuarantee = AtLeastOnce
	}
	if c.CommitInterval == 0 {
		c.CommitInterval = defaultCommitInterval
		if c.ProcessingGuarantee == ExactlyOnceV2 {
			c.CommitInterval = defaultEOSCommitInterval
		}
	}
	if c.StateDir == "" {
		c.StateDir = os.TempDir() + string(os.PathSeparator) + "kafka-streams"
	}
	if c.StateStoreCacheMaxBytes == nil {
		c.StateStoreCacheMaxBytes = Int64(defaultCacheMaxBytes)
	}
	if c.BufferedRecordsPerPartition == 0 {
		c.BufferedRecordsPerPartition = defaultBufferedRecordsPerPartition
	}
	if c.TaskTimeout == nil {
		d := defaultTaskTimeout
		c.TaskTimeout = &d
	}
	if c.AcceptableRecoveryLag == nil {
		c.AcceptableRecoveryLag = Int64(defaultAcceptableRecoveryLag)
	}
	if c.MaxWarmupReplicas == 0 {
		c.MaxWarmupReplicas = defaultMaxWarmupReplicas
	}
	if c.ProbingRebalanceInterval == 0 {
		c.ProbingRebalanceInterval = defaultProbingRebalanceInterval
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = -1
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.tokens == nil && c.isOAuthBearer() && c.SASLOAuthBearerTokenProvider != nil {
		c.tokens = c.newTokenSource()
	}
	return c
}
