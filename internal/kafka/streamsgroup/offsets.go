package streamsgroup

import (
	"context"
	"fmt"

	"github.com/IBM/sarama"
)

// OffsetCommit version 9 (API key 8, flexible): the first version a member of a group of the
// new protocols may commit with. Apache Kafka 4.4 answers a streams group member's
// OffsetCommit v8 (sarama's highest) UNSUPPORTED_VERSION; v9's fields are v8's. The member
// epoch takes the generation's place. TxnOffsetCommit v3 (sarama's, the produce package's)
// is accepted with the member epoch as the generation.

// APIKeyOffsetCommit is OffsetCommit's API key.
const APIKeyOffsetCommit int16 = 8

// Kafka error codes of commits by members of the new protocols that sarama does not name.
const (
	ErrFencedMemberEpoch = sarama.KError(110) // FENCED_MEMBER_EPOCH
	ErrStaleMemberEpoch  = sarama.KError(113) // STALE_MEMBER_EPOCH: retry with the epoch of the next heartbeat
)

func init() {
	codeNames[ErrFencedMemberEpoch] = "FENCED_MEMBER_EPOCH"
	codeNames[ErrStaleMemberEpoch] = "STALE_MEMBER_EPOCH"
}

// OffsetCommitRequest commits offsets for a streams group member.
type OffsetCommitRequest struct {
	// GroupID is the group.
	GroupID string
	// MemberEpoch is the member's epoch (the last heartbeat's); MemberID its id.
	MemberEpoch int32
	MemberID    string
	// InstanceID is group.instance.id; nil for a dynamic member.
	InstanceID *string
	// Topics are the offsets by topic.
	Topics []CommitTopic
}

// CommitTopic is one topic's offsets.
type CommitTopic struct {
	Name       string
	Partitions []CommitPartition
}

// CommitPartition is one partition's offset to commit.
type CommitPartition struct {
	Partition int32
	// Offset is the next offset to consume.
	Offset int64
	// LeaderEpoch is the leader epoch of the last record consumed; -1 when unknown.
	LeaderEpoch int32
	// Metadata is the commit's metadata; nil is null.
	Metadata *string
}

// OffsetCommitResponse is the per-partition answer of an OffsetCommit.
type OffsetCommitResponse struct {
	ThrottleTimeMs int32
	Topics         []CommitTopicResult
}

// CommitTopicResult is one topic's answer.
type CommitTopicResult struct {
	Name       string
	Partitions []CommitPartitionResult
}

// CommitPartitionResult is one partition's error code (0 when committed).
type CommitPartitionResult struct {
	Partition int32
	ErrorCode int16
}

func (r *OffsetCommitRequest) encode(e *enc, _ int16) {
	e.compactString(r.GroupID)
	e.int32(r.MemberEpoch)
	e.compactString(r.MemberID)
	e.compactNullableString(r.InstanceID)
	e.compactArrayLen(len(r.Topics))
	for _, t := range r.Topics {
		e.compactString(t.Name)
		e.compactArrayLen(len(t.Partitions))
		for _, p := range t.Partitions {
			e.int32(p.Partition)
			e.int64(p.Offset)
			e.int32(p.LeaderEpoch)
			e.compactNullableString(p.Metadata)
			e.noTags()
		}
		e.noTags()
	}
	e.noTags()
}

func (r *OffsetCommitResponse) decode(d *dec, _ int16) {
	r.ThrottleTimeMs = d.int32()
	for range max(d.arrayLen(), 0) {
		t := CommitTopicResult{Name: d.compactString()}
		for range max(d.arrayLen(), 0) {
			t.Partitions = append(t.Partitions, CommitPartitionResult{Partition: d.int32(), ErrorCode: d.int16()})
			d.skipTags()
		}
		d.skipTags()
		r.Topics = append(r.Topics, t)
	}
	d.skipTags()
}

// Err returns the first partition's error code as a *ResponseError naming the partition, nil
// when every partition was committed.
func (r *OffsetCommitResponse) Err(groupID string) error {
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				msg := fmt.Sprintf("%s-%d", t.Name, p.Partition)
				return responseError("OffsetCommit", groupID, p.ErrorCode, &msg)
			}
		}
	}
	return nil
}

// OffsetCommit sends an OffsetCommit v9. The partitions' error codes are in the response
// (Err); the error returned is as Heartbeat's.
func (c *Conn) OffsetCommit(ctx context.Context, req *OffsetCommitRequest) (*OffsetCommitResponse, error) {
	v, err := c.version("OffsetCommit", APIKeyOffsetCommit, 9, 9)
	if err != nil {
		return nil, err
	}
	var e enc
	req.encode(&e, v)
	body, err := c.roundTrip(ctx, APIKeyOffsetCommit, v, true, e.b)
	if err != nil {
		return nil, err
	}
	resp := &OffsetCommitResponse{}
	d := dec{b: body}
	resp.decode(&d, v)
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("OffsetCommit v%d from %s: %w", v, c.addr, err)
	}
	return resp, nil
}
