#!/usr/bin/env bash
# Starts and stops an Apicurio Registry on loopback for the schema-registry integration tests
# (serde/avro: TestIntegration..., which read SCHEMA_REGISTRY_URL). Apicurio serves the
# Confluent Schema Registry REST API under /apis/ccompat/v7; `addr` prints that URL.
#
#   scripts/registry/registry.sh up      fetch Apicurio (once), start it with in-memory storage, wait until ready
#   scripts/registry/registry.sh down    stop the registry started by `up` (TERM, then KILL after 30 s)
#   scripts/registry/registry.sh addr    print the Confluent-compatible base URL of the running registry
#   scripts/registry/registry.sh log     print the last lines of the registry log
#
# Environment (all optional):
#   APICURIO_VERSION        Apicurio Registry release from Maven Central (default 3.0.9; 3.1+ need Java 21)
#   KSTREAMS_CACHE_DIR      where the registry distribution is kept between runs
#                           (default ${XDG_CACHE_HOME:-$HOME/.cache}/kstreams-go)
#   REGISTRY_RUN_DIR        pid, address and log of the running registry (default .build/registry)
#   REGISTRY_READY_TIMEOUT  seconds to wait for the registry to answer GET /subjects (default 120)
#
# The registry listens only on 127.0.0.1, on a free port chosen at start, and keeps its schemas
# in memory (Apicurio's default embedded H2 database), so every `up` starts empty.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
version=${APICURIO_VERSION:-3.0.9}
cache=${KSTREAMS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kstreams-go}
dist=$cache/apicurio-registry-$version
run=${REGISTRY_RUN_DIR:-$repo/.build/registry}
ready_timeout=${REGISTRY_READY_TIMEOUT:-120}
api_path=/apis/ccompat/v7

die() { echo "registry.sh: $*" >&2; exit 1; }

need() {
	command -v "$1" >/dev/null 2>&1 || die "$1 not found on PATH: $2"
}

fetch() {
	if [ -f "$dist/.complete" ]; then
		return
	fi
	need mvn "install Maven (3.8 or newer) to fetch Apicurio Registry from Maven Central"
	need tar "install tar to unpack the Apicurio Registry distribution"
	echo "registry.sh: fetching Apicurio Registry $version into $dist" >&2
	rm -rf "$dist"
	mkdir -p "$dist/archive"
	if ! mvn -B -q -f "$here/pom.xml" dependency:copy \
		-Dartifact="io.apicurio:apicurio-registry-app:$version:tar.gz:all" \
		-DoutputDirectory="$dist/archive" >"$cache/mvn-apicurio-$version.log" 2>&1; then
		tail -n 20 "$cache/mvn-apicurio-$version.log" >&2
		die "Maven could not fetch Apicurio Registry $version (full log: $cache/mvn-apicurio-$version.log)"
	fi
	tar -xzf "$dist/archive/apicurio-registry-app-$version-all.tar.gz" -C "$dist"
	rm -rf "$dist/archive"
	ls "$dist"/apicurio-registry-app-*-runner.jar >/dev/null 2>&1 ||
		die "the Apicurio Registry $version archive has no *-runner.jar (releases after 3.0 ship a quarkus-app layout and need Java 21)"
	touch "$dist/.complete"
}

running_pid() {
	[ -f "$run/pid" ] || return 1
	local pid
	pid=$(cat "$run/pid")
	kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

# free_port prints a loopback TCP port nothing listens on.
free_port() {
	local port i
	for i in $(seq 1 50); do
		port=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return
		fi
	done
	die "found no free loopback port"
}

up() {
	need java "install a Java 17 (or newer) runtime to run Apicurio Registry"
	need curl "install curl; it polls the registry until it answers"
	if pid=$(running_pid); then
		die "a registry started by this script is already running (pid $pid, $(cat "$run/url")); run '$0 down' first"
	fi
	fetch
	mkdir -p "$run"
	rm -f "$run/pid" "$run/url" "$run/registry.log"
	local port url jar
	port=$(free_port)
	url="http://127.0.0.1:$port$api_path"
	jar=$(ls "$dist"/apicurio-registry-app-*-runner.jar | head -n 1)
	echo "registry.sh: starting Apicurio Registry $version on 127.0.0.1:$port (log: $run/registry.log)" >&2
	# Apicurio's in-memory H2 database needs no files; run it from $run all the same.
	local pid
	pushd "$run" >/dev/null
	nohup java -Xms128m -Xmx512m -Djava.awt.headless=true \
		-Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$port" \
		-Dquarkus.log.console.color=false \
		-jar "$jar" >"$run/registry.log" 2>&1 </dev/null &
	pid=$!
	popd >/dev/null
	echo "$pid" >"$run/pid"
	local deadline=$((SECONDS + ready_timeout))
	while :; do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 30 "$run/registry.log" >&2 2>/dev/null || true
			rm -f "$run/pid"
			die "the registry exited during start-up (log: $run/registry.log)"
		fi
		if curl -sf -o /dev/null --max-time 2 "$url/subjects"; then
			break
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			tail -n 30 "$run/registry.log" >&2 2>/dev/null || true
			down >/dev/null 2>&1 || true
			die "the registry did not answer GET $url/subjects within ${ready_timeout}s (log: $run/registry.log)"
		fi
		sleep 0.5
	done
	echo "$url" >"$run/url"
	echo "registry.sh: registry ready at $url" >&2
	echo "$url"
}

down() {
	local pid
	if ! pid=$(running_pid); then
		rm -f "$run/pid" "$run/url"
		echo "registry.sh: no registry running" >&2
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + 30))
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "registry.sh: registry did not stop within 30 s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.2
	done
	rm -f "$run/pid" "$run/url"
	echo "registry.sh: registry stopped" >&2
}

case "${1:-}" in
up) up ;;
down) down ;;
addr) [ -f "$run/url" ] && running_pid >/dev/null && cat "$run/url" || die "no registry running" ;;
log) tail -n "${2:-50}" "$run/registry.log" ;;
*) die "usage: $0 up|down|addr|log [lines]" ;;
esac
