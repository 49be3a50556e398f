#!/usr/bin/env bash
# Starts and stops the single-node KRaft Apache Kafka broker that `make test` runs the
# integration tests and the conformance suite against.
#
#   scripts/kafka/kafka.sh up      fetch the jars (once), format a fresh log dir, start, wait until ready
#   scripts/kafka/kafka.sh down    stop the broker started by `up` (TERM, then KILL after 30 s)
#   scripts/kafka/kafka.sh addr    print the bootstrap address of the running broker
#   scripts/kafka/kafka.sh log     print the last lines of the broker log
#
# Environment (all optional):
#   KAFKA_VERSION        Apache Kafka release from Maven Central (default 4.4.0, the newest 4.x served)
#   KSTREAMS_CACHE_DIR   where the broker jars are kept between runs
#                        (default ${XDG_CACHE_HOME:-$HOME/.cache}/kstreams-go)
#   KAFKA_RUN_DIR        config, data, pid, address and logs of the running broker (default .build/kafka)
#   KAFKA_READY_TIMEOUT  seconds to wait for the broker to answer a metadata request (default 120)
#
# The broker listens only on 127.0.0.1, on free ports chosen at start. Its log is
# $KAFKA_RUN_DIR/logs/server.log; `make test` prints its tail when a step fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
version=${KAFKA_VERSION:-4.4.0}
cache=${KSTREAMS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kstreams-go}
libs=$cache/kafka-$version/libs
run=${KAFKA_RUN_DIR:-$repo/.build/kafka}
ready_timeout=${KAFKA_READY_TIMEOUT:-120}
export GOTOOLCHAIN=${GOTOOLCHAIN_OVERRIDE:-go1.27.3}

die() { echo "kafka.sh: $*" >&2; exit 1; }

need() {
	command -v "$1" >/dev/null 2>&1 || die "$1 not found on PATH: $2"
}

fetch_jars() {
	if [ -f "$libs/.complete" ]; then
		return
	fi
	need mvn "install Maven (3.8 or newer) to fetch the Kafka broker jars from Maven Central"
	echo "kafka.sh: fetching Apache Kafka $version jars into $libs" >&2
	rm -rf "$libs"
	mkdir -p "$libs"
	if ! mvn -B -q -Dstyle.color=never -f "$here/pom.xml" -Dkafka.version="$version" \
		dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$libs" >"$cache/mvn-kafka-$version.log" 2>&1; then
		tail -n 20 "$cache/mvn-kafka-$version.log" >&2
		die "Maven could not fetch Apache Kafka $version (full log: $cache/mvn-kafka-$version.log)"
	fi
	touch "$libs/.complete"
}

brokercheck() {
	local bin=$run/bin/brokercheck
	if [ ! -x "$bin" ] || [ -n "$(find "$repo/internal/cmd/brokercheck" -newer "$bin" -name '*.go' 2>/dev/null)" ]; then
		need go "install Go; the toolchain $GOTOOLCHAIN is fetched by the go command"
		mkdir -p "$run/bin"
		(cd "$repo" && go build -o "$bin" ./internal/cmd/brokercheck) || die "could not build internal/cmd/brokercheck"
	fi
	"$bin" "$@"
}

running_pid() {
	[ -f "$run/pid" ] || return 1
	local pid
	pid=$(cat "$run/pid")
	kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

up() {
	need java "install a Java 17 (or newer) runtime to run the Kafka broker"
	if pid=$(running_pid); then
		die "a broker started by this script is already running (pid $pid, $(cat "$run/bootstrap")); run '$0 down' first"
	fi
	fetch_jars
	rm -rf "$run/data" "$run/logs" "$run/bootstrap" "$run/pid"
	mkdir -p "$run/data" "$run/logs"

	local ports broker_port controller_port cluster_id
	ports=$(brokercheck freeport 2)
	broker_port=$(echo "$ports" | sed -n 1p)
	controller_port=$(echo "$ports" | sed -n 2p)
	# A cluster id is 16 random bytes in URL-safe base64 without padding.
	cluster_id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')

	cat >"$run/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$broker_port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$run/data
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=5
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
log.cleaner.backoff.ms=1000
# Tests stamp records with fixed early timestamps (1970) so that outputs are deterministic; the
# default 7-day time retention would delete such segments at the next retention check (every
# 5 min), under a running test. Topics that set retention.ms themselves keep it.
log.retention.ms=-1
EOF

	cat >"$run/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $run/logs/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
EOF

	local java_opts=(-Xms256m -Xmx1g -XX:+UseG1GC -Djava.awt.headless=true
		-Dlog4j2.configurationFile="$run/log4j2.properties" -Dkafka.logs.dir="$run/logs")

	if ! java "${java_opts[@]}" -cp "$libs/*" kafka.tools.StorageTool format \
		-t "$cluster_id" -c "$run/server.properties" >"$run/logs/format.log" 2>&1; then
		cat "$run/logs/format.log" >&2
		die "formatting the KRaft log dir failed (log: $run/logs/format.log)"
	fi

	echo "kafka.sh: starting Apache Kafka $version on 127.0.0.1:$broker_port (log: $run/logs/server.log)" >&2
	nohup java "${java_opts[@]}" -cp "$libs/*" kafka.Kafka "$run/server.properties" \
		>"$run/logs/stdout.log" 2>&1 </dev/null &
	local pid=$!
	echo "$pid" >"$run/pid"

	local deadline=$((SECONDS + ready_timeout))
	while :; do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 30 "$run/logs/server.log" "$run/logs/stdout.log" >&2 2>/dev/null || true
			rm -f "$run/pid"
			die "the broker exited during start-up (log: $run/logs/server.log)"
		fi
		if brokercheck ready -bootstrap "127.0.0.1:$broker_port" -timeout 2s 2>/dev/null; then
			break
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			tail -n 30 "$run/logs/server.log" >&2 2>/dev/null || true
			down >/dev/null 2>&1 || true
			die "the broker did not answer a metadata request within ${ready_timeout}s (log: $run/logs/server.log)"
		fi
	done
	echo "127.0.0.1:$broker_port" >"$run/bootstrap"
	echo "kafka.sh: broker ready at 127.0.0.1:$broker_port" >&2
	echo "127.0.0.1:$broker_port"
}

down() {
	local pid
	if ! pid=$(running_pid); then
		rm -f "$run/pid" "$run/bootstrap"
		echo "kafka.sh: no broker running" >&2
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + 30))
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "kafka.sh: broker did not stop within 30 s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.2
	done
	rm -f "$run/pid" "$run/bootstrap"
	echo "kafka.sh: broker stopped" >&2
}

case "${1:-}" in
up) up ;;
down) down ;;
addr) [ -f "$run/bootstrap" ] && running_pid >/dev/null && cat "$run/bootstrap" || die "no broker running" ;;
log) tail -n "${2:-50}" "$run/logs/server.log" ;;
*) die "usage: $0 up|down|addr|log [lines]" ;;
esac
