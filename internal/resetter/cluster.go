package resetter

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// Member is a member of the application's consumer group.
type Member struct {
	MemberID, GroupInstanceID, ClientID, Host string
}

// String returns the member as Java's MemberDescription prints the fields that identify it.
func (m Member) String() string {
	inst := "null"
	if m.GroupInstanceID != "" {
		inst = m.GroupInstanceID
	}
	return fmt.Sprintf("(memberId=%s, groupInstanceId=%s, clientId=%s, host=%s)", m.MemberID, inst, m.ClientID, m.Host)
}

// Cluster is what the reset needs of the Kafka cluster; saramaCluster implements it on
// sarama's admin client, tests implement it in memory.
type Cluster interface {
	// Members returns the group's members (none for an empty or unknown group).
	Members(group string) ([]Member, error)
	// RemoveMembers removes members from the group (LeaveGroup on their behalf, KIP-345/571).
	RemoveMembers(group string, members []Member) error
	// Topics returns every topic with its partition count.
	Topics() (map[string]int32, error)
	// Bounds returns the earliest and end offsets of the partitions.
	Bounds(tps []TopicPartition) (map[TopicPartition]Bounds, error)
	// OffsetsForTime returns, per partition, the first offset whose timestamp is at or after
	// ms; partitions without such a record are absent.
	OffsetsForTime(tps []TopicPartition, ms int64) (map[TopicPartition]int64, error)
	// Committed returns the group's committed offsets of the partitions; partitions without
	// one are absent.
	Committed(group string, tps []TopicPartition) (map[TopicPartition]int64, error)
	// Commit commits offsets for the group (as an admin, outside any generation).
	Commit(group string, offsets map[TopicPartition]int64) error
	// DeleteTopics deletes the topics; the error names each one that failed.
	DeleteTopics(topics []string) error
	// Close releases the connections.
	Close() error
}

type saramaCluster struct {
	client sarama.Client
	admin  sarama.ClusterAdmin
}

// NewSaramaCluster connects to the cluster at addrs with cfg.
func NewSaramaCluster(addrs []string, cfg *sarama.Config) (Cluster, error) {
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		return nil, err
	}
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		client.Close()
		return nil, err
	}
	return &saramaCluster{client: client, admin: admin}, nil
}

func (c *saramaCluster) Close() error { return c.admin.Close() }

// ErrNotClassicGroup is returned by Members when the group exists with another protocol than
// the classic one (group.protocol=streams, KIP-1071; or a consumer group of KIP-848), whose
// members the classic DescribeGroups does not show (the broker describes such a group as Dead,
// without members).
var ErrNotClassicGroup = errors.New("not a classic group")

// groupType returns the group's type as its coordinator lists it (ListGroups v5, KIP-848):
// "classic", "consumer", "streams" or "share"; "" when there is no such group or the broker
// does not know ListGroups v5 (before Kafka 3.8, when only classic groups exist).
func (c *saramaCluster) groupType(group string) (string, error) {
	coord, err := c.admin.Coordinator(group)
	if err != nil {
		return "", err
	}
	resp, err := coord.ListGroups(&sarama.ListGroupsRequest{Version: 5})
	if err != nil {
		return "", err
	}
	if errors.Is(resp.Err, sarama.ErrUnsupportedVersion) {
		return "", nil
	}
	if resp.Err != sarama.ErrNoError {
		return "", fmt.Errorf("list groups: %w", resp.Err)
	}
	if d, ok := resp.GroupsData[group]; ok && d.GroupType != "" {
		return strings.ToLower(d.GroupType), nil
	}
	return "", nil
}

// NotClassicGroupError is a group of another type than classic; it wraps ErrNotClassicGroup.
type NotClassicGroupError struct {
	Group string
	Type  string // as ListGroups names it: consumer, streams, share
}

func (e *NotClassicGroupError) Error() string {
	return fmt.Sprintf("group %s is a %s group, not a classic one: this tool resets applications of group.protocol=classic "+
		"(the default), as Java's kafka-streams-application-reset does; for a streams group (group.protocol=streams, "+
		"KIP-1071) use Apache Kafka's kafka-streams-groups.sh", e.Group, e.Type)
}

// Unwrap returns ErrNotClassicGroup.
func (e *NotClassicGroupError) Unwrap() error { return ErrNotClassicGroup }

func (c *saramaCluster) Members(group string) ([]Member, error) {
	typ, err := c.groupType(group)
	if err != nil {
		return nil, fmt.Errorf("group %s: %w", group, err)
	}
	if typ != "" && typ != "classic" {
		return nil, &NotClassicGroupError{Group: group, Type: typ}
	}
	ds, err := c.admin.DescribeConsumerGroups([]string{group})
	if err != nil {
		return nil, err
	}
	var out []Member
	for _, d := range ds {
		if d.Err != sarama.ErrNoError && !errors.Is(d.Err, sarama.ErrGroupIDNotFound) {
			return nil, fmt.Errorf("describe group %s: %w", group, d.Err)
		}
		for _, id := range slices.Sorted(maps.Keys(d.Members)) {
			m := d.Members[id]
			mem := Member{MemberID: id, ClientID: m.ClientId, Host: m.ClientHost}
			if m.GroupInstanceId != nil {
				mem.GroupInstanceID = *m.GroupInstanceId
			}
			out = append(out, mem)
		}
	}
	return out, nil
}

func (c *saramaCluster) RemoveMembers(group string, members []Member) error {
	coord, err := c.admin.Coordinator(group)
	if err != nil {
		return err
	}
	reason := "member was removed by an admin (kstreams-application-reset --force)"
	req := &sarama.LeaveGroupRequest{Version: 5, GroupId: group}
	for _, m := range members {
		id := sarama.MemberIdentity{MemberId: m.MemberID, Reason: &reason}
		if m.GroupInstanceID != "" {
			inst := m.GroupInstanceID
			id.GroupInstanceId = &inst
		}
		req.Members = append(req.Members, id)
	}
	resp, err := coord.LeaveGroup(req)
	if err != nil {
		return err
	}
	if resp.Err != sarama.ErrNoError {
		return fmt.Errorf("remove members of group %s: %w", group, resp.Err)
	}
	for _, m := range resp.Members {
		if m.Err != sarama.ErrNoError && !errors.Is(m.Err, sarama.ErrUnknownMemberId) {
			return fmt.Errorf("remove member %s of group %s: %w", m.MemberId, group, m.Err)
		}
	}
	return nil
}

func (c *saramaCluster) Topics() (map[string]int32, error) {
	ts, err := c.admin.ListTopics()
	if err != nil {
		return nil, err
	}
	out := make(map[string]int32, len(ts))
	for name, d := range ts {
		out[name] = d.NumPartitions
	}
	return out, nil
}

// listOffsets runs ListOffsets for spec (sarama.OffsetOldest, OffsetNewest or a timestamp).
func (c *saramaCluster) listOffsets(tps []TopicPartition, spec int64) (map[TopicPartition]int64, error) {
	req := map[string]map[int32]int64{}
	for _, tp := range tps {
		if req[tp.Topic] == nil {
			req[tp.Topic] = map[int32]int64{}
		}
		req[tp.Topic][tp.Partition] = spec
	}
	var res map[string]map[int32]*sarama.OffsetResult
	var err error
	for attempt := 0; ; attempt++ {
		res, err = c.admin.ListOffsets(req, nil)
		retry := err == nil && func() bool {
			for _, ps := range res {
				for _, r := range ps {
					if errors.Is(r.Err, sarama.ErrNotLeaderForPartition) || errors.Is(r.Err, sarama.ErrLeaderNotAvailable) {
						return true
					}
				}
			}
			return false
		}()
		if !retry || attempt == 5 {
			break
		}
		_ = c.client.RefreshMetadata()
		time.Sleep(200 * time.Millisecond) // leader moved: retry with fresh metadata, a few times
	}
	if err != nil {
		return nil, err
	}
	out := map[TopicPartition]int64{}
	for _, tp := range tps {
		r := res[tp.Topic][tp.Partition]
		if r == nil {
			return nil, fmt.Errorf("list offsets of %s: no answer", tp)
		}
		if r.Err != nil && !errors.Is(r.Err, sarama.ErrNoError) {
			return nil, fmt.Errorf("list offsets of %s: %w", tp, r.Err)
		}
		if r.Offset >= 0 {
			out[tp] = r.Offset
		}
	}
	return out, nil
}

func (c *saramaCluster) Bounds(tps []TopicPartition) (map[TopicPartition]Bounds, error) {
	lo, err := c.listOffsets(tps, sarama.OffsetOldest)
	if err != nil {
		return nil, err
	}
	hi, err := c.listOffsets(tps, sarama.OffsetNewest)
	if err != nil {
		return nil, err
	}
	out := map[TopicPartition]Bounds{}
	for _, tp := range tps {
		out[tp] = Bounds{Earliest: lo[tp], Latest: hi[tp]}
	}
	return out, nil
}

func (c *saramaCluster) OffsetsForTime(tps []TopicPartition, ms int64) (map[TopicPartition]int64, error) {
	return c.listOffsets(tps, ms)
}

func (c *saramaCluster) Committed(group string, tps []TopicPartition) (map[TopicPartition]int64, error) {
	req := map[string][]int32{}
	for _, tp := range tps {
		req[tp.Topic] = append(req[tp.Topic], tp.Partition)
	}
	resp, err := c.admin.ListConsumerGroupOffsets(group, req)
	if err != nil {
		return nil, err
	}
	if resp.Err != sarama.ErrNoError {
		return nil, fmt.Errorf("fetch offsets of group %s: %w", group, resp.Err)
	}
	out := map[TopicPartition]int64{}
	for _, tp := range tps {
		b := resp.GetBlock(tp.Topic, tp.Partition)
		if b == nil {
			continue
		}
		if b.Err != sarama.ErrNoError {
			return nil, fmt.Errorf("fetch offset of %s for group %s: %w", tp, group, b.Err)
		}
		if b.Offset >= 0 {
			out[tp] = b.Offset
		}
	}
	return out, nil
}

func (c *saramaCluster) Commit(group string, offsets map[TopicPartition]int64) error {
	req := map[string]map[int32]sarama.OffsetAndMetadata{}
	for tp, off := range offsets {
		if req[tp.Topic] == nil {
			req[tp.Topic] = map[int32]sarama.OffsetAndMetadata{}
		}
		req[tp.Topic][tp.Partition] = sarama.OffsetAndMetadata{Offset: off, LeaderEpoch: -1}
	}
	resp, err := c.admin.AlterConsumerGroupOffsets(group, req, nil)
	if err != nil {
		return err
	}
	for topic, ps := range resp.Errors {
		for p, kerr := range ps {
			if kerr != sarama.ErrNoError {
				return fmt.Errorf("commit offset of %s-%d for group %s: %w", topic, p, group, kerr)
			}
		}
	}
	return nil
}

func (c *saramaCluster) DeleteTopics(topics []string) error {
	var errs []error
	for _, t := range topics {
		if err := c.admin.DeleteTopic(t); err != nil && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			errs = append(errs, fmt.Errorf("deleting topic %s: %w", t, err))
		}
	}
	return errors.Join(errs...)
}
