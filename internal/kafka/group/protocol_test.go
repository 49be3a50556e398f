package group

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// unhex decodes a hex string with spaces between fields.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tps(topic string, ps ...int32) []kafka.TopicPartition {
	out := make([]kafka.TopicPartition, len(ps))
	for i, p := range ps {
		out[i] = kafka.TopicPartition{Topic: topic, Partition: p}
	}
	return out
}

// The byte vectors follow ConsumerProtocolSubscription.json (versions 0-3, not flexible):
// int16 version prefix; topics: int32 count, int16-length strings; user_data: int32 length
// (-1 null); v1+ owned_partitions: int32 count of (topic, int32 count, int32 partitions); v2+
// generation_id int32; v3+ rack_id int16 length (-1 null).
var subscriptionVectors = []struct {
	name string
	sub  Subscription
	hex  string
}{
	{"v0 null user data", Subscription{Version: 0, Topics: []string{"t"}}, "0000 00000001 0001 74 ffffffff"},
	{"v0 empty user data", Subscription{Version: 0, Topics: []string{"t"}, UserData: []byte{}}, "0000 00000001 0001 74 00000000"},
	{"v1 no owned", Subscription{Version: 1, Topics: []string{"t"}, UserData: []byte{0xab}}, "0001 00000001 0001 74 00000001 ab 00000000"},
	{"v2 generation -1", Subscription{Version: 2, Topics: []string{"t"}, Generation: -1}, "0002 00000001 0001 74 ffffffff 00000000 ffffffff"},
	{"v3 null rack", Subscription{Version: 3, Topics: []string{"t"}, Generation: 7}, "0003 00000001 0001 74 ffffffff 00000000 00000007 ffff"},
	{"v3 full", Subscription{Version: 3, Topics: []string{"a", "b"}, UserData: []byte{1, 2},
		Owned: append(tps("a", 0, 1), tps("b", 2)...), Generation: 5, Rack: "r1"},
		"0003 00000002 0001 61 0001 62 00000002 0102 00000002 0001 61 00000002 00000000 00000001 0001 62 00000001 00000002 00000005 0002 7231"},
}

func TestSubscriptionVectors(t *testing.T) {
	for _, c := range subscriptionVectors {
		t.Run(c.name, func(t *testing.T) {
			want := unhex(t, c.hex)
			got, err := EncodeSubscription(c.sub)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("EncodeSubscription = %x, want %x", got, want)
			}
			dec, err := DecodeSubscription(want)
			if err != nil {
				t.Fatal(err)
			}
			exp := c.sub
			if exp.Version < 2 {
				exp.Generation = -1
			}
			if !reflect.DeepEqual(dec, exp) {
				t.Fatalf("DecodeSubscription = %+v, want %+v", dec, exp)
			}
		})
	}
}

// Java sorts the topics and owned partitions it sends; so does EncodeSubscription.
func TestSubscriptionSorted(t *testing.T) {
	s := Subscription{Version: 3, Topics: []string{"b", "a"}, Generation: 5, Rack: "r1", UserData: []byte{1, 2},
		Owned: []kafka.TopicPartition{{Topic: "b", Partition: 2}, {Topic: "a", Partition: 1}, {Topic: "a", Partition: 0}}}
	got, err := EncodeSubscription(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := unhex(t, subscriptionVectors[len(subscriptionVectors)-1].hex); !bytes.Equal(got, want) {
		t.Fatalf("EncodeSubscription = %x, want %x", got, want)
	}
	if s.Topics[0] != "b" || s.Owned[0].Topic != "b" {
		t.Fatal("EncodeSubscription sorted its input in place")
	}
}

// sarama's ConsumerGroupMemberMetadata encodes the same bytes for every version, and decodes
// ours to the same fields.
func TestSubscriptionMatchesSarama(t *testing.T) {
	rack := "rack-1"
	for v := int16(0); v <= 3; v++ {
		s := Subscription{Version: v, Topics: []string{"alpha", "beta"}, UserData: []byte("user-data"), Generation: -1}
		sm := &sarama.ConsumerGroupMemberMetadata{Version: v, Topics: []string{"alpha", "beta"}, UserData: []byte("user-data")}
		if v >= 1 {
			s.Owned = append(tps("alpha", 0, 3), tps("beta", 1)...)
			sm.OwnedPartitions = []*sarama.OwnedPartition{{Topic: "alpha", Partitions: []int32{0, 3}}, {Topic: "beta", Partitions: []int32{1}}}
		}
		if v >= 2 {
			s.Generation, sm.GenerationID = 12, 12
		}
		if v >= 3 {
			s.Rack, sm.RackID = rack, &rack
		}
		req := &sarama.JoinGroupRequest{}
		if err := req.AddGroupProtocolMetadata("x", sm); err != nil {
			t.Fatal(err)
		}
		want := req.OrderedGroupProtocols[0].Metadata
		got, err := EncodeSubscription(s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("v%d: EncodeSubscription = %x, sarama %x", v, got, want)
		}
		resp := &sarama.JoinGroupResponse{Members: []sarama.GroupMember{{MemberId: "m", Metadata: got}}}
		ms, err := resp.GetMembers()
		if err != nil {
			t.Fatal(err)
		}
		back := ms["m"]
		if back.Version != v || !slices.Equal(back.Topics, s.Topics) || !bytes.Equal(back.UserData, s.UserData) ||
			(v >= 2 && back.GenerationID != 12) || (v >= 3 && (back.RackID == nil || *back.RackID != rack)) ||
			(v >= 1 && len(back.OwnedPartitions) != 2) {
			t.Fatalf("v%d: sarama decodes %+v", v, back)
		}
	}
}

// A version above 3 is read in the version 3 layout and trailing bytes are ignored, as Java's
// ConsumerProtocol does.
func TestSubscriptionFutureVersion(t *testing.T) {
	b := unhex(t, "0004 00000001 0001 74 ffffffff 00000000 00000009 0001 72 deadbeef")
	s, err := DecodeSubscription(b)
	if err != nil {
		t.Fatal(err)
	}
	want := Subscription{Version: 4, Topics: []string{"t"}, Generation: 9, Rack: "r"}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("DecodeSubscription = %+v, want %+v", s, want)
	}
	if _, err := EncodeSubscription(Subscription{Version: 4}); err == nil {
		t.Fatal("EncodeSubscription accepted version 4")
	}
}

func TestSubscriptionMalformed(t *testing.T) {
	full := unhex(t, subscriptionVectors[len(subscriptionVectors)-1].hex)
	// Every truncation of a v3 message lacks a field.
	for n := 0; n < len(full); n++ {
		if _, err := DecodeSubscription(full[:n]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("DecodeSubscription of %d of %d bytes: %v, want ErrMalformed", n, len(full), err)
		}
	}
	for _, c := range []struct{ name, hex string }{
		{"negative version", "ffff 00000000 ffffffff"},
		{"null topics", "0000 ffffffff ffffffff"},
		{"null topic", "0000 00000001 ffff ffffffff"},
		{"huge topic count", "0000 7fffffff 0001 74"},
		{"null owned", "0001 00000000 ffffffff ffffffff"},
		{"null owned partitions", "0001 00000000 ffffffff 00000001 0001 74 ffffffff"},
		{"user data longer than the message", "0000 00000000 00000010 0102"},
		{"garbage", "6761726261676521"},
	} {
		if _, err := DecodeSubscription(unhex(t, c.hex)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", c.name, err)
		}
	}
}

// ConsumerProtocolAssignment.json: int16 version; assigned_partitions: int32 count of (topic,
// int32 count, int32 partitions); user_data: int32 length (-1 null). Java groups partitions by
// topic in the order topics first appear.
func TestAssignmentVectors(t *testing.T) {
	for _, c := range []struct {
		name string
		a    Assignment
		hex  string
	}{
		{"v0 empty", Assignment{Version: 0}, "0000 00000000 ffffffff"},
		{"v3 empty user data", Assignment{Version: 3, UserData: []byte{}}, "0003 00000000 00000000"},
		{"v3 two topics", Assignment{Version: 3, Partitions: append(tps("t", 1, 0), tps("u", 5)...), UserData: []byte{9}},
			"0003 00000002 0001 74 00000002 00000001 00000000 0001 75 00000001 00000005 00000001 09"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := unhex(t, c.hex)
			got, err := EncodeAssignment(c.a)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("EncodeAssignment = %x, want %x", got, want)
			}
			dec, err := DecodeAssignment(want)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(dec, c.a) {
				t.Fatalf("DecodeAssignment = %+v, want %+v", dec, c.a)
			}
		})
	}
	// Partitions of one topic that are not adjacent still go into one entry.
	got, err := EncodeAssignment(Assignment{Version: 3, Partitions: []kafka.TopicPartition{{Topic: "t", Partition: 1}, {Topic: "u", Partition: 5}, {Topic: "t", Partition: 0}}, UserData: []byte{9}})
	if err != nil {
		t.Fatal(err)
	}
	if want := unhex(t, "0003 00000002 0001 74 00000002 00000001 00000000 0001 75 00000001 00000005 00000001 09"); !bytes.Equal(got, want) {
		t.Fatalf("EncodeAssignment = %x, want %x", got, want)
	}
}

func TestAssignmentMatchesSarama(t *testing.T) {
	for v := int16(0); v <= 3; v++ {
		sa := &sarama.ConsumerGroupMemberAssignment{Version: v, Topics: map[string][]int32{"topic": {4, 2, 0}}, UserData: []byte("ud")}
		req := &sarama.SyncGroupRequest{}
		if err := req.AddGroupAssignmentMember("m", sa); err != nil {
			t.Fatal(err)
		}
		want := req.GroupAssignments[0].Assignment
		a := Assignment{Version: v, Partitions: tps("topic", 4, 2, 0), UserData: []byte("ud")}
		got, err := EncodeAssignment(a)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("v%d: EncodeAssignment = %x, sarama %x", v, got, want)
		}
		dec, err := DecodeAssignment(want)
		if err != nil || !reflect.DeepEqual(dec, a) {
			t.Fatalf("v%d: DecodeAssignment of sarama's bytes = %+v, %v; want %+v", v, dec, err, a)
		}
	}
	// Several topics: compare through sarama's decoder (its map has no order).
	a := Assignment{Version: 3, Partitions: append(tps("a", 0, 1), tps("b", 7)...), UserData: nil}
	b, err := EncodeAssignment(a)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := (&sarama.SyncGroupResponse{MemberAssignment: b}).GetMemberAssignment()
	if err != nil {
		t.Fatal(err)
	}
	if sa.Version != 3 || !reflect.DeepEqual(sa.Topics, map[string][]int32{"a": {0, 1}, "b": {7}}) || sa.UserData != nil {
		t.Fatalf("sarama decodes %+v", sa)
	}
}

func TestAssignmentMalformed(t *testing.T) {
	full := unhex(t, "0003 00000002 0001 74 00000002 00000001 00000000 0001 75 00000001 00000005 00000001 09")
	for n := 0; n < len(full); n++ {
		if _, err := DecodeAssignment(full[:n]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("DecodeAssignment of %d of %d bytes: %v, want ErrMalformed", n, len(full), err)
		}
	}
	for _, h := range []string{"ffff 00000000 ffffffff", "0000 ffffffff ffffffff", "0000 00000001 0001 74 ffffffff ffffffff", "0000 10000000"} {
		if _, err := DecodeAssignment(unhex(t, h)); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeAssignment(%s): %v, want ErrMalformed", h, err)
		}
	}
	// A future version with trailing bytes decodes.
	a, err := DecodeAssignment(unhex(t, "0005 00000000 ffffffff 0102"))
	if err != nil || a.Version != 5 || len(a.Partitions) != 0 || a.UserData != nil {
		t.Fatalf("DecodeAssignment of v5 = %+v, %v", a, err)
	}
}
