// Package systemtest holds Go ports of the Kafka Streams applications that Apache Kafka's own
// system tests verify, so that Kafka's verifiers (the drivers in the kafka-streams test jar,
// Maven classifier "test") can check this library the way they check Java Kafka Streams:
//
//   - [EosTopology]: org.apache.kafka.streams.tests.EosTestClient, application id "EosTest",
//     the simple topology (data -> echo, min, sum) and the complex one (also through the
//     "repartition" topic to max and cnt). Verified by EosTestDriver (test jar 4.2.1, the newest
//     that still has it): every input record delivered exactly once to every output, every
//     aggregate exact, no transaction left open.
//   - [SmokeTopology]: org.apache.kafka.streams.tests.SmokeTestClient, application id
//     "SmokeTest": windowed min, max, sum and count, suppression, the sliding-window sum, table
//     joins (dif, avg) and a re-grouped table aggregation (tagg). Verified by SmokeTestDriver
//     (test jar 4.3.1).
//
// Both are written on the public API only (kstream, processor, store, serde, kstreams), as a
// Kafka Streams user would write them; each one's Describe() equals Java's describe() of the
// same client (testdata/*.describe.txt, regenerated from Kafka's classes by
// systemtest/java's Describe when the test jars are at hand). The programs cmd/eosclient and
// cmd/smokeclient run them as Kafka's StreamsEosTest and StreamsSmokeTest "process" commands
// do, with the same properties file and the same lines on stdout, and the Go tests of this
// package (TestIntegrationSystem...) start them, kill them and run Kafka's drivers against
// them: scripts/systemtest.sh, `make systemtest`, and a short selection in `make test`.
package systemtest
