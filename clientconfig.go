package kstreams

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kstreams-go/kstreams/internal/props"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka/fetch"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
)

// ConsumerConfig holds the settings of the stream threads' consumer side: group membership and
// fetching. Zero values mean the default given per field. [ConfigFromProperties] reads them as
// Java Kafka Streams does: a property without prefix (session.timeout.ms), with the
// "consumer." prefix, or with the "main.consumer." prefix, the later winning. Java:
// StreamsConfig.getMainConsumerConfigs.
type ConsumerConfig struct {
	// SessionTimeout is session.timeout.ms: the group coordinator drops a member it heard no
	// heartbeat from for this long (a crashed instance's tasks move after it). The broker
	// accepts group.min.session.timeout.ms (6 s) to group.max.session.timeout.ms (30 min).
	// Default 45 s (Kafka's own system tests use 10 s).
	SessionTimeout time.Duration
	// HeartbeatInterval is heartbeat.interval.ms; less than SessionTimeout. Default 3 s.
	HeartbeatInterval time.Duration
	// MaxPollInterval is max.poll.interval.ms: the rebalance timeout, and the longest a stream
	// thread may go without looking at its group (processing one batch, restoring) before it
	// leaves the group. Default 300 s.
	MaxPollInterval time.Duration
	// AutoOffsetReset is auto.offset.reset: where a partition without committed offset (or
	// whose offset is out of range) starts: "earliest" (Kafka Streams' default), "latest" or
	// "none" (an error).
	AutoOffsetReset string
	// GroupInstanceID is group.instance.id: static membership (KIP-345); each thread joins as
	// <group.instance.id>-<thread index>, as Java's. Default "" (dynamic members).
	GroupInstanceID string
	// FetchMaxWait is fetch.max.wait.ms: how long the broker holds a fetch that has nothing to
	// return. Default 500 ms.
	FetchMaxWait time.Duration
	// FetchMinBytes is fetch.min.bytes. Default 1.
	FetchMinBytes int32
	// FetchMaxBytes is fetch.max.bytes, in bytes, per fetch response. Default 52428800 (50 MiB).
	FetchMaxBytes int32
	// MaxPartitionFetchBytes is max.partition.fetch.bytes, in bytes, per partition and fetch.
	// Default 1048576 (1 MiB).
	MaxPartitionFetchBytes int32
	// ClientRack is client.rack, announced in the subscription. Default "".
	ClientRack string
}

// ProducerConfig holds the settings of the stream threads' producers. Zero values mean the
// default given per field. [ConfigFromProperties] reads them unprefixed (linger.ms) or with the
// "producer." prefix, which wins. Java: StreamsConfig.getProducerConfigs.
type ProducerConfig struct {
	// Acks is acks: "all" (or "-1"; the default, required for idempotence and exactly-once) or
	// "1" (the leader only; turns idempotence off under at-least-once).
	Acks string
	// Linger is linger.ms: how long a batch that is not full waits for more records before it is
	// sent. Default 100 ms (Kafka Streams'); a negative value sends at once (linger.ms=0).
	Linger time.Duration
	// BatchSize is batch.size, in bytes per partition batch. Default 16384.
	BatchSize int
	// DeliveryTimeout is delivery.timeout.ms: a record not acknowledged within it fails.
	// Default 120 s; under exactly-once never (Kafka Streams': the transaction timeout ends a
	// stuck transaction instead).
	DeliveryTimeout time.Duration
	// RequestTimeout is request.timeout.ms. Default 30 s.
	RequestTimeout time.Duration
	// CompressionType is compression.type: "none" (default), "gzip", "snappy", "lz4" or "zstd".
	CompressionType string
	// MaxInFlight is max.in.flight.requests.per.connection: produce requests in flight per
	// broker, 1 to 5. Default 5.
	MaxInFlight int
	// TransactionTimeout is transaction.timeout.ms under exactly-once: the broker aborts a
	// transaction left open this long (a crashed instance's). Default 10 s (Kafka Streams').
	TransactionTimeout time.Duration
}

// Client defaults where Kafka Streams or this library differ from a field's zero value.
const (
	defaultSessionTimeout        = 45 * time.Second
	defaultHeartbeatInterval     = 3 * time.Second
	defaultMaxPollInterval       = 300 * time.Second
	defaultStreamsLinger         = 100 * time.Millisecond
	defaultEOSTransactionTimeout = 10 * time.Second
	// eosDeliveryTimeout is delivery.timeout.ms under exactly-once: Java's Integer.MAX_VALUE ms.
	eosDeliveryTimeout = (1<<31 - 1) * time.Millisecond
)

// consumerProp returns the main consumer's value of property k: main.consumer.k, else
// consumer.k, else k.
func consumerProp(get func(string) (string, bool), k string) (string, string, bool) {
	for _, name := range []string{props.MainConsumerPrefix + k, props.ConsumerPrefix + k, k} {
		if v, ok := get(name); ok {
			return name, v, true
		}
	}
	return "", "", false
}

// producerProp returns the producers' value of property k: producer.k, else k.
func producerProp(get func(string) (string, bool), k string) (string, string, bool) {
	for _, name := range []string{props.ProducerPrefix + k, k} {
		if v, ok := get(name); ok {
			return name, v, true
		}
	}
	return "", "", false
}

// clientFromProperties fills c.Consumer and c.Producer from Java properties.
func clientFromProperties(c *Config, get func(string) (string, bool)) error {
	ms := func(prop func(func(string) (string, bool), string) (string, string, bool), k string, set func(time.Duration)) error {
		name, v, ok := prop(get, k)
		if !ok {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return &ConfigError{Property: name, Value: v, Reason: "not a non-negative integer (ms)"}
		}
		set(time.Duration(n) * time.Millisecond)
		return nil
	}
	num := func(prop func(func(string) (string, bool), string) (string, string, bool), k string, set func(int64)) error {
		name, v, ok := prop(get, k)
		if !ok {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return &ConfigError{Property: name, Value: v, Reason: "not a non-negative integer"}
		}
		set(n)
		return nil
	}
	str := func(prop func(func(string) (string, bool), string) (string, string, bool), k string, set func(string)) {
		if _, v, ok := prop(get, k); ok {
			set(v)
		}
	}
	co, pr := &c.Consumer, &c.Producer
	for _, err := range []error{
		ms(consumerProp, props.SessionTimeoutMsConfig, func(d time.Duration) { co.SessionTimeout = d }),
		ms(consumerProp, props.HeartbeatIntervalMsConfig, func(d time.Duration) { co.HeartbeatInterval = d }),
		ms(consumerProp, props.MaxPollIntervalMsConfig, func(d time.Duration) { co.MaxPollInterval = d }),
		ms(consumerProp, props.FetchMaxWaitMsConfig, func(d time.Duration) { co.FetchMaxWait = d }),
		num(consumerProp, props.FetchMinBytesConfig, func(n int64) { co.FetchMinBytes = int32(n) }),
		num(consumerProp, props.FetchMaxBytesConfig, func(n int64) { co.FetchMaxBytes = int32(n) }),
		num(consumerProp, props.MaxPartitionFetchBytesConfig, func(n int64) { co.MaxPartitionFetchBytes = int32(n) }),
		ms(producerProp, props.LingerMsConfig, func(d time.Duration) {
			if d == 0 {
				d = -1 // linger.ms=0: send at once (a zero Linger means the default)
			}
			pr.Linger = d
		}),
		num(producerProp, props.BatchSizeConfig, func(n int64) { pr.BatchSize = int(n) }),
		ms(producerProp, props.DeliveryTimeoutMsConfig, func(d time.Duration) { pr.DeliveryTimeout = d }),
		ms(producerProp, props.RequestTimeoutMsConfig, func(d time.Duration) { pr.RequestTimeout = d }),
		num(producerProp, props.MaxInFlightRequestsConfig, func(n int64) { pr.MaxInFlight = int(n) }),
		ms(producerProp, props.TransactionTimeoutMsConfig, func(d time.Duration) { pr.TransactionTimeout = d }),
	} {
		if err != nil {
			return err
		}
	}
	str(consumerProp, props.AutoOffsetResetConfig, func(v string) { co.AutoOffsetReset = v })
	str(consumerProp, props.GroupInstanceIDConfig, func(v string) { co.GroupInstanceID = v })
	str(consumerProp, props.ClientRackConfig, func(v string) { co.ClientRack = v })
	str(producerProp, props.AcksConfig, func(v string) { pr.Acks = v })
	str(producerProp, props.CompressionTypeConfig, func(v string) { pr.CompressionType = v })
	return nil
}

// validateClient checks the consumer and producer settings.
func (c *Config) validateClient() error {
	co, pr := c.Consumer, c.Producer
	switch {
	case co.SessionTimeout < 0:
		return &ConfigError{Property: props.SessionTimeoutMsConfig, Value: fmt.Sprint(co.SessionTimeout.Milliseconds()), Reason: "must not be negative"}
	case co.HeartbeatInterval < 0:
		return &ConfigError{Property: props.HeartbeatIntervalMsConfig, Value: fmt.Sprint(co.HeartbeatInterval.Milliseconds()), Reason: "must not be negative"}
	case co.MaxPollInterval < 0:
		return &ConfigError{Property: props.MaxPollIntervalMsConfig, Value: fmt.Sprint(co.MaxPollInterval.Milliseconds()), Reason: "must not be negative"}
	}
	session, heartbeat := durationOr(co.SessionTimeout, defaultSessionTimeout), durationOr(co.HeartbeatInterval, defaultHeartbeatInterval)
	if heartbeat >= session {
		return &ConfigError{Property: props.HeartbeatIntervalMsConfig, Value: fmt.Sprint(heartbeat.Milliseconds()),
			Reason: fmt.Sprintf("must be less than session.timeout.ms (%d)", session.Milliseconds())}
	}
	switch strings.ToLower(co.AutoOffsetReset) {
	case "", "earliest", "latest", "none":
	default:
		return &ConfigError{Property: props.AutoOffsetResetConfig, Value: co.AutoOffsetReset, Reason: "must be earliest, latest or none"}
	}
	if co.FetchMinBytes < 0 || co.FetchMaxBytes < 0 || co.MaxPartitionFetchBytes < 0 {
		return &ConfigError{Property: props.FetchMaxBytesConfig, Reason: "fetch sizes must not be negative"}
	}
	switch strings.ToLower(pr.Acks) {
	case "", "all", "-1":
	case "1":
		if c.ProcessingGuarantee == ExactlyOnceV2 {
			return &ConfigError{Property: props.AcksConfig, Value: pr.Acks, Reason: "exactly_once_v2 needs acks=all"}
		}
	default:
		return &ConfigError{Property: props.AcksConfig, Value: pr.Acks, Reason: "supported: all, -1, 1"}
	}
	if _, err := compressionCodec(pr.CompressionType); err != nil {
		return err
	}
	if pr.BatchSize < 0 {
		return &ConfigError{Property: props.BatchSizeConfig, Value: strconv.Itoa(pr.BatchSize), Reason: "must not be negative"}
	}
	if pr.MaxInFlight < 0 || pr.MaxInFlight > 5 {
		return &ConfigError{Property: props.MaxInFlightRequestsConfig, Value: strconv.Itoa(pr.MaxInFlight), Reason: "must be 1 to 5 (idempotence)"}
	}
	if pr.DeliveryTimeout < 0 || pr.RequestTimeout < 0 || pr.TransactionTimeout < 0 {
		return &ConfigError{Property: props.DeliveryTimeoutMsConfig, Reason: "producer timeouts must not be negative"}
	}
	return nil
}

func durationOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// compressionCodec maps compression.type to sarama's codec.
func compressionCodec(s string) (sarama.CompressionCodec, error) {
	switch strings.ToLower(s) {
	case "", "none":
		return sarama.CompressionNone, nil
	case "gzip":
		return sarama.CompressionGZIP, nil
	case "snappy":
		return sarama.CompressionSnappy, nil
	case "lz4":
		return sarama.CompressionLZ4, nil
	case "zstd":
		return sarama.CompressionZSTD, nil
	}
	return 0, &ConfigError{Property: props.CompressionTypeConfig, Value: s, Reason: "supported: none, gzip, snappy, lz4, zstd"}
}

// producerConfig is the template of the stream threads' producers.
func (c *Config) producerConfig() produce.Config {
	pr := c.Producer
	pc := produce.Config{Linger: durationOr(pr.Linger, defaultStreamsLinger), BatchSize: pr.BatchSize,
		DeliveryTimeout: pr.DeliveryTimeout, RequestTimeout: pr.RequestTimeout, MaxInFlight: pr.MaxInFlight}
	if pr.Linger < 0 {
		pc.Linger = -1
	}
	pc.Compression, _ = compressionCodec(pr.CompressionType)
	if pr.Acks == "1" {
		pc.Acks, pc.NoIdempotence = produce.AcksLeader, true
	}
	if c.ProcessingGuarantee == ExactlyOnceV2 {
		pc.TransactionTimeout = durationOr(pr.TransactionTimeout, defaultEOSTransactionTimeout)
		if pr.DeliveryTimeout <= 0 {
			pc.DeliveryTimeout = eosDeliveryTimeout
		}
	}
	return pc
}

// fetchConfig is the template of the stream threads' fetchers.
func (c *Config) fetchConfig() fetch.Config {
	co := c.Consumer
	fc := fetch.Config{MaxWait: co.FetchMaxWait, MinBytes: co.FetchMinBytes, MaxBytes: co.FetchMaxBytes,
		PartitionMaxBytes: co.MaxPartitionFetchBytes}
	switch strings.ToLower(co.AutoOffsetReset) {
	case "latest":
		fc.Reset = fetch.Latest
	case "none":
		fc.Reset = fetch.None
	default:
		fc.Reset = fetch.Earliest
	}
	return fc
}

// groupConfig is the template of the stream threads' group members.
func (c *Config) groupConfig() group.Config {
	co := c.Consumer
	return group.Config{SessionTimeout: durationOr(co.SessionTimeout, defaultSessionTimeout),
		HeartbeatInterval: durationOr(co.HeartbeatInterval, defaultHeartbeatInterval),
		RebalanceTimeout:  durationOr(co.MaxPollInterval, defaultMaxPollInterval),
		InstanceID:        co.GroupInstanceID, Rack: co.ClientRack}
}
