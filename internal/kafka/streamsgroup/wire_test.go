package streamsgroup

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"reflect"
	"testing"
	"time"
)

// A leave heartbeat, every optional field null, byte by byte from the schema: compact strings
// (length+1), int32s, null compact strings and arrays as 0, null structs as -1, no tags.
func TestHeartbeatRequestBytes(t *testing.T) {
	var e enc
	(&HeartbeatRequest{GroupID: "g", MemberID: "m", MemberEpoch: LeaveEpoch, RebalanceTimeoutMs: -1}).encode(&e, 1)
	want := []byte{
		0x02, 'g', // GroupId
		0x02, 'm', // MemberId
		0xff, 0xff, 0xff, 0xff, // MemberEpoch -1
		0, 0, 0, 0, // EndpointInformationEpoch
		0,                      // InstanceId null
		0,                      // RackId null
		0xff, 0xff, 0xff, 0xff, // RebalanceTimeoutMs -1
		0xff,    // Topology null
		0, 0, 0, // Active, Standby, Warmup tasks null
		0,    // ProcessId null
		0xff, // UserEndpoint null
		0,    // ClientTags null
		0, 0, // TaskOffsets, TaskEndOffsets null
		0, // ShutdownApplication
		0, // tagged fields
	}
	if !bytes.Equal(e.b, want) {
		t.Fatalf("leave heartbeat\n got % x\nwant % x", e.b, want)
	}

	// A join's topology and tasks.
	e = enc{}
	(&HeartbeatRequest{GroupID: "g", MemberID: "m", RebalanceTimeoutMs: 300, ActiveTasks: []Tasks{{Subtopology: "0", Partitions: []int32{1}}},
		Topology: &Topology{Epoch: 0, Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{"t"},
			StateChangelogTopics: []TopicInfo{{Name: "c", Configs: []KeyValue{{"k", "v"}}}},
			CopartitionGroups:    []CopartitionGroup{{SourceTopics: []int16{0}}}}}},
		UserEndpoint: &Endpoint{Host: "h", Port: 9092}}).encode(&e, 1)
	want = []byte{
		0x02, 'g', 0x02, 'm', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x2c,
		1,          // Topology present
		0, 0, 0, 0, // Epoch
		0x02,      // one subtopology
		0x02, '0', // SubtopologyId
		0x02, 0x02, 't', // SourceTopics ["t"]
		0x01,                                                                // SourceTopicRegex []
		0x02, 0x02, 'c', 0, 0, 0, 0, 0, 0, 0x02, 0x02, 'k', 0x02, 'v', 0, 0, // StateChangelogTopics [{c, 0, 0, [{k v}]}]
		0x01,                            // RepartitionSinkTopics []
		0x01,                            // RepartitionSourceTopics []
		0x02, 0x02, 0, 0, 0x01, 0x01, 0, // CopartitionGroups [{[0] [] []}]
		0,                                    // subtopology tags
		0,                                    // topology tags
		0x02, 0x02, '0', 0x02, 0, 0, 0, 1, 0, // ActiveTasks [{0 [1]}]
		0, 0, // Standby, Warmup null
		0,                           // ProcessId null
		1, 0x02, 'h', 0x23, 0x84, 0, // UserEndpoint {h 9092}
		0, 0, 0, 0, 0,
	}
	if !bytes.Equal(e.b, want) {
		t.Fatalf("join heartbeat\n got % x\nwant % x", e.b, want)
	}
}

// Task offsets and end offsets (Java 4.4's StreamsGroupHeartbeatRequest schema: TaskOffsets and
// TaskEndOffsets, nullable compact arrays of TaskOffset {SubtopologyId: compact string,
// Partition: int32, Offset: int64, tagged fields}, after ClientTags and before
// ShutdownApplication), byte by byte.
func TestHeartbeatRequestTaskOffsetBytes(t *testing.T) {
	var e enc
	(&HeartbeatRequest{GroupID: "g", MemberID: "m", MemberEpoch: 7, RebalanceTimeoutMs: -1,
		TaskOffsets:    []TaskOffset{{Subtopology: "0", Partition: 2, Offset: 1234}, {Subtopology: "1", Partition: 0, Offset: 0x0102030405}},
		TaskEndOffsets: []TaskOffset{}}).encode(&e, 1)
	want := []byte{
		0x02, 'g', 0x02, 'm',
		0, 0, 0, 7, // MemberEpoch
		0, 0, 0, 0, // EndpointInformationEpoch
		0, 0, // InstanceId, RackId null
		0xff, 0xff, 0xff, 0xff, // RebalanceTimeoutMs -1
		0xff,    // Topology null
		0, 0, 0, // tasks null
		0, 0xff, 0, // ProcessId, UserEndpoint, ClientTags null
		0x03,                                                   // TaskOffsets: two
		0x02, '0', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0x04, 0xd2, 0, // {"0", 2, 1234}
		0x02, '1', 0, 0, 0, 0, 0, 0, 0, 0x01, 0x02, 0x03, 0x04, 0x05, 0, // {"1", 0, 0x0102030405}
		0x01, // TaskEndOffsets: empty, not null
		0,    // ShutdownApplication
		0,    // tagged fields
	}
	if !bytes.Equal(e.b, want) {
		t.Fatalf("task offsets\n got % x\nwant % x", e.b, want)
	}
}

// encodeResponse writes r in version v: the test's mirror of decode, from the schema.
func encodeResponse(r *HeartbeatResponse, v int16) []byte {
	var e enc
	e.int32(r.ThrottleTimeMs)
	e.int16(r.ErrorCode)
	e.compactNullableString(r.ErrorMessage)
	e.compactString(r.MemberID)
	e.int32(r.MemberEpoch)
	e.int32(r.HeartbeatIntervalMs)
	if v == 0 {
		e.int32(int32(r.AcceptableRecoveryLag))
	}
	e.int32(r.TaskOffsetIntervalMs)
	if v >= 1 {
		e.int64(r.AcceptableRecoveryLag)
	}
	e.compactArrayLen(len(r.Status))
	for _, s := range r.Status {
		e.int8(s.Code)
		e.compactString(s.Detail)
		e.noTags()
	}
	encodeTasks(&e, r.ActiveTasks)
	encodeTasks(&e, r.StandbyTasks)
	encodeTasks(&e, r.WarmupTasks)
	if v >= 1 {
		e.bool(r.TopologyDescriptionRequired)
	}
	e.int32(r.EndpointInformationEpoch)
	e.compactArrayLen(len(r.PartitionsByUserEndpoint))
	for _, p := range r.PartitionsByUserEndpoint {
		e.compactString(p.Endpoint.Host)
		e.uint16(p.Endpoint.Port)
		e.noTags()
		for _, tps := range [][]TopicPartitions{p.Active, p.Standby} {
			e.compactArrayLen(len(tps))
			for _, tp := range tps {
				e.compactString(tp.Topic)
				e.compactInt32s(tp.Partitions)
				e.noTags()
			}
		}
		e.noTags()
	}
	// An unknown tagged field, which decode skips.
	e.uvarint(1)
	e.uvarint(7)
	e.uvarint(2)
	e.b = append(e.b, 0xab, 0xcd)
	return e.b
}

// Responses decode to what was encoded, in both versions; every truncation of one is
// ErrMalformed, never a panic.
func TestHeartbeatResponseDecode(t *testing.T) {
	msg := "m"
	for _, v := range []int16{0, 1} {
		r := &HeartbeatResponse{ErrorCode: 0, ErrorMessage: &msg, MemberID: "id", MemberEpoch: 7, HeartbeatIntervalMs: 5000,
			AcceptableRecoveryLag: 10000, TaskOffsetIntervalMs: 60000, Status: []Status{{Code: StatusMissingInternalTopics, Detail: "x"}},
			ActiveTasks: []Tasks{{Subtopology: "0", Partitions: []int32{0, 1}}}, StandbyTasks: []Tasks{}, WarmupTasks: nil,
			TopologyDescriptionRequired: v >= 1, EndpointInformationEpoch: 3,
			PartitionsByUserEndpoint: []EndpointPartitions{{Endpoint: Endpoint{Host: "h", Port: 1},
				Active: []TopicPartitions{{Topic: "t", Partitions: []int32{0}}}, Standby: []TopicPartitions{}}}}
		b := encodeResponse(r, v)
		var got HeartbeatResponse
		d := dec{b: b}
		got.decode(&d, v)
		if err := d.done(); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if !reflect.DeepEqual(&got, r) {
			t.Fatalf("v%d: decoded\n%+v\nwant\n%+v", v, got, *r)
		}
		for n := range len(b) {
			var r2 HeartbeatResponse
			d := dec{b: b[:n]}
			r2.decode(&d, v)
			if err := d.done(); !errors.Is(err, ErrMalformed) {
				t.Fatalf("v%d: %d of %d bytes: %v, want ErrMalformed", v, n, len(b), err)
			}
		}
	}
}

// A request under way ends when its context does: the connection is closed, and Heartbeat
// returns the context's error at once (the fake broker answers ApiVersions, then nothing).
func TestHeartbeatContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		var size [4]byte
		if _, err := io.ReadFull(nc, size[:]); err != nil {
			return
		}
		req := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(nc, req); err != nil {
			return
		}
		// ApiVersions v3's answer under response header v0: StreamsGroupHeartbeat 0-1.
		var e enc
		e.int32(0)
		e.b = append(e.b, req[4:8]...) // correlation id
		e.int16(0)
		e.compactArrayLen(1)
		e.int16(APIKeyHeartbeat)
		e.int16(0)
		e.int16(1)
		e.noTags()
		e.int32(0)
		e.noTags()
		binary.BigEndian.PutUint32(e.b, uint32(len(e.b)-4))
		_, _ = nc.Write(e.b)
		_, _ = io.Copy(io.Discard, nc) // read the heartbeat, never answer
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, ln.Addr().String(), Config{ClientID: "t", ReadTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, ok := c.Versions(APIKeyDescribe); ok {
		t.Fatal("describe listed")
	}
	if _, err := c.Describe(ctx, &DescribeRequest{GroupIDs: []string{"g"}}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("describe: %v, want ErrUnsupported", err)
	}
	hctx, hcancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, hcancel)
	_, err = c.Heartbeat(hctx, &HeartbeatRequest{GroupID: "g", MemberID: "m"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("heartbeat: %v, want context.Canceled", err)
	}
}
