package avro_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/serde/avro"
	"github.com/kstreams-go/kstreams/serde/avro/internal/fakesr"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
)

const userSchema = `{"type":"record","name":"User","namespace":"com.example","fields":[
  {"name":"name","type":"string"},
  {"name":"age","type":"int"}]}`

func avroErr(t *testing.T, err error) *serde.Error {
	t.Helper()
	var ae *serde.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not a *serde.Error", err, err)
	}
	return ae
}

// names reports whether err's message names what (`subject "x"`, "schema id 3") as the
// serde's context, which ends with a colon or a comma.
func names(err error, what string) bool {
	msg := err.Error()
	return strings.Contains(msg, what+":") || strings.Contains(msg, what+",")
}

// TestWireFormat checks the bytes against the Confluent wire format and the Avro binary
// encoding written out by hand from the specifications: magic 0, id big-endian, then
// string "alice" (zig-zag length 5 = 0x0a, bytes) and int 30 (zig-zag 60 = 0x3c).
func TestWireFormat(t *testing.T) {
	r := fakesr.NewRegistry(t)
	s, err := avro.NewGeneric(r.Client(), userSchema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Serialize("users", nil, map[string]any{"name": "alice", "age": int32(30)})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 0, 0, 1, 0x0a, 'a', 'l', 'i', 'c', 'e', 0x3c}
	if !bytes.Equal(got, want) {
		t.Fatalf("bytes = % x; want % x", got, want)
	}
	v, err := s.Deserialize("users", nil, got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v, map[string]any{"name": "alice", "age": int32(30)}) {
		t.Fatalf("decoded %#v", v)
	}
	// The schema was registered under the topic-name subject.
	latest, err := srapi.Of(r.Client()).Latest(context.Background(), "users-value")
	if err != nil || latest.ID != 1 {
		t.Fatalf("users-value latest = %+v, %v", latest, err)
	}
}

type Address struct {
	Street string `avro:"street"`
	Zip    *string
}

type Customer struct {
	ID       int64             `avro:"id"`
	Name     string            `avro:"name"`
	Nick     *string           `avro:"nick"`
	Tier     string            `avro:"tier"`
	Tags     []string          `avro:"tags"`
	Scores   map[string]int32  `avro:"scores"`
	Hash     [4]byte           `avro:"hash"`
	Balance  *big.Rat          `avro:"balance"`
	Born     time.Time         `avro:"born"`
	Seen     time.Time         `avro:"seen"`
	Ref      string            `avro:"ref"`
	Home     *Address          `avro:"home"`
	Extra    any               `avro:"extra"`
	Ignored  string            `avro:"-"`
	Metadata map[string]string // not in the schema: ignored
}

const customerSchema = `{"type":"record","name":"Customer","namespace":"com.example","fields":[
  {"name":"id","type":"long"},
  {"name":"name","type":"string"},
  {"name":"nick","type":["null","string"],"default":null},
  {"name":"tier","type":{"type":"enum","name":"Tier","symbols":["GOLD","SILVER"]}},
  {"name":"tags","type":{"type":"array","items":"string"}},
  {"name":"scores","type":{"type":"map","values":"int"}},
  {"name":"hash","type":{"type":"fixed","name":"Hash4","size":4}},
  {"name":"balance","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
  {"name":"born","type":{"type":"int","logicalType":"date"}},
  {"name":"seen","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"ref","type":{"type":"string","logicalType":"uuid"}},
  {"name":"home","type":["null",{"type":"record","name":"Address","fields":[
     {"name":"street","type":"string"},{"name":"zip","type":["null","string"],"default":null}]}],"default":null},
  {"name":"extra","type":["null","long","string"],"default":null},
  {"name":"note","type":"string","default":"none"}]}`

func TestTypedRoundTrip(t *testing.T) {
	r := fakesr.NewRegistry(t)
	s, err := avro.New[Customer](r.Client(), customerSchema)
	if err != nil {
		t.Fatal(err)
	}
	nick, zip := "Bobby", "12345"
	in := Customer{ID: 1 << 40, Name: "Bob", Nick: &nick, Tier: "SILVER", Tags: []string{"a", "b"},
		Scores: map[string]int32{"x": -7}, Hash: [4]byte{1, 2, 3, 4}, Balance: big.NewRat(-12345, 100),
		Born: time.Date(1969, 12, 30, 0, 0, 0, 0, time.UTC), Seen: time.UnixMilli(1700000000123).UTC(),
		Ref: "123e4567-e89b-12d3-a456-426614174000", Home: &Address{Street: "Main", Zip: &zip},
		Extra: "text", Ignored: "x", Metadata: map[string]string{"k": "v"}}
	b, err := s.Serialize("customers", nil, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Deserialize("customers", nil, b)
	if err != nil {
		t.Fatal(err)
	}
	in.Ignored, in.Metadata = "", nil
	if out.Balance.Cmp(in.Balance) != 0 {
		t.Fatalf("balance %v, want %v", out.Balance, in.Balance)
	}
	out.Balance = in.Balance
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}

	// The same bytes through the generic serde: the goavro forms, "note" from its default.
	g, err := avro.NewGeneric(r.Client(), customerSchema)
	if err != nil {
		t.Fatal(err)
	}
	gv, err := g.Deserialize("customers", nil, b)
	if err != nil {
		t.Fatal(err)
	}
	m := gv.(map[string]any)
	if m["note"] != "none" || m["tier"] != "SILVER" || !reflect.DeepEqual(m["nick"], map[string]any{"string": "Bobby"}) ||
		!reflect.DeepEqual(m["extra"], map[string]any{"string": "text"}) || m["born"] != in.Born {
		t.Fatalf("generic view: %#v", m)
	}
	// born is 2 days before the epoch: zig-zag(-2) = 3.
	if days := m["born"].(time.Time).Unix() / 86400; days != -2 {
		t.Fatalf("born = %d days", days)
	}

	// Nil optional fields and an int in a union branch.
	in2 := Customer{ID: -1, Name: "", Tier: "GOLD", Balance: new(big.Rat), Born: time.Unix(0, 0).UTC(),
		Seen: time.UnixMilli(0).UTC(), Ref: "00000000-0000-0000-0000-000000000000", Extra: int64(5)}
	b2, err := s.Serialize("customers", nil, in2)
	if err != nil {
		t.Fatal(err)
	}
	out2, err := s.Deserialize("customers", nil, b2)
	if err != nil {
		t.Fatal(err)
	}
	if out2.Nick != nil || out2.Home != nil || out2.Extra != int64(5) || len(out2.Tags) != 0 || len(out2.Scores) != 0 {
		t.Fatalf("nil fields: %+v", out2)
	}
}

func TestNullsNeverReachTheRegistry(t *testing.T) {
	r := fakesr.NewRegistry(t)
	g, _ := avro.NewGeneric(r.Client(), userSchema)
	p, _ := avro.New[*Customer](r.Client(), customerSchema)
	if b, err := g.Serialize("t", nil, nil); b != nil || err != nil {
		t.Fatalf("generic nil = %v, %v", b, err)
	}
	if b, err := p.Serialize("t", nil, nil); b != nil || err != nil {
		t.Fatalf("pointer nil = %v, %v", b, err)
	}
	if v, err := g.Deserialize("t", nil, nil); v != nil || err != nil {
		t.Fatalf("generic nil bytes = %v, %v", v, err)
	}
	if v, err := p.Deserialize("t", nil, nil); v != nil || err != nil {
		t.Fatalf("pointer nil bytes = %v, %v", v, err)
	}
	if n := r.Requests(); n != 0 {
		t.Fatalf("%d registry requests for nulls", n)
	}
}

func TestSubjectNameStrategies(t *testing.T) {
	r := fakesr.NewRegistry(t)
	c := r.Client()
	cases := []struct {
		opts []avro.Option
		want string
	}{
		{nil, "orders-value"},
		{[]avro.Option{avro.AsKey()}, "orders-key"},
		{[]avro.Option{avro.WithSubjectNameStrategy(registry.RecordNameStrategy)}, "com.example.User"},
		{[]avro.Option{avro.AsKey(), avro.WithSubjectNameStrategy(registry.TopicRecordNameStrategy)}, "orders-com.example.User"},
	}
	for _, tc := range cases {
		s, err := avro.NewGeneric(c, userSchema, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Serialize("orders", nil, map[string]any{"name": "a", "age": int32(1)}); err != nil {
			t.Fatal(err)
		}
		if _, err := srapi.Of(c).Latest(context.Background(), tc.want); err != nil {
			t.Errorf("subject %s not registered: %v", tc.want, err)
		}
	}
	// A primitive schema has no record name.
	s, _ := avro.NewGeneric(c, `"string"`, avro.WithSubjectNameStrategy(registry.RecordNameStrategy))
	_, err := s.Serialize("orders", nil, "x")
	if !errors.Is(err, avro.ErrInvalidSchema) {
		t.Fatalf("err = %v; want ErrInvalidSchema", err)
	}
}

func TestPrimitiveSchemaAsKey(t *testing.T) {
	r := fakesr.NewRegistry(t)
	k, err := avro.New[string](r.Client(), `"string"`, avro.AsKey())
	if err != nil {
		t.Fatal(err)
	}
	b, err := k.Serialize("t", nil, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 0, 0, 1, 4, 'h', 'i'}; !bytes.Equal(b, want) {
		t.Fatalf("bytes % x; want % x", b, want)
	}
	if v, err := k.Deserialize("t", nil, b); v != "hi" || err != nil {
		t.Fatalf("decoded %q, %v", v, err)
	}
}

func TestAutoRegisterOff(t *testing.T) {
	r := fakesr.NewRegistry(t)
	s, err := avro.NewGeneric(r.Client(), userSchema, avro.WithAutoRegister(false))
	if err != nil {
		t.Fatal(err)
	}
	rec := map[string]any{"name": "a", "age": int32(1)}
	_, err = s.Serialize("users", nil, rec)
	if !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("err = %v; want registry.ErrNotFound", err)
	}
	if avroErr(t, err); !names(err, `subject "users-value"`) {
		t.Fatalf("error %v does not name the subject", err)
	}
	if r.Requests() == 0 {
		t.Fatal("no look-up request")
	}
	if _, err := r.Register("users-value", `{"type":"record","name":"Other","fields":[]}`); err != nil {
		t.Fatal(err)
	}
	if _, err = s.Serialize("users", nil, rec); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("err = %v; want registry.ErrNotFound", err)
	}
	r.SetUnavailable(false)
	if err := srapi.Of(r.Client()).SetCompatibility(context.Background(), "users-value", "NONE"); err != nil {
		t.Fatal(err)
	}
	id, err := r.Register("users-value", userSchema)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Serialize("users", nil, rec)
	if err != nil || b[4] != byte(id) {
		t.Fatalf("after registration: % x, %v; want id %d", b, err, id)
	}
}

func TestUseLatestVersion(t *testing.T) {
	r := fakesr.NewRegistry(t)
	if _, err := r.Register("users-value", userSchema); err != nil {
		t.Fatal(err)
	}
	v2 := `{"type":"record","name":"User","namespace":"com.example","fields":[
	  {"name":"name","type":"string"},{"name":"age","type":"int"},{"name":"email","type":["null","string"],"default":null}]}`
	if _, err := r.Register("users-value", v2); err != nil {
		t.Fatal(err)
	}
	type User struct {
		Name string
		Age  int
	}
	s, err := avro.New[User](r.Client(), "", avro.WithUseLatestVersion(true))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Serialize("users", nil, User{Name: "a", Age: 2})
	if err != nil {
		t.Fatal(err)
	}
	// id 2, "a", 2, union index 0 (null) for the defaulted email.
	if want := []byte{0, 0, 0, 0, 2, 2, 'a', 4, 0}; !bytes.Equal(b, want) {
		t.Fatalf("bytes % x; want % x", b, want)
	}
	if _, err := avro.New[User](r.Client(), ""); !errors.Is(err, avro.ErrInvalidSchema) {
		t.Fatalf("err = %v; want ErrNoSchema", err)
	}
}

func TestSerializeErrors(t *testing.T) {
	r := fakesr.NewRegistry(t)
	if _, err := r.Register("users-value", userSchema); err != nil {
		t.Fatal(err)
	}
	t.Run("incompatible schema", func(t *testing.T) {
		bad := `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"name","type":"string"},{"name":"age","type":"int"},{"name":"x","type":"long"}]}`
		s, _ := avro.NewGeneric(r.Client(), bad)
		_, err := s.Serialize("users", nil, map[string]any{"name": "a", "age": int32(1), "x": int64(1)})
		if !errors.Is(err, registry.ErrRejected) {
			t.Fatalf("err = %v; want registry.ErrRejected", err)
		}
		if ae := avroErr(t, err); !names(err, `subject "users-value"`) || ae.Op != serde.OpSerialize || ae.Topic != "users" {
			t.Fatalf("error = %+v", ae)
		}
	})
	t.Run("value does not fit", func(t *testing.T) {
		s, _ := avro.NewGeneric(r.Client(), userSchema)
		_, err := s.Serialize("users", nil, map[string]any{"name": 5, "age": int32(1)})
		if !errors.Is(err, serde.ErrInvalidValue) {
			t.Fatalf("err = %v; want serde.ErrInvalidValue", err)
		}
		if avroErr(t, err); !names(err, "schema id 1") || !names(err, `subject "users-value"`) {
			t.Fatalf("error = %v; want schema id 1 on users-value", err)
		}
		type wrong struct{ Name string }
		ts, _ := avro.New[wrong](r.Client(), userSchema)
		_, err = ts.Serialize("users", nil, wrong{Name: "a"})
		if !errors.Is(err, serde.ErrInvalidValue) || !strings.Contains(err.Error(), "age") {
			t.Fatalf("err = %v; want serde.ErrInvalidValue naming field age", err)
		}
		type badEnum struct {
			Tier string
		}
		es, _ := avro.New[badEnum](r.Client(), `{"type":"record","name":"E","fields":[{"name":"tier","type":{"type":"enum","name":"T","symbols":["A"]}}]}`)
		if _, err = es.Serialize("e", nil, badEnum{Tier: "B"}); !errors.Is(err, serde.ErrInvalidValue) {
			t.Fatalf("err = %v; want serde.ErrInvalidValue for an unknown symbol", err)
		}
	})
	t.Run("registry down", func(t *testing.T) {
		down := fakesr.Start()
		c := down.Client()
		down.Close()
		s, _ := avro.NewGeneric(c, userSchema)
		_, err := s.Serialize("users", nil, map[string]any{"name": "a", "age": int32(1)})
		if !errors.Is(err, registry.ErrUnavailable) || !names(avroErr(t, err), `subject "users-value"`) {
			t.Fatalf("err = %v; want registry.ErrUnavailable on users-value", err)
		}
	})
	t.Run("invalid schema", func(t *testing.T) {
		if _, err := avro.NewGeneric(r.Client(), `{"type":"record"}`); !errors.Is(err, avro.ErrInvalidSchema) {
			t.Fatalf("err = %v; want ErrInvalidSchema", err)
		}
	})
}

func TestDeserializeErrors(t *testing.T) {
	r := fakesr.NewRegistry(t)
	s, _ := avro.NewGeneric(r.Client(), userSchema)
	good, err := s.Serialize("users", nil, map[string]any{"name": "alice", "age": int32(30)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		want error
		id   int
	}{
		{"unknown id", []byte{0, 0, 0, 0, 99, 2, 'a', 2}, registry.ErrNotFound, 99},
		{"magic byte", append([]byte{1}, good[1:]...), serde.ErrCorrupt, 0},
		{"too short", []byte{0, 0, 0}, serde.ErrCorrupt, 0},
		{"empty", []byte{}, serde.ErrCorrupt, 0},
		{"truncated body", good[:8], serde.ErrCorrupt, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := s.Deserialize("users", nil, tc.data)
			if !errors.Is(err, tc.want) || v != nil {
				t.Fatalf("Deserialize = %v, %v; want %v", v, err, tc.want)
			}
			ae := avroErr(t, err)
			if (tc.id != 0) != names(err, fmt.Sprintf("schema id %d", tc.id)) || ae.Topic != "users" || ae.Len != len(tc.data) || ae.Op != serde.OpDeserialize {
				t.Fatalf("error = %+v", ae)
			}
			if tc.id == 99 && !strings.Contains(err.Error(), "schema id 99") {
				t.Fatalf("message %q does not name the id", err)
			}
		})
	}
	if !errors.Is(serde.ErrCorrupt, serde.ErrCorrupt) {
		t.Fatal("ErrUnknownMagicByte does not wrap serde.ErrCorrupt")
	}
	t.Run("record does not fit T", func(t *testing.T) {
		type U struct {
			Name int // string in the schema
		}
		ts, _ := avro.New[U](r.Client(), userSchema)
		_, err := ts.Deserialize("users", nil, good)
		if !errors.Is(err, serde.ErrInvalidValue) || !names(avroErr(t, err), "schema id 1") {
			t.Fatalf("err = %v; want serde.ErrInvalidValue with id 1", err)
		}
	})
	t.Run("registry unavailable", func(t *testing.T) {
		rr := fakesr.NewRegistry(t)
		rr.SetUnavailable(true)
		fresh, _ := avro.NewGeneric(rr.Client(), userSchema)
		_, err := fresh.Deserialize("users", nil, good)
		if !errors.Is(err, registry.ErrUnavailable) || !names(avroErr(t, err), "schema id 1") {
			t.Fatalf("err = %v; want registry.ErrUnavailable for id 1", err)
		}
	})
}

func TestSchemaEvolutionByName(t *testing.T) {
	r := fakesr.NewRegistry(t)
	w, _ := avro.NewGeneric(r.Client(), userSchema)
	b, err := w.Serialize("users", nil, map[string]any{"name": "a", "age": int32(3)})
	if err != nil {
		t.Fatal(err)
	}
	// A reader type with a field the writer lacks and without one it has.
	type UserV2 struct {
		Name  string
		Email *string
	}
	rd, _ := avro.New[UserV2](r.Client(), `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"name","type":"string"},{"name":"email","type":["null","string"],"default":null}]}`)
	v, err := rd.Deserialize("users", nil, b)
	if err != nil || v.Name != "a" || v.Email != nil {
		t.Fatalf("decoded %+v, %v", v, err)
	}
}

func TestUntypedAdapter(t *testing.T) {
	r := fakesr.NewRegistry(t)
	type User struct {
		Name string
		Age  int32
	}
	s, _ := avro.New[User](r.Client(), userSchema)
	u := serde.Untyped[User](s)
	b, err := u.Serialize("users", nil, User{Name: "z", Age: 1})
	if err != nil {
		t.Fatal(err)
	}
	v, err := u.Deserialize("users", nil, b)
	if err != nil || v != (User{Name: "z", Age: 1}) {
		t.Fatalf("decoded %#v, %v", v, err)
	}
	if serde.Name(s) != "Avro<avro_test.User>" {
		t.Fatalf("name %q", serde.Name(s))
	}
}

func TestOptionsFromProperties(t *testing.T) {
	r := fakesr.NewRegistry(t)
	opts, err := avro.OptionsFromProperties(map[string]string{
		"auto.register.schemas":     "false",
		"use.latest.version":        "true",
		"key.subject.name.strategy": "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := avro.NewGeneric(r.Client(), userSchema, opts...)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is registered: writing with the latest schema fails, naming the subject.
	if _, err := s.Serialize("t", nil, map[string]any{"name": "a", "age": int32(1)}); !errors.Is(err, registry.ErrNotFound) || !names(err, `subject "t-com.example.User"`) {
		t.Fatalf("Serialize = %v; want registry.ErrNotFound for subject t-com.example.User", err)
	}
	if _, err := avro.OptionsFromProperties(map[string]string{"value.subject.name.strategy": "Nope"}, false); err == nil {
		t.Fatal("no error for an unknown strategy")
	}
	if _, err := avro.OptionsFromProperties(map[string]string{"auto.register.schemas": "maybe"}, false); err == nil {
		t.Fatal("no error for a non-boolean")
	}
}

func TestDecimalLimits(t *testing.T) {
	r := fakesr.NewRegistry(t)
	type D struct {
		Amount *big.Rat
		Price  *big.Rat
	}
	const sch = `{"type":"record","name":"D","fields":[
	  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}},
	  {"name":"price","type":{"type":"fixed","name":"P","size":2,"logicalType":"decimal","precision":4,"scale":1}}]}`
	s, err := avro.New[D](r.Client(), sch)
	if err != nil {
		t.Fatal(err)
	}
	// 99.99 -> 9999 = 0x270f; -0.1 at scale 1 -> -1 = 0xffff in 2 bytes.
	b, err := s.Serialize("d", nil, D{Amount: big.NewRat(9999, 100), Price: big.NewRat(-1, 10)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 0, 0, 1, 4, 0x27, 0x0f, 0xff, 0xff}; !bytes.Equal(b, want) {
		t.Fatalf("bytes % x; want % x", b, want)
	}
	for _, bad := range []D{
		{Amount: big.NewRat(1, 1000), Price: new(big.Rat)},    // scale 3 > 2
		{Amount: big.NewRat(10000, 100), Price: new(big.Rat)}, // 5 digits > precision 4
		{Amount: new(big.Rat), Price: big.NewRat(4000, 1)},    // 40000 needs 3 bytes > size 2... and 5 digits
	} {
		if _, err := s.Serialize("d", nil, bad); !errors.Is(err, serde.ErrInvalidValue) {
			t.Errorf("Serialize(%v, %v) err = %v; want serde.ErrInvalidValue", bad.Amount, bad.Price, err)
		}
	}
}

func TestGenericAcceptsStructs(t *testing.T) {
	r := fakesr.NewRegistry(t)
	g, _ := avro.NewGeneric(r.Client(), userSchema)
	type U struct {
		Name string
		Age  int
	}
	b1, err := g.Serialize("u", nil, U{Name: "x", Age: 3})
	if err != nil {
		t.Fatal(err)
	}
	b2, err := g.Serialize("u", nil, &U{Name: "x", Age: 3})
	if err != nil {
		t.Fatal(err)
	}
	b3, _ := g.Serialize("u", nil, map[string]any{"name": "x", "age": int32(3)})
	if !bytes.Equal(b1, b3) || !bytes.Equal(b2, b3) {
		t.Fatalf("struct % x, pointer % x, map % x", b1, b2, b3)
	}
}

func TestConcurrentUse(t *testing.T) {
	r := fakesr.NewRegistry(t)
	type U struct {
		Name string
		Age  int32
	}
	s, _ := avro.New[U](r.Client(), userSchema)
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i := int32(0); i < 50; i++ {
				b, err := s.Serialize(fmt.Sprintf("t%d", i%5), nil, U{Name: "n", Age: i})
				if err == nil {
					var v U
					v, err = s.Deserialize("t", nil, b)
					if err == nil && v.Age != i {
						err = fmt.Errorf("age %d, want %d", v.Age, i)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestReaderSchemaResolution(t *testing.T) {
	r := fakesr.NewRegistry(t)
	writer := `{"type":"record","name":"Ev","namespace":"x","fields":[
	  {"name":"id","type":"int"},
	  {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B","C"]}},
	  {"name":"score","type":"float"},
	  {"name":"gone","type":"string"},
	  {"name":"tags","type":{"type":"array","items":"int"}}]}`
	reader := `{"type":"record","name":"Ev","namespace":"x","fields":[
	  {"name":"id","type":"long"},
	  {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"],"default":"A"}},
	  {"name":"score","type":"double"},
	  {"name":"tags","type":{"type":"array","items":"double"}},
	  {"name":"added","type":"string","default":"dflt"},
	  {"name":"when","type":{"type":"long","logicalType":"timestamp-millis"},"default":1500},
	  {"name":"maybe","type":["null","int"],"default":null},
	  {"name":"blob","type":"bytes","default":"\u00ff\u0001"}]}`
	w, _ := avro.NewGeneric(r.Client(), writer)
	b, err := w.Serialize("ev", nil, map[string]any{"id": int32(7), "kind": "C", "score": float32(0.5), "gone": "x", "tags": []any{int32(1), int32(2)}})
	if err != nil {
		t.Fatal(err)
	}
	type Ev struct {
		ID    int64
		Kind  string
		Score float64
		Tags  []float64
		Added string
		When  time.Time
		Maybe *int32
		Blob  []byte
		Gone  string // not in the reader schema: stays empty
	}
	rd, err := avro.New[Ev](r.Client(), reader)
	if err != nil {
		t.Fatal(err)
	}
	v, err := rd.Deserialize("ev", nil, b)
	if err != nil {
		t.Fatal(err)
	}
	want := Ev{ID: 7, Kind: "A", Score: 0.5, Tags: []float64{1, 2}, Added: "dflt", When: time.UnixMilli(1500).UTC(), Blob: []byte{0xff, 1}}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("resolved\n %+v\nwant\n %+v", v, want)
	}
	// A reader field without a default that the writer lacks cannot be resolved.
	strict, _ := avro.New[Ev](r.Client(), `{"type":"record","name":"Ev","namespace":"x","fields":[{"name":"id","type":"int"},{"name":"other","type":"string"}]}`)
	if _, err := strict.Deserialize("ev", nil, b); !errors.Is(err, serde.ErrInvalidValue) || !strings.Contains(err.Error(), "other") {
		t.Fatalf("err = %v; want serde.ErrInvalidValue naming field other", err)
	}
}

func TestLatestCompatibilityStrict(t *testing.T) {
	r := fakesr.NewRegistry(t)
	if _, err := r.Register("users-value", `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"name","type":"string"},{"name":"age","type":"int"},{"name":"email","type":"string"}]}`); err != nil {
		t.Fatal(err)
	}
	// The latest schema has a field (email) without default that userSchema's data lacks.
	s, _ := avro.NewGeneric(r.Client(), userSchema, avro.WithUseLatestVersion(true))
	rec := map[string]any{"name": "a", "age": int32(1), "email": "e"}
	if _, err := s.Serialize("users", nil, rec); !errors.Is(err, avro.ErrInvalidSchema) {
		t.Fatalf("err = %v; want ErrLatestIncompatible", err)
	}
	lax, _ := avro.NewGeneric(r.Client(), userSchema, avro.WithUseLatestVersion(true), avro.WithLatestCompatibilityStrict(false))
	if _, err := lax.Serialize("users", nil, rec); err != nil {
		t.Fatalf("with the check off: %v", err)
	}
}
