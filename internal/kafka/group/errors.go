package group

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"
)

// The reasons a member's generation no longer stands, reported by [Member.RejoinNeeded] and
// returned (wrapped, with the group, generation and Kafka error code) by [Member.Commit] and
// [Member.Join]. Test them with errors.Is.
var (
	// ErrNotJoined: the member has not joined a generation yet, or it left the group (Leave,
	// an abandoned Join).
	ErrNotJoined = errors.New("not a member of a generation")

	// ErrMemberLost: the coordinator no longer counts this member in its generation (Java:
	// CommitFailedException, Kafka Streams: TaskMigratedException). Its partitions may belong
	// to another member already; rejoin. Kafka error codes UNKNOWN_MEMBER_ID and
	// ILLEGAL_GENERATION, and ErrSessionExpired and ErrPollTimeout, are this.
	ErrMemberLost = errors.New("member lost its generation")

	// ErrSessionExpired: no heartbeat succeeded for the session timeout, so the coordinator
	// has expired the member. errors.Is(ErrSessionExpired, ErrMemberLost).
	ErrSessionExpired = fmt.Errorf("no successful heartbeat within the session timeout: %w", ErrMemberLost)

	// ErrPollTimeout: Poll was not called for the rebalance timeout (max.poll.interval.ms), so
	// the member left the group (Java: "consumer poll timeout has expired").
	// errors.Is(ErrPollTimeout, ErrMemberLost).
	ErrPollTimeout = fmt.Errorf("consumer poll timeout has expired: %w", ErrMemberLost)

	// ErrRebalanceInProgress: the coordinator started a rebalance (Kafka error code
	// REBALANCE_IN_PROGRESS). The member is still in its generation and its partitions are
	// still its own until it rejoins (eager protocol: it revokes them all first).
	ErrRebalanceInProgress = errors.New("the group is rebalancing")

	// ErrRejoinRequested: RequestRejoin was called.
	ErrRejoinRequested = errors.New("rejoin requested")

	// ErrPartitionsChanged: this member leads the group and a subscribed topic's partition
	// count changed since its last assignment (Java's consumer rebalances when the metadata
	// of subscribed topics changes).
	ErrPartitionsChanged = errors.New("partition count of a subscribed topic changed")

	// ErrFatal is wrapped by every error that no retry or rejoin cures: authorization
	// failures, an inconsistent group protocol, a full group, a session timeout the broker
	// refuses, a fenced instance id, an Assignor error, a malformed assignment. The member
	// cannot continue; close it.
	ErrFatal = errors.New("fatal group error")

	// ErrFencedInstanceID: another member with the same group.instance.id joined the group
	// (Kafka error code FENCED_INSTANCE_ID, KIP-345). errors.Is(ErrFencedInstanceID, ErrFatal),
	// and not ErrMemberLost: rejoining would fence the other instance in turn.
	ErrFencedInstanceID = fmt.Errorf("group.instance.id fenced by another instance: %w", ErrFatal)
)

// kerrOf returns the Kafka error code err wraps, ErrNoError if none.
func kerrOf(err error) sarama.KError {
	var k sarama.KError
	if errors.As(err, &k) {
		return k
	}
	return sarama.ErrNoError
}
