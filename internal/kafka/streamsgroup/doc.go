// Package streamsgroup speaks the streams rebalance protocol of KIP-1071 (Kafka 4.1+,
// group.protocol=streams), which sarama does not know: our own encoding of
// StreamsGroupHeartbeat (API key 88, versions 0-1) and StreamsGroupDescribe (API key 89,
// version 0) and of OffsetCommit version 9 (the first a member of the new protocols may
// commit with; sarama stops at 8), and a connection of our own to send them on ([Conn]): Kafka's framing
// (4-byte size, request header v2 with the client id and an empty tagged-field section,
// response header v1), flexible-version compact encodings, an ApiVersions check of the
// versions we send, TLS and SASL (PLAIN, SCRAM-SHA-256/512) as the other connections'
// sarama config sets them ([ConfigFromSarama]).
//
// The fields and their order follow Apache Kafka 4.4's message schemas
// (StreamsGroupHeartbeatRequest.json and friends, shipped in kafka-clients); the tests check
// them against Apache Kafka 4.4's answers (kfake serves no streams groups).
//
// Broker behaviour found while testing on Apache Kafka 4.4:
//   - A streams member's heartbeat or describe of a classic group is answered
//     GROUP_ID_NOT_FOUND ("Group X is not a streams group."); a classic JoinGroup to a streams
//     group INCONSISTENT_GROUP_PROTOCOL.
//   - The first heartbeat (epoch 0) is answered with epoch 1, empty task lists and the status
//     ASSIGNMENT_DELAYED while group.streams.initial.rebalance.delay.ms runs; the tasks come
//     in a later heartbeat, with a new epoch.
//   - A join with a user endpoint (application.server) whose source topic is missing, or not
//     yet in the coordinator's metadata (created a moment before), is answered
//     UNKNOWN_SERVER_ERROR (the broker logs a NoSuchElementException computing the
//     endpoint-to-partitions map); without a user endpoint the same join is answered with the
//     status MISSING_SOURCE_TOPICS naming the topics. The caller retries UNKNOWN_SERVER_ERROR
//     with backoff.
//   - While internal topics (changelogs, repartition topics) are missing, the heartbeats carry
//     MISSING_INTERNAL_TOPICS naming them and no tasks; the coordinator creates them (the
//     repartition topic with the source's partition count, the configs as sent) and assigns
//     the tasks a few heartbeats later.
//   - A streams member's OffsetCommit v8 is answered UNSUPPORTED_VERSION; v9 with the member
//     epoch in the generation's place commits (a stale epoch: STALE_MEMBER_EPOCH, an unknown
//     member: UNKNOWN_MEMBER_ID). TxnOffsetCommit v3 with the member epoch as the generation
//     commits (a stale epoch: ILLEGAL_GENERATION), so exactly-once needs no new request.
//     OffsetFetch v8 without a member reads the offsets.
//   - Describe names the group states "Stable", "Empty", ... (capitalized).
package streamsgroup
