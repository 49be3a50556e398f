#!/usr/bin/env bash
# Apache Kafka's own Kafka Streams system-test verifiers against our ports of their clients
# (systemtest/: EosTestClient and SmokeTestClient, run as systemtest/cmd/eosclient and
# smokeclient), the way Kafka's system tests drive them: data generation, clients started,
# SIGKILLed and restarted, then Kafka's driver verifies and prints its verdict.
#
#   scripts/systemtest.sh build    build systemtest/java and fetch Kafka's test jars (4.3.1 for
#                                  SmokeTestDriver, 4.2.1 for EosTestDriver) from Maven Central;
#                                  prints the directory to put in KSTREAMS_SYSTEMTEST_CP
#   scripts/systemtest.sh [ARGS]   `make systemtest`: every variant (EOS simple and complex, Smoke
#                                  at_least_once and exactly_once_v2; clean, with kills, two
#                                  clients with standbys, a broker restart midway) on a broker
#                                  of its own (.build/kafka-systemtest, stopped at the end);
#                                  ARGS go to `go test` (e.g. -run 'SystemSmoke')
#
# Each run's processes log to .build/systemtest/<test name>/ (kept after a failure). `make test`
# runs two of the variants (scripts/test.sh) on the broker it starts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
[ "$GOTOOLCHAIN" = local ] && export GOTOOLCHAIN=go1.27.3

die() { echo "systemtest.sh: $*" >&2; exit 1; }

build() {
	command -v mvn >/dev/null 2>&1 || die "mvn not found on PATH: install Maven 3.8 or newer; it fetches Kafka's test jars from Maven Central"
	mkdir -p .build
	local pom=internal/systemtest/java/pom.xml
	if ! mvn -B -q -Dstyle.color=never -f $pom package >.build/mvn-systemtest.log 2>&1 ||
		! mvn -B -q -Dstyle.color=never -f $pom -Dkafka.version=4.2.1 dependency:copy-dependencies \
			-DincludeScope=runtime -DoutputDirectory=target/lib-4.2.1 >>.build/mvn-systemtest.log 2>&1; then
		tail -n 30 .build/mvn-systemtest.log >&2
		die "building internal/systemtest/java failed (log: .build/mvn-systemtest.log)"
	fi
	echo "$PWD/internal/systemtest/java/target"
}

if [ "${1:-}" = build ]; then
	build
	exit 0
fi

KSTREAMS_SYSTEMTEST_CP=$(build)
export KSTREAMS_SYSTEMTEST_CP
export KAFKA_RUN_DIR=$PWD/.build/kafka-systemtest
stop_broker() { scripts/kafka/kafka.sh down || true; }
trap stop_broker EXIT
KAFKA_BOOTSTRAP_SERVERS=$(scripts/kafka/kafka.sh up)
export KAFKA_BOOTSTRAP_SERVERS
export KSTREAMS_SYSTEMTEST_ALL=1 KSTREAMS_SYSTEMTEST_LOGS=$PWD/.build/systemtest
start=$(date +%s)
status=0
go test -count=1 -v -timeout 120m -run 'TestDescribeMatchesJava|TestIntegrationSystem' "$@" ./internal/systemtest || status=$?
echo "systemtest.sh: $(( ($(date +%s) - start) / 60 )) min; logs in .build/systemtest/"
exit $status
