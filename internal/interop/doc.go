// Package interop holds tests only: kstreams-go running beside Java Kafka Streams 4.4 on a real
// broker, as one application:
//
//   - sharing one application's state directory, its internal topics and its consumer group
//     (statedir_test.go; the Java side is conformance/java's
//     io.kstreams.conformance.statedir.SharedStateApp);
//   - in one consumer group at once, where either side leads (Java's classic "stream" assignment
//     protocol): a rolling migration of the word count, with a windowed count beside it, from
//     Java to Go and back with input flowing, under at-least-once and exactly-once
//     (migration_integration_test.go; the Java side is
//     io.kstreams.conformance.migration.WordCountApp, Kafka Streams' WordCountDemo with
//     windowed.output set, with the same Describe() as the test's Go topology);
//   - reset by cmd/kstreams-application-reset, Java's word count and ours each, then
//     reprocessing all input from the start with exact counts (reset_integration_test.go, on
//     SharedStateApp).
//
// The tests need KAFKA_BOOTSTRAP_SERVERS and KSTREAMS_CONFORMANCE_CP (make test sets both) and
// skip otherwise.
package interop
