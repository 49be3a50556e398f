package group

import (
	"context"
	"fmt"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// A group run by members of another group protocol: the coordinator answers our classic
// JoinGroup INCONSISTENT_GROUP_PROTOCOL, and we ask it what the group is, to say so.

// Group types as the coordinator lists them (ListGroups v5, KIP-1043).
const (
	// GroupTypeClassic is a group of the classic protocol (JoinGroup/SyncGroup).
	GroupTypeClassic = "classic"
	// GroupTypeConsumer is a group of the consumer protocol (KIP-848, group.protocol=consumer).
	GroupTypeConsumer = "consumer"
	// GroupTypeStreams is a group of the streams protocol (KIP-1071, group.protocol=streams,
	// StreamsGroupHeartbeat), which Java Kafka Streams 4.x runs on when configured so.
	GroupTypeStreams = "streams"
	// GroupTypeShare is a share group (KIP-932).
	GroupTypeShare = "share"
)

// ProtocolMismatchError is a JoinGroup refused with INCONSISTENT_GROUP_PROTOCOL, or a streams
// member's StreamsGroupHeartbeat answered GROUP_ID_NOT_FOUND (MemberProtocol "streams"): the
// group is run by members of another group protocol (a streams group of Java Kafka Streams on
// group.protocol=streams, a consumer group, a share group) or of another protocol type or
// assignor protocol. errors.Is(err, ErrFatal) and errors.Is(err,
// sarama.ErrInconsistentGroupProtocol) hold. Java: InconsistentGroupProtocolException.
type ProtocolMismatchError struct {
	// GroupID is the group.
	GroupID string
	// GroupType is the group's type as its coordinator lists it (GroupTypeStreams, ...), ""
	// when the coordinator did not say (the group is gone, or ListGroups failed).
	GroupType string
	// ProtocolType is the group's protocol type ("consumer", "connect", ...), "" when not
	// known; a streams group lists "streams".
	ProtocolType string
	// MemberProtocol is the protocol of the member that was refused: "" or "classic" for a
	// classic member (JoinGroup answered INCONSISTENT_GROUP_PROTOCOL), "streams" for a
	// streams member (KIP-1071) whose StreamsGroupHeartbeat was answered GROUP_ID_NOT_FOUND
	// because the group is of another type.
	MemberProtocol string
	// Cause is the coordinator's answer when it was not INCONSISTENT_GROUP_PROTOCOL (the
	// streams member's GROUP_ID_NOT_FOUND, with the broker's message); nil otherwise.
	Cause error
}

// Error implements error.
func (e *ProtocolMismatchError) Error() string {
	if e.MemberProtocol == GroupTypeStreams {
		what := "it is not a streams group: its members use another group protocol (group.protocol=classic, or a consumer group), and this member uses the streams protocol (group.protocol=streams, KIP-1071)"
		if e.GroupType != "" {
			what = fmt.Sprintf("it is a %s group, and this member uses the streams protocol (group.protocol=streams, KIP-1071)", e.GroupType)
		}
		s := fmt.Sprintf("group %q: %v: %s", e.GroupID, ErrFatal, what)
		if e.Cause != nil {
			s += " (" + e.Cause.Error() + ")"
		}
		return s
	}
	var what string
	switch e.GroupType {
	case GroupTypeStreams:
		what = "it is a streams group (KIP-1071: its members run with group.protocol=streams), and this member uses the classic protocol (group.protocol=classic)"
	case GroupTypeConsumer:
		what = "it is a consumer group of the consumer protocol (KIP-848), and this member uses the classic protocol of Kafka Streams"
	case GroupTypeShare:
		what = "it is a share group (KIP-932), and this member uses the classic protocol"
	case GroupTypeClassic:
		what = fmt.Sprintf("its members use protocol type %q or another assignor protocol than this member's %q", e.ProtocolType, ProtocolType)
	default:
		what = "it is run by members of another group protocol or protocol type"
	}
	return fmt.Sprintf("group %q: %v: %v: %s", e.GroupID, ErrFatal, sarama.ErrInconsistentGroupProtocol, what)
}

// Unwrap returns ErrFatal and sarama.ErrInconsistentGroupProtocol, and Cause when set.
func (e *ProtocolMismatchError) Unwrap() []error {
	if e.Cause != nil {
		return []error{ErrFatal, sarama.ErrInconsistentGroupProtocol, e.Cause}
	}
	return []error{ErrFatal, sarama.ErrInconsistentGroupProtocol}
}

// mismatch is the fatal error of op answered INCONSISTENT_GROUP_PROTOCOL by coord: it asks
// coord for the group's type (ListGroups v5, KIP-1043: the groups of that coordinator) to
// name it. The lookup is best effort: when it fails, the error says less.
func (m *Member) mismatch(ctx context.Context, coord kafka.Node) error {
	e := &ProtocolMismatchError{GroupID: m.cfg.GroupID}
	req := &sarama.ListGroupsRequest{Version: 5}
	var resp *sarama.ListGroupsResponse
	err := m.call(ctx, coord, m.groupP, func(b *sarama.Broker) (err error) {
		resp, err = b.ListGroups(req)
		return err
	})
	if err == nil && resp.Err == sarama.ErrNoError {
		if g, ok := resp.GroupsData[m.cfg.GroupID]; ok {
			e.GroupType = g.GroupType
		}
		e.ProtocolType = resp.Groups[m.cfg.GroupID]
	} else {
		m.log.Debug("group: listing the groups to name the other protocol failed", "error", err)
	}
	return e
}
