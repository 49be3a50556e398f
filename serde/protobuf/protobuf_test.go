package protobuf_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/serde/internal/srfake"
	"github.com/kstreams-go/kstreams/serde/protobuf"
	"github.com/kstreams-go/kstreams/serde/protobuf/internal/testpb"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTypedNestedMessageIndexes serializes generated messages declared at each depth of
// shop.proto and checks the header and message indexes byte for byte (worked out by hand
// from the wire format), and that each decodes back equal.
func TestTypedNestedMessageIndexes(t *testing.T) {
	reg := srfake.New(t)
	c := reg.Client()
	cases := []struct {
		msg     proto.Message
		indexes string // after the 5-byte header
	}{
		{&testpb.Customer{Id: "c1"}, "00"},                    // [0]
		{&testpb.Order{Id: "o1"}, "02 02"},                    // [1]
		{&testpb.Order_Line{Sku: "s"}, "04 02 00"},            // [1 0]
		{&testpb.Order_Line_Detail{Text: "d"}, "06 02 00 00"}, // [1 0 0]
		{&testpb.Order_Bank{Iban: "DE"}, "04 02 02"},          // [1 1]: the map entry of tags not counted
	}
	for _, tc := range cases {
		var got []byte
		var err error
		var back proto.Message
		switch m := tc.msg.(type) {
		case *testpb.Customer:
			got, back, err = roundTrip(t, c, m)
		case *testpb.Order:
			got, back, err = roundTrip(t, c, m)
		case *testpb.Order_Line:
			got, back, err = roundTrip(t, c, m)
		case *testpb.Order_Line_Detail:
			got, back, err = roundTrip(t, c, m)
		case *testpb.Order_Bank:
			got, back, err = roundTrip(t, c, m)
		}
		if err != nil {
			t.Fatalf("%T: %v", tc.msg, err)
		}
		body, _ := proto.Marshal(tc.msg)
		want := append(append([]byte{0, 0, 0, 0, 2}, mustHex(t, tc.indexes)...), body...)
		if !bytes.Equal(got, want) {
			t.Errorf("%T: wrote % x; want % x", tc.msg, got, want)
		}
		if !proto.Equal(back, tc.msg) {
			t.Errorf("%T: decoded %v; want %v", tc.msg, back, tc.msg)
		}
	}
	// shop.proto imports common.proto, registered first (id 1) as a reference under its
	// import path; shop.proto itself got id 2.
	common, err := srapi.Of(c).Latest(context.Background(), "common.proto")
	if err != nil || common.ID != 1 || !strings.Contains(common.Schema, "message Money") {
		t.Fatalf("reference subject common.proto: %+v, %v", common, err)
	}
	shop, err := srapi.Of(c).SchemaByID(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(shop.References) != 1 || shop.References[0] != (srapi.Reference{Name: "common.proto", Subject: "common.proto", Version: 1}) ||
		shop.SchemaType != "PROTOBUF" {
		t.Fatalf("registered shop schema: %+v", shop)
	}
}

func roundTrip[T proto.Message](t *testing.T, c *registry.Client, m T) ([]byte, proto.Message, error) {
	s, err := protobuf.New[T](c)
	if err != nil {
		return nil, nil, err
	}
	b, err := s.Serialize("shop", nil, m)
	if err != nil {
		return nil, nil, err
	}
	back, err := s.Deserialize("shop", nil, b)
	return b, back, err
}

// TestFieldOrder writes an Order whose oneof member (field 2) sits between other fields,
// with a map of two keys: fields must come in number order, as protobuf-java writes them,
// from both the typed serde and the dynamic serde (whose marshaling is done here), and the
// expected body is spelled out by hand.
func TestFieldOrder(t *testing.T) {
	reg := srfake.New(t)
	c := reg.Client()
	order := &testpb.Order{Id: "o", Payment: &testpb.Order_Card{Card: "v"}, Quantity: 3,
		Tags: map[string]string{"b": "2", "a": "1"}, Gift: proto.Bool(false)}
	want := mustHex(t, "00 00000002 0202"+
		"0a 01 6f"+ // 1: id "o"
		"12 01 76"+ // 2: card "v" (oneof)
		"18 03"+ // 3: quantity 3
		"2a 06 0a 01 61 12 01 31"+ // 5: tags {a: 1}
		"2a 06 0a 01 62 12 01 32"+ // 5: tags {b: 2}
		"50 00") // 10: gift false (explicit presence)
	typed, err := protobuf.New[*testpb.Order](c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := typed.Serialize("shop", nil, order)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("typed wrote % x, %v\nwant       % x", got, err, want)
	}
	// The dynamic serde compiles the text the typed serde registered (id 2, after its import).
	typedSchema, err := srapi.Of(c).SchemaByID(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := protobuf.NewDynamic(c, typedSchema.Schema, protobuf.WithReferences(registry.Reference{Name: "common.proto", Subject: "common.proto", Version: 1}))
	if err != nil {
		t.Fatal(err)
	}
	dm := dynamicpb.NewMessage(dyn.Descriptor("kstreams.test.shop.Order"))
	js, _ := protojson.Marshal(order)
	if err := protojson.Unmarshal(js, dm); err != nil {
		t.Fatal(err)
	}
	got, err = dyn.Serialize("shop", nil, dm)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("dynamic wrote % x, %v\nwant         % x", got, err, want)
	}
	back, err := dyn.Deserialize("shop", nil, got)
	if err != nil {
		t.Fatal(err)
	}
	// The writer schema is compiled anew from the registry, so compare the JSON forms
	// (proto.Equal wants the same descriptor).
	if bj, _ := protojson.Marshal(back); string(bj) != string(js) {
		t.Fatalf("dynamic decoded %T %s; want %s", back, bj, js)
	}
}

// TestDynamicNested compiles schema text at run time and serializes a message nested two
// deep and one declared after a map field.
func TestDynamicNested(t *testing.T) {
	reg := srfake.New(t)
	text := `syntax = "proto3";
package n;
message A { int32 x = 1; }
message B {
  map<string, A> m = 1;
  message C { message D { sint64 v = 1; } }
  message E { bool f = 1; }
}
`
	s, err := protobuf.NewDynamic(reg.Client(), text)
	if err != nil {
		t.Fatal(err)
	}
	for name, idx := range map[string]string{"n.A": "00", "n.B": "02 02", "n.B.C": "04 02 00", "n.B.C.D": "06 02 00 00", "n.B.E": "04 02 02"} {
		md := s.Descriptor(name)
		if md == nil {
			t.Fatalf("no %s", name)
		}
		m := dynamicpb.NewMessage(md)
		b, err := s.Serialize("t", nil, m)
		if err != nil {
			t.Fatal(err)
		}
		if want := "0000000001" + strings.ReplaceAll(idx, " ", ""); hex.EncodeToString(b) != want {
			t.Errorf("%s: wrote %x; want %s", name, b, want)
		}
		back, err := s.Deserialize("t", nil, b)
		if err != nil || string(back.ProtoReflect().Descriptor().FullName()) != name {
			t.Errorf("%s: decoded %v, %v", name, back, err)
		}
	}
}

func TestNullsAndErrors(t *testing.T) {
	reg := srfake.New(t)
	s, err := protobuf.New[*testpb.Customer](reg.Client())
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s.Serialize("t", nil, nil); b != nil || err != nil {
		t.Fatalf("nil message: %x, %v", b, err)
	}
	if v, err := s.Deserialize("t", nil, nil); v != nil || err != nil {
		t.Fatalf("nil bytes: %v, %v", v, err)
	}
	if reg.Requests() != 0 {
		t.Fatalf("nulls made %d registry requests", reg.Requests())
	}
	for _, c := range []struct {
		data []byte
		want error
	}{
		{[]byte{0, 0, 0}, serde.ErrCorrupt},
		{[]byte{1, 0, 0, 0, 1, 0}, serde.ErrCorrupt},
		{[]byte{0, 0, 0, 0, 1, 0x04, 0x02}, serde.ErrCorrupt},
		{[]byte{0, 0, 0, 0, 9, 0}, registry.ErrNotFound},
	} {
		_, err := s.Deserialize("t", nil, c.data)
		var pe *serde.Error
		if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.Topic != "t" {
			t.Errorf("Deserialize(% x) err = %v; want %v", c.data, err, c.want)
		}
	}
	if _, err := s.Deserialize("t", nil, []byte{0, 0, 0, 0, 1, 0}); !errors.Is(err, serde.ErrCorrupt) && !errors.Is(err, registry.ErrNotFound) {
		t.Fatal(err)
	}
	// A dynamic serde cannot write a message its schema does not declare.
	d, err := protobuf.NewDynamic(reg.Client(), `syntax = "proto3"; package x; message Y { int32 a = 1; }`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Serialize("t", nil, &testpb.Customer{Id: "c"}); !errors.Is(err, serde.ErrInvalidValue) {
		t.Fatalf("foreign message: %v", err)
	}
	// Schema text that does not compile names the line.
	_, err = protobuf.NewDynamic(reg.Client(), "syntax = \"proto3\";\nmessage Z {\n  int32 a = 1\n}\n")
	if !errors.Is(err, protobuf.ErrInvalidSchema) || !strings.Contains(err.Error(), ":4:") {
		t.Fatalf("bad text: %v", err)
	}
	// A dynamic serde reading bytes whose indexes name no message.
	b, _ := d.Serialize("t", nil, dynamicpb.NewMessage(d.Descriptor("x.Y")))
	bad := append(append([]byte{}, b[:5]...), 0x02, 0x04)
	if _, err := d.Deserialize("t", nil, bad); !errors.Is(err, serde.ErrCorrupt) {
		t.Fatalf("out-of-range index: %v", err)
	}
	corrupt := append(append([]byte{}, b...), 0x0a, 0x05, 0x01)
	if _, err := d.Deserialize("t", nil, corrupt); !errors.Is(err, serde.ErrCorrupt) {
		t.Fatalf("truncated body: %v", err)
	}
}

// TestUseLatestAndLookUp: without auto-registration the schema must be registered; with
// use.latest.version the latest schema's id and the message's indexes in it are used.
func TestUseLatestAndLookUp(t *testing.T) {
	reg := srfake.New(t)
	c := reg.Client()
	s, _ := protobuf.New[*timestamppb.Timestamp](c, protobuf.WithAutoRegister(false))
	ts := timestamppb.New(timestamppb.Now().AsTime())
	if _, err := s.Serialize("ts", nil, ts); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("unregistered: %v", err)
	}
	// Register a newer schema under the subject where Timestamp is the second message.
	reg.Register("ts-value", srapi.Schema{SchemaType: "PROTOBUF", Schema: `syntax = "proto3";
package google.protobuf;
message Other { string s = 1; }
message Timestamp { int64 seconds = 1; int32 nanos = 2; }`})
	latest, _ := protobuf.New[*timestamppb.Timestamp](c, protobuf.WithUseLatestVersion(true))
	b, err := latest.Serialize("ts", nil, ts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[:7], []byte{0, 0, 0, 0, 1, 0x02, 0x02}) {
		t.Fatalf("use latest wrote % x", b)
	}
	back, err := latest.Deserialize("ts", nil, b)
	if err != nil || !proto.Equal(back, ts) {
		t.Fatalf("decoded %v, %v", back, err)
	}
}

func TestOptionsFromProperties(t *testing.T) {
	reg := srfake.New(t)
	opts, err := protobuf.OptionsFromProperties(map[string]string{"auto.register.schemas": "true",
		"value.subject.name.strategy": "io.confluent.kafka.serializers.subject.RecordNameStrategy"}, false)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := protobuf.New[*testpb.Customer](reg.Client(), opts...)
	if _, err := s.Serialize("t", nil, &testpb.Customer{Id: "x"}); err != nil {
		t.Fatal(err)
	}
	if got, err := srapi.Of(reg.Client()).Latest(context.Background(), "kstreams.test.shop.Customer"); err != nil || got.ID != 2 {
		t.Fatalf("record-name subject: %+v, %v", got, err)
	}
	if _, err := protobuf.OptionsFromProperties(map[string]string{"use.latest.version": "yes"}, true); err == nil {
		t.Fatal("bad boolean accepted")
	}
	if _, err := protobuf.OptionsFromProperties(map[string]string{"key.subject.name.strategy": "Nope"}, true); err == nil {
		t.Fatal("unknown strategy accepted")
	}
}

// TestConcurrentUse shares one typed and one dynamic serde between goroutines (run under
// -race): first registrations, schema compilation per id and the caches race here.
func TestConcurrentUse(t *testing.T) {
	reg := srfake.New(t)
	typed, _ := protobuf.New[*testpb.Order](reg.Client())
	dyn, _ := protobuf.NewDynamic(reg.Client(), "")
	done := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 20 {
				o := &testpb.Order{Id: "o", Quantity: int32(g*100 + i), Tags: map[string]string{"g": "x"}}
				b, err := typed.Serialize("c", nil, o)
				if err != nil {
					done <- err
					return
				}
				back, err := typed.Deserialize("c", nil, b)
				if err != nil || !proto.Equal(back, o) {
					done <- fmt.Errorf("typed round trip: %v, %v", back, err)
					return
				}
				d, err := dyn.Deserialize("c", nil, b)
				if err != nil || d.ProtoReflect().Get(d.ProtoReflect().Descriptor().Fields().ByName("quantity")).Int() != int64(o.Quantity) {
					done <- fmt.Errorf("dynamic decode: %v, %v", d, err)
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
