// Package assignment is Kafka Streams' classic-protocol task assignment, as Java Kafka Streams
// 4.4's StreamsPartitionAssignor does it, so that Go and Java instances of one application can
// share a consumer group and either can lead it:
//
//   - the wire format of the "stream" protocol's user data: [Subscription] (Java's
//     SubscriptionInfo, a generated message of SubscriptionInfoData.json, versions 1-11) and
//     [Assignment] (Java's AssignmentInfo, versions 1-11), with Java's version probing rules
//     ([LatestSupportedVersion], [EarliestProbeableVersion]);
//   - the high-availability task assignor ([AssignTasks]: Java's HighAvailabilityTaskAssignor
//     with its DefaultStandbyTaskAssignor and TaskMovement): sticky active tasks, standby
//     replicas on other clients, warm-up replicas for tasks whose balanced owner is not caught
//     up, and whether a probing rebalance is needed;
//   - the distribution of a client's tasks over its stream threads ([AssignTasksToThreads]:
//     Java's StreamsPartitionAssignor.assignTasksToThreads).
//
// Everything here is pure computation on values: the runtime's assignor
// (internal/runtime/assignor.go) gathers the members' subscriptions, the changelog end
// offsets and the topology's tasks, calls into this package and sends the results.
//
// Behaviour, figures and tie-breaking orders follow Java's (checked against Java's own classes
// by the tests: conformance/java's CodecVectors and AssignorRunner); the code is our own.
package assignment
