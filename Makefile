# kstreams-go build and test entry points. Every target uses the Go 1.27.3 toolchain (the go
# command fetches it from the module proxy on first use).
export GOTOOLCHAIN := go1.27.3

.PHONY: test unit vet fmt kafka-up kafka-down conformance-java generate bench systemtest

## test: gofmt, go vet, go test ./..., then the integration tests against a real Apache Kafka
## broker (started here and stopped at the end) and the Java conformance suite.
test:
	@scripts/test.sh

## systemtest: Kafka's own system-test verifiers (EosTestDriver, SmokeTestDriver) against our
## ports of their clients, every variant, on a broker of its own (scripts/systemtest.sh; about
## 25 minutes). Not part of test, which runs two of the variants.
systemtest:
	@scripts/systemtest.sh

## unit: go test ./... only: no JVM, no broker.
unit:
	go test ./...

vet:
	go vet ./...

fmt:
	"$$(go env GOROOT)/bin/gofmt" -w $$(git ls-files '*.go')

## kafka-up: start a single-node KRaft Apache Kafka on 127.0.0.1 and print its address.
kafka-up:
	@scripts/kafka/kafka.sh up

## kafka-down: stop the broker started by kafka-up.
kafka-down:
	@scripts/kafka/kafka.sh down

## conformance-java: build the Java Kafka Streams reference harness (conformance/java).
conformance-java:
	mvn -B -q -f conformance/java/pom.xml package

## generate: regenerate mocks and other generated files.
generate:
	go generate ./...

## bench: ours against Java Kafka Streams side by side on a broker of its own (bench/run.sh;
## BENCH_LINES shrinks the input). Not part of test.
bench:
	@bench/run.sh
