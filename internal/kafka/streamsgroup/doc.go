// Package streamsgroup speaks the streams rebalance protocol of KIP-1071 (Kafka 4.1+,
// group.protocol=streams), which sarama does not know: our own encoding of
// StreamsGroupHeartbeat (API key 88, versions 0-1) and StreamsGroupDescribe (API key 89,
// version 0) and of OffsetCommit version 9 (the first a member of the new protocols may
// commit with; sarama stops at 8), and a connection of our own to send them on ([Conn]): Kafka's framing
// (4-byte size, request header v2 with the client id and an empty tagged-field section,
// response header v1), flexible-version compact encodings, an ApiVersions check of the
// versions we send, TLS and SASL (PLAIN, SCRAM-SHA-256/512) as the other connections'
// sarama config sets them ([ConfigFromSarama]). The connection also carries requests other
// packages encode themselves ([Conn.RoundTrip]: the Fetch of restore and of the stream
// thread's fetcher).
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

// # How the stream thread runs on it (group.protocol=streams)
//
// This package has the wire side only. The runtime side (internal/runtime/streamsmember.go and
// membership_streams.go) replaces the classic group.Member of a stream thread by a streams
// member when Config.GroupProtocol is "streams", following this plan except where noted:
// TaskOffsets and TaskEndOffsets are sent empty (no lags reported yet), the instance still
// creates the internal topics at start, and pattern sources are not described. The plan, from what
// Java's StreamsMembershipManager, StreamsGroupHeartbeatRequestManager and StreamThread do
// (Kafka 4.4) and what the tests here found:
//
// The member (a new type, internal/runtime/streamsmember.go or a Member in this package): one
// per stream thread, with a member id it makes once (a random UUID; Java sends
// Uuid.randomUuid's base64) and keeps across rejoins, the instance's process id, the
// application.server endpoint, the client.tag.* tags and rack. It heartbeats on a Conn of its
// own to the coordinator (kafka.Cluster.FindCoordinator; NOT_COORDINATOR and
// COORDINATOR_NOT_AVAILABLE: look it up again; COORDINATOR_LOAD_IN_PROGRESS,
// UNKNOWN_SERVER_ERROR and transport failures: retry with backoff) from a goroutine every
// HeartbeatIntervalMs of the last response (5 s by default) and at once when the thread
// acknowledges a reconciliation. The first heartbeat (epoch 0) carries everything: the
// topology, empty task lists, process id, endpoint, tags, RebalanceTimeoutMs =
// max.poll.interval.ms; later ones send a field only when it changed since the last one
// sent (nil otherwise), and everything again after an error. Leave sends epoch -1 (a static
// member -2) on Close; a poll timeout (max.poll.interval.ms) leaves too and rejoins with
// epoch 0 on the next poll.
//
// The topology: built once from the processor topology: topology.Builder.TopicGroups gives
// the sub-topologies (ID = the decimal sub-topology number, as Java), their source topics
// (repartition topics apart: RepartitionSourceTopics, with NumberOfPartitions when the user
// fixed it, else 0), the repartition topics their sinks write (RepartitionSinkTopics) and
// their changelogs; the topic configs are those internal/runtime/topics.go computes for
// CreateTopics today (the interop test shows Java's, field by field:
// cleanup.policy=delete, retention.ms=-1, segment.bytes=52428800,
// message.timestamp.type=CreateTime for repartition topics; compact, or compact,delete with
// retention.ms for window stores, for changelogs); replication factor from
// replication.factor as Java sends it, -1 for the broker's default (checked: with 0 the
// coordinator refuses a member joining Java's group, INVALID_REQUEST "Topology updates are
// not supported yet", as it compares the topologies field by field). Copartition groups (joins) are indexes into the sub-topology's SourceTopics and
// RepartitionSourceTopics. The coordinator creates the internal topics itself
// (MISSING_INTERNAL_TOPICS until done), so the runtime's own CreateTopics at start is skipped
// on this protocol; pattern sources go in SourceTopicRegex.
//
// The assignment, in membership_streams.go: the streams member's target assignment (active,
// standby, warm-up task ids: sub-topology and partition) becomes the same "received" set
// (task -> partitions, via the thread's topology: the partitions of a task are its
// sub-topology's source topics at that partition) that the classic path gets from
// assignor.onAssignment, and rebalance() applies it unchanged from there: revoked tasks are
// committed and closed, standbys (warm-ups included) created, kept, promoted or closed, new
// tasks created and their inputs assigned. A new target assignment arriving with any
// heartbeat shows in RejoinNeeded (as a classic rebalance does) so the thread reconciles at
// its next loop; once applied, the next heartbeat reports the tasks owned (ActiveTasks, ...)
// and the member epoch advances; a task revoked here goes to its new owner only after that
// report.
// Tasks of a sub-topology the thread's topology lacks are a fatal error (Java says so).
// TaskOffsets and TaskEndOffsets come from the task manager's streamsTaskOffsets every
// TaskOffsetIntervalMs and when a warm-up caught up; AcceptableRecoveryLag is the broker's.
// PartitionsByUserEndpoint (union per endpoint: one entry per member) replaces the classic
// AssignmentInfo's partitions by host for interactive queries (iq.go's metadata).
//
// Commits: the member epoch is the generation and the member id the member id. At-least-once
// commits with [Conn.OffsetCommit] (v9; sarama's v8 is refused); exactly-once keeps the
// produce package's TxnOffsetCommit v3 with GroupMetadata{Generation: epoch}. Committed
// offsets are read with OffsetFetch v8 as today. STALE_MEMBER_EPOCH: retry after the next
// heartbeat; UNKNOWN_MEMBER_ID / FENCED_MEMBER_EPOCH / ILLEGAL_GENERATION: the tasks migrated.
//
// Heartbeat errors and statuses, as Java: UNKNOWN_MEMBER_ID and FENCED_MEMBER_EPOCH fence the
// member: its tasks are lost (closed dirty, Java's onAllTasksLost) and it rejoins with epoch 0
// and the same member id. Fatal for the thread (no retry): GROUP_ID_NOT_FOUND (the group is
// a classic group: the immediate protocol-mismatch error), GROUP_AUTHORIZATION_FAILED,
// TOPIC_/CLUSTER_AUTHORIZATION_FAILED, FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID,
// GROUP_MAX_SIZE_REACHED, INVALID_REQUEST, UNSUPPORTED_VERSION / ErrUnsupported (Java: "The
// cluster does not support the STREAMS group protocol"), STREAMS_INVALID_TOPOLOGY,
// STREAMS_INVALID_TOPOLOGY_EPOCH, STREAMS_TOPOLOGY_FENCED (the group runs another topology).
// Statuses: SHUTDOWN_APPLICATION shuts the instance down (as a classic shutdown request);
// MISSING_SOURCE_TOPICS fails the thread with ErrMissingSourceTopics after waiting twice the
// heartbeat interval; INCORRECTLY_PARTITIONED_TOPICS fails it at once (Java: a
// TopologyException); STALE_TOPOLOGY, MISSING_INTERNAL_TOPICS, ASSIGNMENT_DELAYED and
// MISSING_CLIENT_TAGS are logged and waited out.
//
// Mixed groups: Go and Java members on this protocol share a group with nothing more (the
// broker assigns), provided the topologies are the same; the rolling-migration test of the
// classic protocol (internal/interop, migration_integration_test.go) is the harness to run
// with group.protocol=streams on both sides (its WordCountApp would take the property as
// SharedStateApp's --group-protocol does).
