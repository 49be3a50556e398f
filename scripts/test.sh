#!/usr/bin/env bash
# The whole test suite, as `make test` and CI run it:
#   1. gofmt and go vet (staticcheck, pinned, its checks chosen in staticcheck.conf, runs in the
#      background beside the integration tests of step 3, which mostly wait);
#   2. go test ./... (unit, test-driver and embedded-broker tests; no JVM, no broker): the
#      packages that run code on several goroutines, and the embedded end-to-end tests, under the
#      race detector (once: the -race run stands for the plain one), the others plainly;
#   3. the integration tests (TestIntegration...) against a real Apache Kafka broker that this
#      script starts on loopback and stops at the end, also when a step fails;
#      the security tests (TestIntegrationSecure...) against a second, secured Kafka node
#      (SASL_SSL with SCRAM-SHA-512 and with OAUTHBEARER, mTLS, ACLs:
#      `scripts/kafka/kafka.sh up secure`), started
#      beside the first; the schema-registry integration tests (serde/avro, and serde/protobuf
#      and serde/jsonschema beside Confluent's JavaScript serdes) against an Apicurio Registry
#      started likewise.
#   4. the conformance suite: the packages whose tests use the Java Kafka Streams reference
#      harness in conformance/java, run with KSTREAMS_CONFORMANCE_CP set (built before step 3,
#      whose Java-beside-us tests need it too; step 4 skips the tests steps 2 and 3 ran);
#   5. Kafka's own Kafka Streams system-test verifiers (EosTestDriver, SmokeTestDriver) against
#      our ports of their clients (internal/systemtest/), on the plain broker: two variants, about
#      4 to 7 minutes (every variant: make systemtest, scripts/systemtest.sh).
# A missing prerequisite stops it with one line saying what is missing; headless Chromium (for the
# live page's browser test) is installed with apt-get when missing and possible.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
[ "$GOTOOLCHAIN" = local ] && export GOTOOLCHAIN=go1.27.3
# The tests (and the applications they start as child processes) run with GOMAXPROCS=2 unless
# the caller sets it: num.task.executors defaults to GOMAXPROCS/num.stream.threads, so
# single-thread applications process their tasks on 2 executors whatever the machine, and
# parallel execution is what the end-to-end tests check here. go test still runs as many test
# binaries at once as there are CPUs (-p, which would follow GOMAXPROCS).
export GOMAXPROCS=${GOMAXPROCS:-2}
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-p=$(nproc)"

# The analyser's version (honnef.co/go/tools); staticcheck.conf says which checks run and why.
staticcheck_version=v0.8.2
# The packages go test runs under -race: those whose code runs on several goroutines (the
# instance and its stream threads, tasks, caches, the Kafka clients, changelog restore, stores
# read by interactive queries while threads write them, the serdes shared between threads) and
# those holding the embedded-broker end-to-end tests (TestEmbedded..., the examples).
race_pkgs=(. ./internal/runtime ./internal/task ./internal/cache ./internal/kafka/... ./internal/changelog
	./store ./internal/storeview ./kstreamstest ./integration ./examples/... ./serde/... ./internal/resetter
	./internal/kafkatest ./internal/metrics)
# Tests of those packages that run plainly instead: fills that take 10 to 25 times as long under
# the race detector while their concurrent paths are raced by smaller tests of the same code:
# hundreds of thousands of Pebble writes replayed after simulated crashes (store; the bulk
# restore's background writer is raced by the smaller bulk tests of store and internal/changelog),
# and the word count over 100 000 lines (the other embedded word counts run under -race).
plain_only='^(TestPebbleBulkRestoreCrashAtAnyPoint|TestPebbleBulkRestoreMatchesRecordWrites|TestScanResumesLikeThePlainIterators|TestEmbeddedWordCount100000Lines)$'
plain_only_pkgs=(./store ./examples/wordcount)

die() { echo "make test: $*" >&2; exit 1; }
# Each step's header says when it starts (wall time since the start) and the CPU time the
# finished steps used (user, system: bash's times for the script's children), so a slow step
# and an idle one can be told apart.
step() {
	local cpu f="${TMPDIR:-/tmp}/make-test-times.$$"
	times >"$f" # in this shell: inside $(...) it would time the subshell
	cpu=$(tail -n 1 "$f")
	rm -f "$f"
	printf '\n== [%dm%02ds, CPU %s] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "${cpu% *} user ${cpu#* } sys" "$*"
}
for tool in go java mvn node npm; do
	case $tool in
	go) hint="install Go (any recent version; it fetches the go1.27.3 toolchain itself)" ;;
	java) hint="install a Java 17 (or newer) JDK; the broker and the conformance harness run on it" ;;
	mvn) hint="install Maven 3.8 or newer; it fetches Apache Kafka and Kafka Streams from Maven Central" ;;
	node | npm) hint="install Node.js 20+ with npm; serde/avro, serde/protobuf and serde/jsonschema cross-check against Confluent's JavaScript serdes" ;;
	esac
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found on PATH: $hint"
done

step "gofmt and go vet"
gofmt_bin="$(go env GOROOT)/bin/gofmt"
unformatted=$("$gofmt_bin" -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.build/*'))
[ -z "$unformatted" ] || die "gofmt wants these files reformatted: $unformatted"
go vet ./...
# The benchmark's metrics-free build (bench/run.sh recording) must keep compiling.
go vet -tags kstreams_nometrics ./internal/metrics ./bench/cmd/wordcount
# staticcheck runs later, in the background beside the integration tests, which mostly wait
# for brokers: it costs about 3 CPU-minutes whenever a package low in the import graph changed.

mkdir -p .build
# Headless Chromium for the live page's browser test (TestEmbeddedLivePageBrowser in
# integration/): Debian's package, installed when missing where apt-get can (as root, as CI
# runs); without it the test skips, except in CI (CI set), where it fails.
if ! command -v chromium >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		step "installing Debian's chromium for the live page's browser test (apt-get)"
		if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } \
			>.build/apt-chromium.log 2>&1; then
			tail -n 20 .build/apt-chromium.log >&2
			die "apt-get install chromium failed (log: .build/apt-chromium.log)"
		fi
	elif [ -n "${CI:-}" ]; then
		die "chromium not found, and apt-get cannot install it here: the live page's browser test needs it (Debian: apt-get install chromium)"
	else
		echo "make test: chromium not found: the live page's browser test skips (Debian: apt-get install chromium)" >&2
	fi
fi
step "Confluent's JavaScript serdes (Avro, Protobuf, JSON Schema) for the serde cross-checks (npm ci)"
if ! npm ci --prefix serde/avro/testdata/js --no-audit --no-fund >.build/npm-avro.log 2>&1; then
	tail -n 20 .build/npm-avro.log >&2
	die "npm ci in serde/avro/testdata/js failed (log: .build/npm-avro.log)"
fi

step "go test -race: concurrent packages and embedded end-to-end tests (${race_pkgs[*]})"
go test -race -skip "$plain_only" "${race_pkgs[@]}"
step "go test: the other packages (unit and test-driver tests), and the fills named in plain_only"
mapfile -t raced < <(go list "${race_pkgs[@]}")
mapfile -t rest < <(go list ./... | grep -vxF -f <(printf '%s\n' "${raced[@]}"))
go test "${rest[@]}"
go test -run "$plain_only" "${plain_only_pkgs[@]}"

step "starting Apache Kafka, plain and secured (scripts/kafka/kafka.sh up; up secure)"
started=
secure_up=
secure_started=
registry_started=
staticcheck_pid=
on_exit() {
	status=$?
	if [ -n "$staticcheck_pid" ]; then # a step failed while staticcheck ran: stop it
		pkill -TERM -P "$staticcheck_pid" 2>/dev/null || true
		wait "$staticcheck_pid" 2>/dev/null || true
	fi
	if [ -n "$secure_up" ]; then
		wait "$secure_up" || true
		secure_started=1
	fi
	if [ -n "$secure_started" ]; then
		if [ "$status" -ne 0 ]; then
			echo "== a step failed; the last lines of the secured broker's log (.build/kafka-secure/logs/server.log):" >&2
			scripts/kafka/kafka.sh log secure 40 >&2 || true
		fi
		scripts/kafka/kafka.sh down secure || true
	fi
	if [ -n "$registry_started" ]; then
		if [ "$status" -ne 0 ]; then
			echo "== a step failed; the last lines of the registry log:" >&2
			scripts/registry/registry.sh log 40 >&2 || true
		fi
		scripts/registry/registry.sh down || true
	fi
	if [ -n "$started" ]; then
		if [ "$status" -ne 0 ]; then
			echo "== a step failed; the last lines of the broker log (.build/kafka/logs/server.log):" >&2
			scripts/kafka/kafka.sh log 40 >&2 || true
		fi
		scripts/kafka/kafka.sh down || true
	fi
	exit "$status"
}
trap on_exit EXIT
# The secured node starts in the background meanwhile (its own JVM and run dir), once the jars
# they share are in the cache.
scripts/kafka/kafka.sh fetch
scripts/kafka/kafka.sh up secure >.build/kafka-secure-up.out 2>.build/kafka-secure-up.log &
secure_up=$!
addr=$(scripts/kafka/kafka.sh up)
started=1
export KAFKA_BOOTSTRAP_SERVERS=$addr
secure_status=0
wait "$secure_up" || secure_status=$?
secure_up=
secure_started=1
cat .build/kafka-secure-up.log >&2
[ "$secure_status" -eq 0 ] || die "the secured broker did not start (scripts/kafka/kafka.sh up secure exited $secure_status)"
KAFKA_SECURE_CONFIG=$(cat .build/kafka-secure-up.out)
export KAFKA_SECURE_CONFIG

step "starting Apicurio Registry (scripts/registry/registry.sh up)"
SCHEMA_REGISTRY_URL=$(scripts/registry/registry.sh up)
registry_started=1
export SCHEMA_REGISTRY_URL

step "building the Java Kafka Streams reference harness (conformance/java)"
if ! mvn -B -q -Dstyle.color=never -f conformance/java/pom.xml package >.build/mvn-conformance.log 2>&1; then
	tail -n 30 .build/mvn-conformance.log >&2
	die "building the Java reference harness failed (log: .build/mvn-conformance.log)"
fi
# The integration tests that run Java Kafka Streams beside us (internal/interop, the suppress
# buffer's Java interop) read it too, so they run in the next step with the others.
export KSTREAMS_CONFORMANCE_CP="$PWD/conformance/java/target/conformance.jar:$PWD/conformance/java/target/lib/*"

step "integration tests against Apache Kafka at $addr (and the secured node of $KAFKA_SECURE_CONFIG); staticcheck beside them"
# staticcheck from the Go module proxy at a pinned version, built into .build/bin (the go
# command caches the build, staticcheck its results per package). It runs at a lower priority
# (nice), on the CPU the tests leave idle; its findings are printed once the tests are done.
GOBIN="$PWD/.build/bin" go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
(
	status=0
	start=$SECONDS
	nice -n 10 .build/bin/staticcheck ./... >.build/staticcheck.log 2>&1 || status=$?
	echo "(staticcheck took $((SECONDS - start)) s beside the tests)" >>.build/staticcheck.log
	exit "$status"
) &
staticcheck_pid=$!
go test -count=1 -timeout 20m -run Integration ./...
staticcheck_status=0
wait "$staticcheck_pid" || staticcheck_status=$?
staticcheck_pid=
echo "staticcheck (${staticcheck_version}, staticcheck.conf):"
cat .build/staticcheck.log
[ "$staticcheck_status" -eq 0 ] || die "staticcheck found problems (above; log: .build/staticcheck.log)"

step "conformance suite against Java Kafka Streams (conformance/java)"
# Every package whose tests use the harness: they import the conformance package or read
# KSTREAMS_CONFORMANCE_CP. Uncached (the Java side is not in Go's test cache); the broker tests
# (TestIntegration..., run above) and the embedded-broker ones (TestEmbedded..., which need no
# Java and ran in go test ./...) are not run again.
pkgs=$(grep -rl --include='*_test.go' -e 'KSTREAMS_CONFORMANCE_CP' -e '"github.com/kstreams-go/kstreams/internal/conformance"' . |
	xargs -r -n1 dirname | sort -u)
pkgs=$(printf '%s\n' ./internal/conformance $pkgs | sort -u)
# Each test process runs the Java Runner in a pool of long-lived JVMs (Runner --serve,
# internal/conformance's ServersEnv) rather than one JVM per call. The pool's own tests run
# under the race detector instead (its servers are shared by parallel tests).
go test -count=1 -timeout 20m -skip '^Test(Integration|Embedded|JavaServer)' $pkgs
go test -race -count=1 -run '^TestJavaServer' ./internal/conformance

step "Kafka's system-test verifiers against internal/systemtest/cmd (EOS complex with 3 SIGKILLs; Smoke exactly_once_v2 with a crash)"
# Kafka's own EosTestDriver and SmokeTestDriver (its kafka-streams test jars) verify our ports of
# their clients; each run logs the driver's verdict line. Every variant: make systemtest.
KSTREAMS_SYSTEMTEST_CP=$(scripts/systemtest.sh build)
export KSTREAMS_SYSTEMTEST_CP
# -v: the tests log what they start, kill and stop, and the verdicts; the processes' own output
# is in .build/systemtest/<test>/.
KSTREAMS_SYSTEMTEST_LOGS=$PWD/.build/systemtest go test -count=1 -v -timeout 20m \
	-run 'TestDescribeMatchesJava|TestIntegrationSystem(EosComplexKills|SmokeEosCrash)$' ./internal/systemtest
echo
echo "make test: all steps passed"
