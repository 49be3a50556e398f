package kstreams

import (
	"slices"
	"strings"
)

// knownProperties are the property names something reads: internal/props
// and the DSL's, and the rest of Java's StreamsConfig names (accepted for a Java
// application's properties file, though most are not used here).
var knownProperties = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`acceptable.recovery.lag acks allow.auto.create.topics allow.os.group.write.access
		application.id application.server auto.offset.reset batch.size bootstrap.resolve.timeout.ms bootstrap.servers
		buffered.records.per.partition built.in.metrics.version cache.max.bytes.buffering client.id client.rack
		commit.interval.ms compression.type config.providers connections.max.idle.ms default.client.supplier
		default.deserialization.exception.handler default.dsl.store default.key.serde default.list.key.serde.inner
		default.list.key.serde.type default.list.value.serde.inner default.list.value.serde.type
		default.production.exception.handler default.timestamp.extractor default.value.serde delivery.timeout.ms
		deserialization.exception.handler dsl.store.format dsl.store.suppliers.class enable.auto.commit
		enable.idempotence enable.metrics.push errors.dead.letter.queue.topic.name fetch.max.bytes fetch.max.wait.ms
		fetch.min.bytes group.id group.instance.id group.protocol heartbeat.interval.ms isolation.level linger.ms
		log.summary.interval.ms max.in.flight.requests.per.connection max.partition.fetch.bytes max.poll.interval.ms
		max.poll.records max.task.idle.ms max.warmup.replicas merge.repartition.topics metadata.cluster.check.enable
		metadata.max.age.ms metric.reporters num.standby.replicas num.stream.threads num.task.executors
		partition.assignment.strategy
		poll.ms probing.rebalance.interval.ms processing.exception.handler processing.guarantee
		production.exception.handler receive.buffer.bytes reconnect.backoff.max.ms reconnect.backoff.ms
		repartition.purge.interval.ms replication.factor request.timeout.ms retry.backoff.ms retry.backoff.max.ms
		reuse.ktable.source.topics rocksdb.config.setter security.protocol segment.bytes send.buffer.bytes
		session.timeout.ms single.store.self.join state.cleanup.delay.ms state.cleanup.dir.max.age.ms state.dir
		statestore.cache.max.bytes task.timeout.ms topology.optimization transaction.timeout.ms transactional.id
		upgrade.from window.size.ms windowed.inner.class.serde windowstore.changelog.additional.retention.ms`) {
		knownProperties[k] = true
	}
}

// knownPrefixes are prefixes whose properties are passed on (Java's client prefixes, topic
// configs, security, serde settings such as a schema registry's) or internal ("__...__").
var knownPrefixes = []string{"consumer.", "producer.", "main.consumer.", "restore.consumer.", "global.consumer.",
	"admin.", "topic.", "ssl.", "sasl.", "metrics.", "rack.aware.", "schema.registry.", "basic.auth.",
	"bearer.auth.", "specific.avro.", "auto.register.", "use.latest.", "value.subject.", "key.subject.", "__"}

// UnknownProperties returns the names in props that neither this package nor Java's
// StreamsConfig knows (and that have no client, topic, security or serde prefix), sorted, each
// with the known name it most likely misspells ("" when none is close): a
// "bootstrap.server" gives {"bootstrap.server", "bootstrap.servers"}. New logs a warning for
// each, as Java's StreamsConfig logs the configs "supplied but are not used".
func UnknownProperties(props map[string]string) [][2]string {
	var out [][2]string
	for k := range props {
		if knownProperties[k] || slices.ContainsFunc(knownPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		out = append(out, [2]string{k, closestProperty(k)})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// closestProperty is the known property nearest k in edit distance, if at most 3 edits (and
// fewer than half of k's length); ties go to the alphabetically first.
func closestProperty(k string) string {
	best, bestD := "", 4
	for name := range knownProperties {
		if d := editDistance(k, name); d < bestD || d == bestD && best != "" && name < best {
			best, bestD = name, d
		}
	}
	if bestD > 3 || 2*bestD >= len(k) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
