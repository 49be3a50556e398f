// Package resetter is the logic of cmd/kstreams-application-reset, Apache Kafka's
// kafka-streams-application-reset (org.apache.kafka.tools.StreamsResetter) for this library's
// and Java's applications: parse and check the options (ParseArgs), compute each input
// partition's new offset (Target), find the application's internal topics (InternalTopics),
// and carry the reset out on a Cluster (Reset), which tests fake and NewSaramaCluster
// implements on sarama's admin client.
package resetter
