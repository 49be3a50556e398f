#!/usr/bin/env bash
# Runs the side-by-side benchmarks of kstreams-go against Java Kafka Streams (`make bench`).
#
# Builds bench/cmd/wordcount, bench/cmd/wcbench and the Java baseline (bench/java, Maven),
# starts its own single-node broker (scripts/kafka/kafka.sh with KAFKA_RUN_DIR, default
# .build/kafka-bench; stopped at the end), prints the machine description, then runs wcbench:
# word count throughput, peak RSS and CPU of ours and Java's under at_least_once and
# exactly_once_v2, their ratios, and the bare sarama consume-then-produce pipe; then the same
# word count in each library's TopologyTestDriver, no broker (bench/cmd/tdbench against
# io.kstreams.bench.TestDriverWordCount on the same lines).
#
# Environment (all optional):
#   BENCH_LINES        input lines (default 2000000, ten words each)
#   BENCH_COMMIT_MS    commit.interval.ms of both applications (default 1000)
#   BENCH_CACHE_BYTES  statestore.cache.max.bytes of both applications (default 10485760)
#   BENCH_GUARANTEES   comma-separated (default at_least_once,exactly_once_v2)
#   BENCH_JAVA_OPTS    extra JVM options for the Java application (default none)
#   BENCH_TD_LINES     lines piped through each TopologyTestDriver (default BENCH_LINES; 0 skips)
#   KAFKA_BOOTSTRAP    use this running broker instead of starting one
#   KAFKA_RUN_DIR      where the broker started here keeps its files
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
export GOTOOLCHAIN=${GOTOOLCHAIN_OVERRIDE:-go1.27.3}
out=$repo/.build/bench
mkdir -p "$out"

(cd "$repo" && go build -o "$out/" ./bench/cmd/wordcount ./bench/cmd/wcbench ./bench/cmd/tdbench)
mvn -B -q -f "$here/java/pom.xml" package

bootstrap=${KAFKA_BOOTSTRAP:-}
if [ -z "$bootstrap" ]; then
	export KAFKA_RUN_DIR=${KAFKA_RUN_DIR:-$repo/.build/kafka-bench}
	"$repo/scripts/kafka/kafka.sh" up >&2
	trap '"$repo/scripts/kafka/kafka.sh" down >&2 || true' EXIT
	bootstrap=$("$repo/scripts/kafka/kafka.sh" addr)
fi

echo "machine: $(nproc) CPUs; $(free -g | awk '/^Mem:/ {print $2 " GiB RAM, " $7 " GiB available"}'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go: $("$(go env GOROOT)/bin/go" version | cut -d' ' -f3); java: $(java -version 2>&1 | head -n1)"
"$out/wcbench" -bootstrap "$bootstrap" -go-bin "$out/wordcount" \
	-java-cp "$here/java/target/bench.jar:$here/java/target/lib/*" \
	-lines "${BENCH_LINES:-2000000}" -commit-ms "${BENCH_COMMIT_MS:-1000}" \
	-cache-bytes "${BENCH_CACHE_BYTES:-10485760}" \
	-guarantees "${BENCH_GUARANTEES:-at_least_once,exactly_once_v2}" \
	-java-opts "${BENCH_JAVA_OPTS:-}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

td_lines=${BENCH_TD_LINES:-${BENCH_LINES:-2000000}}
if [ "$td_lines" -gt 0 ]; then
	echo
	echo "test driver, no broker ($td_lines lines):"
	"$out/wcbench" -lines "$td_lines" -lines-file "$out/lines.txt" -bootstrap unused -go-bin unused -java-cp unused
	java_td=$(java ${BENCH_JAVA_OPTS:-} -cp "$here/java/target/bench.jar:$here/java/target/lib/*" io.kstreams.bench.TestDriverWordCount "$out/lines.txt" "${BENCH_CACHE_BYTES:-10485760}")
	go_td=$("$out/tdbench" -lines-file "$out/lines.txt" -cache-bytes "${BENCH_CACHE_BYTES:-10485760}")
	echo "$java_td"
	echo "$go_td"
	awk -v j="$java_td" -v g="$go_td" 'BEGIN { nj = split(j, a, " "); ng = split(g, b, " "); printf "  test-driver throughput ours/Java %.2fx\n", b[ng] / a[nj] }'
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
