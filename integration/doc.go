// Package integration holds tests only: the public API of package kstreams run end to end
// against a real Apache Kafka broker (TestIntegration...: KAFKA_BOOTSTRAP_SERVERS; the
// security tests also KAFKA_SECURE_CONFIG, a secured node) and against the embedded broker of
// internal/kafkatest (TestEmbedded...: no broker needed). Crash tests re-run the test binary as
// a child process and SIGKILL it. make test starts the brokers and runs them; without the
// environment the TestIntegration tests skip.
package integration
