package protoprint_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/apipb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/typepb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/kstreams-go/kstreams/serde/protobuf/internal/pbschema"
	"github.com/kstreams-go/kstreams/serde/protobuf/internal/protoprint"
)

const rich3 = `syntax = "proto3";
package io.kstreams.test;
import "google/protobuf/timestamp.proto";
option java_package = "io.kstreams.test.gen";
option java_outer_classname = "Wörld\"s";
option java_multiple_files = true;
option go_package = "example.com/gen;gen";

message Order {
  option deprecated = true;
  string id = 1;
  int64 amount_cents = 2 [json_name = "cents"];
  repeated Line lines = 3;
  map<string, int32> tags = 4;
  optional string note = 5;
  oneof payment {
    string card = 10;
    Bank bank = 11;
  }
  google.protobuf.Timestamp at = 6;
  Status status = 7;
  repeated sint32 packed_off = 8 [packed = false];
  bytes blob = 9 [deprecated = true];
  reserved 20 to 25, 100;
  reserved "old", "older";
  message Line {
    string sku = 1;
    uint32 qty = 2;
    message Detail { double weight = 1; }
    Detail detail = 3;
  }
  message Bank { fixed64 account = 1; sfixed32 branch = 2; }
  enum Status { option allow_alias = true; UNKNOWN = 0; OPEN = 1; STARTED = 1; CLOSED = 2; reserved 10 to max; reserved "GONE"; }
}
message Empty {}
enum Top { TOP_ZERO = 0; TOP_ONE = 1; }
service Orders {
  rpc Get(Order) returns (Order);
  rpc Watch(stream Empty) returns (stream Order) { option deprecated = true; }
}
`

const rich2 = `syntax = "proto2";
package p2;
message M {
  required int32 a = 1 [default = -7];
  optional string s = 2 [default = "q\"\\\001z"];
  optional bytes b = 3 [default = "\377\000"];
  optional double d = 4 [default = inf];
  optional float f = 5 [default = 1.5];
  optional E e = 6 [default = E_TWO];
  repeated int32 r = 7 [packed = true];
  optional bool t = 8 [default = true];
  extensions 100 to 199, 1000 to max;
  enum E { E_ONE = 1; E_TWO = 2; }
}
extend M { optional int64 ext_a = 100; repeated string ext_b = 101; }
`

func normalized(t *testing.T, fd protoreflect.FileDescriptor) *descriptorpb.FileDescriptorProto {
	t.Helper()
	p := protodesc.ToFileDescriptorProto(fd)
	p.Name = nil
	p.SourceCodeInfo = nil
	return p
}

func roundTrip(t *testing.T, fd protoreflect.FileDescriptor) string {
	t.Helper()
	text, err := protoprint.Print(fd)
	if err != nil {
		t.Fatal(err)
	}
	again, err := pbschema.Compile(context.Background(), text, nil)
	if err != nil {
		t.Fatalf("printed text does not compile: %v\n%s", err, text)
	}
	if a, b := normalized(t, fd), normalized(t, again); !proto.Equal(a, b) {
		t.Fatalf("%s: descriptor changed through the printer\nprinted:\n%s\nbefore: %v\nafter:  %v", fd.Path(), text, a, b)
	}
	return text
}

// TestRoundTrip prints compiled schemas and compiles the text again: the descriptors must be
// equal (bar file name and source info).
func TestRoundTrip(t *testing.T) {
	for _, src := range []string{rich3, rich2} {
		fd, err := pbschema.Compile(context.Background(), src, nil)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, fd)
	}
}

// TestRoundTripWellKnown prints descriptors compiled by protoc into the protobuf Go module
// (descriptor.proto is proto2 with extension ranges and defaults).
func TestRoundTripWellKnown(t *testing.T) {
	for _, m := range []proto.Message{&descriptorpb.FileDescriptorProto{}, &timestamppb.Timestamp{},
		&structpb.Struct{}, &wrapperspb.Int64Value{}, &typepb.Type{}, &apipb.Api{}} {
		roundTrip(t, m.ProtoReflect().Descriptor().ParentFile())
	}
}

func TestGroupsRefused(t *testing.T) {
	fd, err := pbschema.Compile(context.Background(), `syntax = "proto2"; message G { optional group X = 1 { optional int32 a = 2; } }`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := protoprint.Print(fd); err == nil {
		t.Fatal("Print of a group succeeded")
	}
}
