#!/usr/bin/env bash
# Runs the side-by-side benchmarks of kstreams-go against Java Kafka Streams (`make bench`).
#
# Builds bench/cmd/wordcount, bench/cmd/wcbench and the Java baseline (bench/java, Maven),
# starts its own single-node broker (scripts/kafka/kafka.sh with KAFKA_RUN_DIR, default
# .build/kafka-bench; stopped at the end), prints the machine description, then runs wcbench:
# word count throughput, peak RSS and CPU (seconds per million lines) of ours and Java's under
# at_least_once and exactly_once_v2, each application in every configuration of
# BENCH_JAVA_THREADS / BENCH_GO_CONFIGS, BENCH_ROUNDS times interleaved (min / median / max),
# the ratios ours/Java at equal configuration (num.stream.threads=1 both) and with each at its
# best configuration, exactly-once as a percentage of at-least-once, and ceilings with each run
# as a percentage of them: the bare sarama pipe (every input line consumed and produced once: one
# hop, a tenth of the word count's records) and the batch-level word pipe (lines consumed, split,
# every word produced to a 4-partition topic keyed by word, that topic consumed and every word
# produced to an output topic, on the library's own fetch/produce layer: the word count's broker
# traffic without state, cache, deduplication or commits, the ceiling of its data path; see
# bench/cmd/wcbench's doc comment), once a round, and the batch-level word pipe again beside
# every run of ours (just before and after it: each run of ours is also given as a percentage of
# the mean of those two, as the machine's speed drifts within minutes); BENCH_WORD_PIPE=1 adds
# the same word pipe on bare sarama (about 45 s a round); then the end-to-end latency of both
# word counts with default configurations at BENCH_LATENCY_RATES lines/s; then the same
# word count in each library's TopologyTestDriver, no broker (bench/cmd/tdbench against
# io.kstreams.bench.TestDriverWordCount on the same lines).
#
# Then the restore benchmark (bench_restore below): a changelog of BENCH_RESTORE_RECORDS records
# restored into a fresh state directory by ours (bench/cmd/restorebench) and by Java Kafka
# Streams with RocksDB (io.kstreams.bench.Restore): time and peak RSS of each, and the ratios.
# Then the fail-over benchmark (bench_failover below, bench/cmd/failbench against
# io.kstreams.bench.Failover): two instances of a count on 8 partitions under
# BENCH_FAILOVER_RATE records/s, session timeout 10 s, one SIGKILLed; on the survivor, the
# longest output gap of the partitions it kept, and how long the BENCH_FAILOVER_RECORDS
# changelog records of the moved tasks take to restore and output again; ours vs Java.
# Then the recording cost of metrics (bench_recording below): the word count built without
# metrics (-tags kstreams_nometrics) beside INFO and DEBUG, interleaved, end to end on the broker;
# the share of the CPU profile in metrics code at INFO and DEBUG, end to end; then the same in
# internal/task's word count benchmark (no broker), where the noise between runs is smaller.
# `bench/run.sh restore`, `bench/run.sh failover`, `bench/run.sh throughput` and
# `bench/run.sh recording` run only that part (`bench/run.sh recording_tasks` only its broker-free half).
# `bench/run.sh async` (not part of the default run) runs the async-step benchmark
# (bench/cmd/asyncbench): MapValuesAsync over BENCH_ASYNC_RECORDS records on 8 partitions with a
# 20 ms in-process call, against our synchronous MapValues on 1 and 8 stream threads and Java
# Kafka Streams' synchronous mapValues (io.kstreams.bench.SyncCall) at num.stream.threads 1, 2,
# 4, 8 on BENCH_ASYNC_SYNC_RECORDS records each, under each guarantee of BENCH_GUARANTEES; with
# the defaults about 10 minutes on a quiet 2-CPU machine.
#
# With the defaults on a quiet 2-CPU machine the whole run takes about an hour: the
# throughput sweep ~35 (3 rounds of 7 contenders under 2 guarantees at 1 000 000 lines, plus the
# pipes), latency ~5, fail-over ~5, the recording cost ~12, the rest ~5.
#
# Environment (all optional):
#   BENCH_LINES        input lines of the throughput runs (default 1000000, ten words each)
#   BENCH_ROUNDS       throughput runs of every contender, interleaved (default 3)
#   BENCH_JAVA_THREADS comma-separated num.stream.threads of Java's contenders (default 1,2,4)
#   BENCH_GO_CONFIGS   comma-separated threads[:executors] of ours (num.stream.threads, num.task.executors;
#                      no executors: the default, GOMAXPROCS/threads) (default 1,2,2:2,4; 1:1 adds the
#                      serial thread, one executor)
#   BENCH_COMMIT_MS    commit.interval.ms of both applications (default 1000)
#   BENCH_CACHE_BYTES  statestore.cache.max.bytes of both applications (default 10485760)
#   BENCH_GUARANTEES   comma-separated (default at_least_once,exactly_once_v2)
#   BENCH_WORD_PIPE    1 also runs the bare sarama word pipe each round (default off)
#   BENCH_JAVA_OPTS    extra JVM options for the Java application (default none)
#   BENCH_TD_LINES     lines piped through each TopologyTestDriver (default 200000: Java's driver keeps
#                      every output record, so 2 000 000 lines ran 30+ min at 6.6 GiB; 0 skips)
#   BENCH_LATENCY_RATES  comma-separated input rates (lines/s) of the latency runs (default
#                      1000,10000; empty skips)
#   BENCH_LATENCY_SECONDS  load duration of each latency run (default 60)
#   BENCH_RESTORE_RECORDS  changelog records of the restore benchmark (default 5000000; 0 skips)
#   BENCH_FAILOVER_RECORDS changelog records of the killed instance's tasks, restored by the
#                      survivor (default 2000000; 0 skips the fail-over benchmark)
#   BENCH_FAILOVER_RATE    input records/s during the fail-over (default 2000)
#   BENCH_FAILOVER_ROUNDS  fail-overs per application, interleaved (default 2)
#   BENCH_FAILOVER_WARMUP  seconds of load before the kill (default 20)
#   BENCH_RECORDING_LINES  input lines of the recording-cost runs (default 1000000; 0 skips)
#   BENCH_RECORDING_ROUNDS rounds of the recording-cost runs, interleaved (default 5)
#   BENCH_RECORDING_TASK_ROUNDS  rounds of the recording cost without a broker (internal/task's
#                      word count benchmark, plain build / INFO / DEBUG; default 15; 0 skips)
#   BENCH_RECORDING_TASK_LINES   lines of each of those runs (default 200000)
#   BENCH_ASYNC_RECORDS    records of the async run of `bench/run.sh async` (default 2000000)
#   BENCH_ASYNC_SYNC_RECORDS  records of each synchronous run, ours and Java's (default 300)
#   BENCH_ASYNC_IN_FLIGHT  MaxInFlight of the async step, per task (default 64)
#   BENCH_ASYNC_SERVICE    sleep (in-process 20 ms) or http (a local HTTP server in asyncbench) (default sleep)
#   KAFKA_BOOTSTRAP    use this running broker instead of starting one
#   BENCH_BROKER_PID   with KAFKA_BOOTSTRAP: the process id of that broker, when it runs on this
#                      machine, so that the throughput runs report its CPU per line (the broker
#                      started here is measured without it; a broker others use meanwhile
#                      counts their load too)
#   KAFKA_RUN_DIR      where the broker started here keeps its files
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
export GOTOOLCHAIN=${GOTOOLCHAIN_OVERRIDE:-go1.27.3}
out=$repo/.build/bench
mkdir -p "$out"

(cd "$repo" && go build -o "$out/" ./bench/cmd/wordcount ./bench/cmd/wcbench ./bench/cmd/tdbench ./bench/cmd/restorebench ./bench/cmd/failbench ./bench/cmd/asyncbench)
mvn -B -q -f "$here/java/pom.xml" package

bootstrap=${KAFKA_BOOTSTRAP:-}
if [ -z "$bootstrap" ]; then
	export KAFKA_RUN_DIR=${KAFKA_RUN_DIR:-$repo/.build/kafka-bench}
	"$repo/scripts/kafka/kafka.sh" up >&2
	trap '"$repo/scripts/kafka/kafka.sh" down >&2 || true' EXIT
	bootstrap=$("$repo/scripts/kafka/kafka.sh" addr)
	BENCH_BROKER_PID=$(cat "$KAFKA_RUN_DIR/pid")
fi
broker_pid=${BENCH_BROKER_PID:-0}

echo "machine: $(nproc) CPUs; $(free -g | awk '/^Mem:/ {print $2 " GiB RAM, " $7 " GiB available"}'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go: $("$(go env GOROOT)/bin/go" version | cut -d' ' -f3); java: $(java -version 2>&1 | head -n1)"

# --- restore benchmark (issue 9 item 3; owner: store helper) ---
# Fills two compacted single-partition changelogs, <go app>-kv-changelog and <java app>-kv-changelog,
# with the same records (restorebench -mode produce), then starts each application on a fresh
# state directory and reads the line it prints when its restore listener reports the end.
# Time from start = the line's end_ms minus the time taken just before the process started
# (JVM or Go runtime start included); restore = from onRestoreStart to onRestoreEnd.
bench_restore() {
	local n=${BENCH_RESTORE_RECORDS:-5000000}
	[ "$n" -gt 0 ] || return 0
	local run go_app java_app sdir t0 go_line java_line go_t java_t
	run=$(date +%s)-$$
	go_app=bench-restore-go-$run
	java_app=bench-restore-java-$run
	sdir=$(mktemp -d "${TMPDIR:-/tmp}/bench-restore-state.XXXXXX")
	echo
	echo "restore: $n changelog records (16-byte keys, all distinct; 100-byte values), one partition, fresh state directory"
	t0=$(date +%s%3N)
	"$out/restorebench" -mode produce -bootstrap "$bootstrap" -records "$n" -apps "$go_app,$java_app"
	echo "  changelogs filled in $(( $(date +%s%3N) - t0 )) ms; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	t0=$(date +%s%3N)
	java_line=$(java ${BENCH_JAVA_OPTS:-} -cp "$here/java/target/bench.jar:$here/java/target/lib/*" io.kstreams.bench.Restore "$bootstrap" "$java_app" "$n" "$sdir/java")
	java_t=$(awk -v l="$java_line" -v t0="$t0" 'BEGIN { n = split(l, f, " "); for (i = 1; i <= n; i++) if (f[i] ~ /^end_ms=/) { sub("end_ms=", "", f[i]); printf "%.3f", (f[i] - t0) / 1000 } }')
	echo "  $java_line total_s=$java_t"
	echo "  load average $(cut -d' ' -f1-3 /proc/loadavg)"
	t0=$(date +%s%3N)
	go_line=$("$out/restorebench" -mode restore -bootstrap "$bootstrap" -application-id "$go_app" -records "$n" -state-dir "$sdir/go")
	go_t=$(awk -v l="$go_line" -v t0="$t0" 'BEGIN { n = split(l, f, " "); for (i = 1; i <= n; i++) if (f[i] ~ /^end_ms=/) { sub("end_ms=", "", f[i]); printf "%.3f", (f[i] - t0) / 1000 } }')
	echo "  $go_line total_s=$go_t"
	echo "  load average $(cut -d' ' -f1-3 /proc/loadavg)"
	rm -rf "$sdir"
	"$out/restorebench" -mode delete -bootstrap "$bootstrap" -apps "$go_app,$java_app" || true
	awk -v g="$go_line total_s=$go_t" -v j="$java_line total_s=$java_t" -v n="$n" '
		function field(line, key,   parts, i, k) {
			k = split(line, parts, " ")
			for (i = 1; i <= k; i++) if (index(parts[i], key "=") == 1) return substr(parts[i], length(key) + 2)
			return ""
		}
		BEGIN {
			gt = field(g, "total_s"); jt = field(j, "total_s"); gr = field(g, "restore_s"); jr = field(j, "restore_s")
			printf "  speed ours/Java: %.2fx from process start (%.0f vs %.0f records/s), %.2fx restore alone (%.0f vs %.0f records/s)\n", jt / gt, n / gt, n / jt, jr / gr, n / gr, n / jr
			printf "  peak RSS ours/Java: %.2f (%s vs %s MiB); CPU ours/Java: %.2f (%s vs %s s)\n", field(g, "peak_rss_mib") / field(j, "peak_rss_mib"), field(g, "peak_rss_mib"), field(j, "peak_rss_mib"), field(g, "cpu_s") / field(j, "cpu_s"), field(g, "cpu_s"), field(j, "cpu_s")
		}'
}
# --- end of restore benchmark definitions ---

# --- fail-over benchmark ---
# bench/cmd/failbench drives both applications in turn (its doc comment says what each figure
# is); it prints one line per fail-over, then min / median / max per application and the ratios.
bench_failover() {
	local n=${BENCH_FAILOVER_RECORDS:-2000000}
	[ "$n" -gt 0 ] || return 0
	echo
	echo "fail-over: two instances, 8 partitions, ${BENCH_FAILOVER_RATE:-2000} records/s, session.timeout.ms 10000, no standbys; one SIGKILLed, the survivor restores the moved tasks' changelogs ($n records written into them before the load, plus what the killed instance wrote)"
	"$out/failbench" -mode drive -bootstrap "$bootstrap" -java-cp "$here/java/target/bench.jar:$here/java/target/lib/*" \
		-java-opts "${BENCH_JAVA_OPTS:-}" -records "$n" -rate "${BENCH_FAILOVER_RATE:-2000}" \
		-rounds "${BENCH_FAILOVER_ROUNDS:-2}" -warmup "${BENCH_FAILOVER_WARMUP:-20}s" -session-ms 10000
}

bench_throughput() {
	"$out/wcbench" -bootstrap "$bootstrap" -broker-pid "$broker_pid" -go-bin "$out/wordcount" \
		-java-cp "$here/java/target/bench.jar:$here/java/target/lib/*" \
		-lines "${BENCH_LINES:-1000000}" -commit-ms "${BENCH_COMMIT_MS:-1000}" \
		-cache-bytes "${BENCH_CACHE_BYTES:-10485760}" \
		-guarantees "${BENCH_GUARANTEES:-at_least_once,exactly_once_v2}" \
		-rounds "${BENCH_ROUNDS:-3}" -java-threads "${BENCH_JAVA_THREADS:-1,2,4}" \
		-go-configs "${BENCH_GO_CONFIGS:-1,2,2:2,4}" -word-pipe="$([ "${BENCH_WORD_PIPE:-}" = 1 ] && echo true || echo false)" \
		-java-opts "${BENCH_JAVA_OPTS:-}"
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# --- async-step benchmark ---
bench_async() {
	local g eos
	for g in $(echo "${BENCH_GUARANTEES:-at_least_once,exactly_once_v2}" | tr , ' '); do
		eos=false
		[ "$g" = exactly_once_v2 ] && eos=true
		echo
		echo "async steps ($g), load average $(cut -d' ' -f1-3 /proc/loadavg):"
		"$out/asyncbench" -bootstrap "$bootstrap" -eos="$eos" -service "${BENCH_ASYNC_SERVICE:-sleep}" \
			-records "${BENCH_ASYNC_RECORDS:-2000000}" -sync-records "${BENCH_ASYNC_SYNC_RECORDS:-300}" \
			-in-flight "${BENCH_ASYNC_IN_FLIGHT:-64}" -partitions 8 -latency 20ms \
			-java-cp "$here/java/target/bench.jar:$here/java/target/lib/*" -java-opts "${BENCH_JAVA_OPTS:-}" -java-threads 1,2,4,8
		echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	done
}

# --- the recording cost of metrics ---
# The word count built with -tags kstreams_nometrics (records nothing: "goplain"), at
# metrics.recording.level INFO (the default: "go") and at DEBUG (the same binary through a
# wrapper: "gobase"), on the same input, interleaved over BENCH_RECORDING_ROUNDS rounds; the
# summary prints the throughput lost and the CPU per line added by INFO and by DEBUG against the
# plain build. BENCH_RECORDING_LINES=0 skips it.
bench_recording() {
	local lines=${BENCH_RECORDING_LINES:-1000000}
	[ "$lines" -gt 0 ] || return 0
	(cd "$repo" && go build -tags kstreams_nometrics -o "$out/wordcount-plain" ./bench/cmd/wordcount)
	printf '#!/bin/sh\nexec "%s" -p metrics.recording.level=DEBUG "$@"\n' "$out/wordcount" >"$out/wordcount-debug"
	chmod +x "$out/wordcount-debug"
	echo
	echo "metrics recording cost: plain build (goplain), INFO (go), DEBUG (gobase), $lines lines, at_least_once:"
	"$out/wcbench" -bootstrap "$bootstrap" -broker-pid "$broker_pid" -go-bin "$out/wordcount" -go-base-bin "$out/wordcount-debug" \
		-go-plain-bin "$out/wordcount-plain" -impls goplain,go,gobase -rounds "${BENCH_RECORDING_ROUNDS:-5}" \
		-pipe=false -java-cp unused -lines "$lines" -commit-ms "${BENCH_COMMIT_MS:-1000}" \
		-cache-bytes "${BENCH_CACHE_BYTES:-10485760}" -guarantees at_least_once
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	bench_recording_profile "$lines"
	bench_recording_tasks
}

# recording_share prints the share of a CPU profile's samples whose stacks run metrics code
# (internal/metrics, the Prometheus client): what recording costs, measured inside one run, so
# free of the noise between runs.
recording_share() {
	go tool pprof -top -focus='kstreams/internal/metrics|prometheus/client_golang' "$1" "$2" 2>/dev/null |
		awk '/^Showing nodes accounting for/ {sub(",", "", $5); print $6 " of the CPU samples (" $5 " of " $8 ")"}'
}

# bench_recording_profile runs the word count once at INFO and once at DEBUG with a CPU profile
# and prints the share of the CPU spent in metrics code.
bench_recording_profile() {
	local lines=$1 level bin impl
	echo
	echo "metrics recording cost inside one run: share of the word count's CPU profile in metrics code ($lines lines, at_least_once):"
	for level in INFO DEBUG; do
		impl=go
		[ "$level" = DEBUG ] && impl=gobase
		"$out/wcbench" -bootstrap "$bootstrap" -go-bin "$out/wordcount" -go-base-bin "$out/wordcount-debug" -impls "$impl" \
			-pipe=false -java-cp unused -lines "$lines" -commit-ms "${BENCH_COMMIT_MS:-1000}" \
			-cache-bytes "${BENCH_CACHE_BYTES:-10485760}" -guarantees at_least_once \
			-go-args "-cpuprofile $out/recording-$level.pprof" >/dev/null
		echo "  $level: $(recording_share "$out/wordcount" "$out/recording-$level.pprof")"
	done
}

# bench_recording_tasks measures the same cost without a broker, where the noise of a shared
# machine is far smaller: internal/task's BenchmarkWordCountTasks{Info,Debug} (the word count's
# two tasks of one partition, Pebble store, 10 MiB cache: every per-record sensor the word count
# records) in the normal build, at INFO and DEBUG, and BenchmarkWordCountTasksInfo built with
# -tags kstreams_nometrics (records nothing), interleaved and rotated through the positions of a
# round; per round the CPU time per line (the process's, cpu-ns/op: the elapsed time of one
# build varied 23-59 µs between runs on the shared machine) of INFO and DEBUG against the plain
# build.
bench_recording_tasks() {
	local rounds=${BENCH_RECORDING_TASK_ROUNDS:-15} lines=${BENCH_RECORDING_TASK_LINES:-200000}
	[ "$rounds" -gt 0 ] || return 0
	(cd "$repo" && go test -c -o "$out/task.test" ./internal/task &&
		go test -c -tags kstreams_nometrics -o "$out/task-plain.test" ./internal/task)
	echo
	echo "metrics recording cost without a broker: internal/task BenchmarkWordCountTasks, $lines lines per run, $rounds rounds (CPU ns per line):"
	local contenders=("plain task-plain.test Info" "info task.test Info" "debug task.test Debug")
	local r i k c name bin level ns log=$out/recording-tasks.txt
	: >"$log"
	for ((r = 0; r < rounds; r++)); do
		local line="round $((r + 1)):"
		for ((i = 0; i < 3; i++)); do
			k=$(((i + r) % 3))
			[ $((r % 2)) -eq 1 ] && k=$(((3 - i + r) % 3))
			c=${contenders[$k]}
			read -r name bin level <<<"$c"
			ns=$(cd "$repo/internal/task" && "$out/$bin" -test.run '^$' -test.bench "^BenchmarkWordCountTasks$level\$" \
				-test.benchtime "${lines}x" | awk '/^BenchmarkWordCountTasks/ {v = $3; for (i = 4; i <= NF; i++) if ($i == "cpu-ns/op") v = $(i - 1); print v}')
			echo "$((r + 1)) $name $ns" >>"$log"
			line="$line $name $ns"
		done
		echo "$line"
	done
	awk '
		{ ns[$1, $2] = $3; if ($1 > n) n = $1 }
		function stats(a, m,   i, j, t) {
			for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return sprintf("%.1f / %.1f / %.1f%%", a[1], (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2), a[m])
		}
		END {
			for (r = 1; r <= n; r++) { info[r] = 100 * (ns[r, "info"] / ns[r, "plain"] - 1); debug[r] = 100 * (ns[r, "debug"] / ns[r, "plain"] - 1) }
			printf "recording cost without a broker, CPU per line added against the plain build (min / median / max of %d rounds): INFO %s, DEBUG %s\n", n, stats(info, n), stats(debug, n)
		}' "$log"
	local level
	for level in Info Debug; do
		(cd "$repo/internal/task" && "$out/task.test" -test.run '^$' -test.bench "^BenchmarkWordCountTasks$level\$" \
			-test.benchtime "${lines}x" -test.cpuprofile "$out/recording-tasks-$level.pprof" >/dev/null)
		echo "  $level, inside one run: $(recording_share "$out/task.test" "$out/recording-tasks-$level.pprof")"
	done
}

case "${1:-}" in
restore | failover | throughput | async | recording | recording_tasks)
	"bench_$1"
	exit 0
	;;
esac
bench_throughput

latency_rates=${BENCH_LATENCY_RATES-1000,10000}
if [ -n "$latency_rates" ]; then
	"$out/wcbench" -bootstrap "$bootstrap" -go-bin "$out/wordcount" \
		-java-cp "$here/java/target/bench.jar:$here/java/target/lib/*" -java-opts "${BENCH_JAVA_OPTS:-}" \
		-throughput=false -latency-rates "$latency_rates" -latency-seconds "${BENCH_LATENCY_SECONDS:-60}s"
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

td_lines=${BENCH_TD_LINES:-200000}
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

bench_restore
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

bench_failover
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

bench_recording
