// Package interop holds tests only: kstreams-go running beside Java Kafka Streams 4.4 on a real
// broker (conformance/java's io.kstreams.conformance.statedir.SharedStateApp), sharing one
// application's state directory, its internal topics and its consumer group. The tests need
// KAFKA_BOOTSTRAP_SERVERS and KSTREAMS_CONFORMANCE_CP (make test sets both) and skip otherwise.
package interop
