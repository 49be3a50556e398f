#!/usr/bin/env bash
# Starts and stops the single-node KRaft Apache Kafka broker that `make test` runs the
# integration tests and the conformance suite against, and the secured one it runs the
# security tests against.
#
#   scripts/kafka/kafka.sh up      fetch the jars (once), format a fresh log dir, start, wait until ready
#   scripts/kafka/kafka.sh down    stop the broker started by `up` (TERM, then KILL after 30 s)
#   scripts/kafka/kafka.sh restart start the stopped broker again on its config, ports and data
#                                  (plain broker only; for tests that take a broker away)
#   scripts/kafka/kafka.sh addr    print the bootstrap address of the running broker
#   scripts/kafka/kafka.sh log     print the last lines of the broker log
#   scripts/kafka/kafka.sh fetch   only fetch the jars (once; `up` does it too, but two `up`s
#                                  run at once must not both fetch into the same cache)
#
# Each command takes `secure` after it (`up secure`, `down secure`, ...) for the secured node:
# another single-node cluster (its own JVM, run dir .build/kafka-secure) whose clients must
# authenticate and are authorized by the KRaft StandardAuthorizer:
#   - listener SASL_SSL: SCRAM-SHA-512 over TLS (`addr secure` prints it);
#   - listener SSL: TLS with client certificates required (mTLS; principal User:<subject DN>);
#   - listener OAUTH: SASL_SSL with OAUTHBEARER, validated by Kafka's unsecured-JWS validator
#     (a token with "alg":"none", its "sub" claim the principal; no signature checked: for
#     tests only); sessions end when their token expires (connections.max.reauth.ms), so
#     clients must re-authenticate with fresh tokens, as on managed clusters;
#   - the controller listener and the broker's connections to itself use SSL with the broker's
#     certificate (principal User:CN=broker);
#   - super users: User:CN=broker and User:admin, a SCRAM-SHA-512 user whose password is made at
#     every start; every other principal needs ACLs (allow.everyone.if.no.acl.found=false).
# A fresh CA and broker certificate are made at every start (brokercheck certs; valid a day,
# nothing kept in the repository). `up secure` prints the path of secure.json, which names the
# listeners, the admin credentials and the CA's certificate and key (tests sign client
# certificates with it); tests find it through KAFKA_SECURE_CONFIG (internal/kafkatest).
#
# Environment (all optional):
#   KAFKA_VERSION        Apache Kafka release from Maven Central (default 4.4.0, the newest 4.x served)
#   KSTREAMS_CACHE_DIR   where the broker jars are kept between runs
#                        (default ${XDG_CACHE_HOME:-$HOME/.cache}/kstreams-go)
#   KAFKA_RUN_DIR        config, data, pid, address and logs of the running broker
#                        (default .build/kafka; .build/kafka-secure for `secure`)
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
secure=
if [ "${2:-}" = secure ]; then
	secure=1
	run=${KAFKA_RUN_DIR:-$repo/.build/kafka-secure}
else
	run=${KAFKA_RUN_DIR:-$repo/.build/kafka}
fi
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
	if [ ! -x "$bin" ] || [ -n "$(find "$repo/internal/cmd/brokercheck" "$repo/internal/kafkatest/certs" -newer "$bin" -name '*.go' 2>/dev/null)" ]; then
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
		die "a broker started by this script is already running (pid $pid, $(cat "$run/bootstrap")); run '$0 down${secure:+ secure}' first"
	fi
	fetch_jars
	rm -rf "$run/data" "$run/logs" "$run/bootstrap" "$run/pid" "$run/tls" "$run/secure.json"
	mkdir -p "$run/data" "$run/logs"

	local ports broker_port controller_port ssl_port oauth_port cluster_id
	ports=$(brokercheck freeport $([ -n "$secure" ] && echo 4 || echo 2))
	broker_port=$(echo "$ports" | sed -n 1p)
	controller_port=$(echo "$ports" | sed -n 2p)
	ssl_port=$(echo "$ports" | sed -n 3p)
	oauth_port=$(echo "$ports" | sed -n 4p)
	# A cluster id is 16 random bytes in URL-safe base64 without padding, not starting with
	# '-': kafka-storage would take such an id for an option ("--cluster-id: expected one
	# argument"), one start in 64; Kafka's own Uuid.randomUuid draws again for the same reason.
	cluster_id=-
	while [ "${cluster_id#-}" != "$cluster_id" ]; do
		cluster_id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
	done

	local format_args=() heap=1g ready_args=(-bootstrap "127.0.0.1:$broker_port")
	if [ -n "$secure" ]; then
		local admin_password
		admin_password=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
		brokercheck certs -dir "$run/tls" || die "could not make the TLS certificates"
		secure_listeners "$broker_port" "$controller_port" "$ssl_port" "$oauth_port" >"$run/server.properties"
		format_args=(--add-scram "SCRAM-SHA-512=[name=admin,password=$admin_password]")
		heap=512m
		# Ready once it answers the broker's own certificate on the SSL listener.
		ready_args=(-bootstrap "127.0.0.1:$ssl_port" -tls-dir "$run/tls")
		# Written 0600: it holds the admin password and names the CA's key.
		(
			umask 077
			cat >"$run/secure.json" <<EOF
{
  "sasl_ssl": "127.0.0.1:$broker_port",
  "ssl": "127.0.0.1:$ssl_port",
  "sasl_oauthbearer": "127.0.0.1:$oauth_port",
  "sasl_mechanism": "SCRAM-SHA-512",
  "admin_user": "admin",
  "admin_password": "$admin_password",
  "ca_cert": "$run/tls/ca.pem",
  "ca_key": "$run/tls/ca-key.pem"
}
EOF
		)
	else
		plain_listeners "$broker_port" "$controller_port" >"$run/server.properties"
	fi

	cat >>"$run/server.properties" <<EOF
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

	local java_opts=(-Xms256m "-Xmx$heap" -XX:+UseG1GC -Djava.awt.headless=true
		-Dlog4j2.configurationFile="$run/log4j2.properties" -Dkafka.logs.dir="$run/logs")

	if ! java "${java_opts[@]}" -cp "$libs/*" kafka.tools.StorageTool format \
		-t "$cluster_id" -c "$run/server.properties" "${format_args[@]}" >"$run/logs/format.log" 2>&1; then
		cat "$run/logs/format.log" >&2
		die "formatting the KRaft log dir failed (log: $run/logs/format.log)"
	fi

	echo "kafka.sh: starting ${secure:+the secured }Apache Kafka $version on 127.0.0.1:$broker_port (log: $run/logs/server.log)" >&2
	echo "$heap" >"$run/heap"
	launch "$heap" "${ready_args[@]}"
	echo "127.0.0.1:$broker_port" >"$run/bootstrap"
	if [ -n "$secure" ]; then
		echo "kafka.sh: secured broker ready: SASL_SSL (SCRAM-SHA-512) at 127.0.0.1:$broker_port, SSL (mTLS) at 127.0.0.1:$ssl_port, SASL_SSL (OAUTHBEARER) at 127.0.0.1:$oauth_port" >&2
		echo "$run/secure.json"
		return
	fi
	echo "kafka.sh: broker ready at 127.0.0.1:$broker_port" >&2
	echo "127.0.0.1:$broker_port"
}

# launch starts the broker on $run/server.properties with heap $1 (its data formatted by up)
# and waits until it answers "brokercheck ready" with the arguments after $1.
launch() {
	local heap=$1
	shift
	local ready_args=("$@")
	local java_opts=(-Xms256m "-Xmx$heap" -XX:+UseG1GC -Djava.awt.headless=true
		-Dlog4j2.configurationFile="$run/log4j2.properties" -Dkafka.logs.dir="$run/logs")
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
		if brokercheck ready "${ready_args[@]}" -timeout 2s 2>/dev/null; then
			break
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			tail -n 30 "$run/logs/server.log" >&2 2>/dev/null || true
			down >/dev/null 2>&1 || true
			die "the broker did not answer a metadata request within ${ready_timeout}s (log: $run/logs/server.log)"
		fi
	done
}

# restart starts the plain broker stopped by down again, on the config, ports and data up made
# (up would format a fresh log directory), and prints its address once it is ready. Tests that
# take a broker away and bring it back use it, on a KAFKA_RUN_DIR of their own.
restart() {
	[ -z "$secure" ] || die "restart is for the plain broker only"
	if pid=$(running_pid); then
		die "the broker is running (pid $pid); run '$0 down' first"
	fi
	[ -f "$run/server.properties" ] && [ -d "$run/data" ] || die "no broker was set up in $run; run '$0 up' first"
	local broker_port
	broker_port=$(sed -n 's#^advertised.listeners=PLAINTEXT://127.0.0.1:\([0-9]*\)$#\1#p' "$run/server.properties")
	[ -n "$broker_port" ] || die "no PLAINTEXT listener in $run/server.properties"
	fetch_jars
	echo "kafka.sh: starting Apache Kafka $version again on 127.0.0.1:$broker_port (log: $run/logs/server.log)" >&2
	launch "$(cat "$run/heap" 2>/dev/null || echo 1g)" -bootstrap "127.0.0.1:$broker_port"
	echo "127.0.0.1:$broker_port" >"$run/bootstrap"
	echo "kafka.sh: broker ready again at 127.0.0.1:$broker_port" >&2
	echo "127.0.0.1:$broker_port"
}

# plain_listeners prints the listeners of the plain broker: PLAINTEXT for clients, and the
# controller's.
plain_listeners() {
	cat <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$2
listeners=PLAINTEXT://127.0.0.1:$1,CONTROLLER://127.0.0.1:$2
advertised.listeners=PLAINTEXT://127.0.0.1:$1
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
EOF
}

# secure_listeners prints the listeners, TLS, SASL and authorizer settings of the secured
# broker (see the comment at the top): SASL_SSL on $1, the controller on $2, SSL (mTLS) on $3,
# OAUTH (SASL_SSL with OAUTHBEARER) on $4.
secure_listeners() {
	cat <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$2
listeners=SASL_SSL://127.0.0.1:$1,CONTROLLER://127.0.0.1:$2,SSL://127.0.0.1:$3,OAUTH://127.0.0.1:$4
advertised.listeners=SASL_SSL://127.0.0.1:$1,SSL://127.0.0.1:$3,OAUTH://127.0.0.1:$4
controller.listener.names=CONTROLLER
inter.broker.listener.name=SSL
listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:SSL,SSL:SSL,OAUTH:SASL_SSL
ssl.keystore.type=PEM
ssl.keystore.location=$run/tls/broker-keystore.pem
ssl.truststore.type=PEM
ssl.truststore.location=$run/tls/ca.pem
listener.name.ssl.ssl.client.auth=required
listener.name.controller.ssl.client.auth=required
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.oauth.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="broker";
listener.name.oauth.oauthbearer.connections.max.reauth.ms=3600000
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:CN=broker;User:admin
EOF
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
fetch) fetch_jars ;;
up) up ;;
restart) restart ;;
down) down ;;
addr) [ -f "$run/bootstrap" ] && running_pid >/dev/null && cat "$run/bootstrap" || die "no broker running" ;;
log)
	lines=${2:-50}
	[ -n "$secure" ] && lines=${3:-50}
	tail -n "$lines" "$run/logs/server.log"
	;;
*) die "usage: $0 up|down|addr [secure] | $0 restart | $0 log [secure] [lines] | $0 fetch" ;;
esac
