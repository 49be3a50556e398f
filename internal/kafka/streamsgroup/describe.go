package streamsgroup

// StreamsGroupDescribe (API key 89, KIP-1071), version 0, flexible: the fields and their order
// as in Apache Kafka 4.4's StreamsGroupDescribeRequest/Response schemas. (Version 1 adds the
// topology description of KIP-1331, which we do not ask for.)

// APIKeyDescribe is StreamsGroupDescribe's API key.
const APIKeyDescribe int16 = 89

// DescribeRequest is a StreamsGroupDescribe request.
type DescribeRequest struct {
	// GroupIDs are the groups to describe (all on the coordinator the request goes to).
	GroupIDs []string
	// IncludeAuthorizedOperations asks for AuthorizedOperations.
	IncludeAuthorizedOperations bool
}

// Assignment is a member's tasks.
type Assignment struct {
	Active, Standby, Warmup []Tasks
}

// DescribedMember is one member of a described group.
type DescribedMember struct {
	MemberID    string
	MemberEpoch int32
	InstanceID  *string
	RackID      *string
	ClientID    string
	ClientHost  string
	// TopologyEpoch is the epoch of the member's topology.
	TopologyEpoch int32
	// ProcessID is the member's instance's process id.
	ProcessID string
	// UserEndpoint is its application.server; nil when not set.
	UserEndpoint   *Endpoint
	ClientTags     []KeyValue
	TaskOffsets    []TaskOffset
	TaskEndOffsets []TaskOffset
	// Assignment is what it owns now, TargetAssignment what the coordinator wants it to own.
	Assignment, TargetAssignment Assignment
	// IsClassic is true for a classic-protocol member not upgraded yet.
	IsClassic bool
}

// DescribedSubtopology is a sub-topology as the coordinator initialized it (regular
// expressions resolved, partition counts set).
type DescribedSubtopology struct {
	ID                      string
	SourceTopics            []string
	RepartitionSinkTopics   []string
	StateChangelogTopics    []TopicInfo
	RepartitionSourceTopics []TopicInfo
}

// DescribedGroup is one group of a StreamsGroupDescribe response.
type DescribedGroup struct {
	// ErrorCode is the group's Kafka error code (GROUP_ID_NOT_FOUND for a group that is not a
	// streams group, ...); ErrorMessage the broker's text.
	ErrorCode    int16
	ErrorMessage *string
	GroupID      string
	// GroupState is the state as Kafka names it: "Empty", "NotReady", "Assigning",
	// "Reconciling", "Stable" or "Dead" (Apache Kafka 4.4 answers "Stable", "Empty").
	GroupState      string
	GroupEpoch      int32
	AssignmentEpoch int32
	// TopologyEpoch and Subtopologies are the group's topology: HasTopology is false when
	// the response has none (a describe error); Subtopologies is nil when the group is not
	// initialized (missing or wrongly partitioned source topics).
	HasTopology   bool
	TopologyEpoch int32
	Subtopologies []DescribedSubtopology
	Members       []DescribedMember
	// AuthorizedOperations is a bit field of ACL operations; math.MinInt32 when not asked.
	AuthorizedOperations int32
}

// DescribeResponse is a StreamsGroupDescribe response.
type DescribeResponse struct {
	ThrottleTimeMs int32
	Groups         []DescribedGroup
}

func (r *DescribeRequest) encode(e *enc, _ int16) {
	e.compactStrings(r.GroupIDs)
	e.bool(r.IncludeAuthorizedOperations)
	e.noTags()
}

func decodeKeyValues(d *dec) []KeyValue {
	n := d.arrayLen()
	if n < 0 {
		return nil
	}
	out := make([]KeyValue, 0, n)
	for range n {
		kv := KeyValue{Key: d.compactString(), Value: d.compactString()}
		d.skipTags()
		out = append(out, kv)
	}
	return out
}

func decodeTopicInfos(d *dec) []TopicInfo {
	n := d.arrayLen()
	if n < 0 {
		return nil
	}
	out := make([]TopicInfo, 0, n)
	for range n {
		t := TopicInfo{Name: d.compactString(), Partitions: d.int32(), ReplicationFactor: d.int16(), Configs: decodeKeyValues(d)}
		d.skipTags()
		out = append(out, t)
	}
	return out
}

func decodeTaskOffsets(d *dec) []TaskOffset {
	n := d.arrayLen()
	if n < 0 {
		return nil
	}
	out := make([]TaskOffset, 0, n)
	for range n {
		t := TaskOffset{Subtopology: d.compactString(), Partition: d.int32(), Offset: d.int64()}
		d.skipTags()
		out = append(out, t)
	}
	return out
}

func decodeAssignment(d *dec) Assignment {
	a := Assignment{Active: decodeTasks(d), Standby: decodeTasks(d), Warmup: decodeTasks(d)}
	d.skipTags()
	return a
}

func (r *DescribeResponse) decode(d *dec, _ int16) {
	r.ThrottleTimeMs = d.int32()
	n := d.arrayLen()
	for range max(n, 0) {
		var g DescribedGroup
		g.ErrorCode = d.int16()
		g.ErrorMessage = d.compactNullableString()
		g.GroupID = d.compactString()
		g.GroupState = d.compactString()
		g.GroupEpoch = d.int32()
		g.AssignmentEpoch = d.int32()
		if g.HasTopology = d.nullableStruct(); g.HasTopology {
			g.TopologyEpoch = d.int32()
			if ns := d.arrayLen(); ns >= 0 {
				g.Subtopologies = make([]DescribedSubtopology, 0, ns)
				for range ns {
					s := DescribedSubtopology{ID: d.compactString(), SourceTopics: d.compactStrings(),
						RepartitionSinkTopics: d.compactStrings()}
					s.StateChangelogTopics = decodeTopicInfos(d)
					s.RepartitionSourceTopics = decodeTopicInfos(d)
					d.skipTags()
					g.Subtopologies = append(g.Subtopologies, s)
				}
			}
			d.skipTags()
		}
		nm := d.arrayLen()
		for range max(nm, 0) {
			var m DescribedMember
			m.MemberID = d.compactString()
			m.MemberEpoch = d.int32()
			m.InstanceID = d.compactNullableString()
			m.RackID = d.compactNullableString()
			m.ClientID = d.compactString()
			m.ClientHost = d.compactString()
			m.TopologyEpoch = d.int32()
			m.ProcessID = d.compactString()
			if d.nullableStruct() {
				ep := decodeEndpoint(d)
				m.UserEndpoint = &ep
			}
			m.ClientTags = decodeKeyValues(d)
			m.TaskOffsets = decodeTaskOffsets(d)
			m.TaskEndOffsets = decodeTaskOffsets(d)
			m.Assignment = decodeAssignment(d)
			m.TargetAssignment = decodeAssignment(d)
			m.IsClassic = d.bool()
			d.skipTags()
			g.Members = append(g.Members, m)
		}
		g.AuthorizedOperations = d.int32()
		d.skipTags()
		r.Groups = append(r.Groups, g)
	}
	d.skipTags()
}
