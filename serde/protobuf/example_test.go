package protobuf_test

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/serde/protobuf"
	"github.com/kstreams-go/kstreams/serde/protobuf/internal/testpb"
)

// A serde for a generated message type, configured with the Java serializer properties.
func ExampleNew() {
	cfg, _ := registry.ConfigFromProperties(map[string]string{"schema.registry.url": "http://localhost:8081"})
	client, _ := registry.New(cfg)
	opts, _ := protobuf.OptionsFromProperties(map[string]string{"auto.register.schemas": "false", "use.latest.version": "true"}, false)
	orders, err := protobuf.New[*testpb.Order](client, opts...)
	if err != nil {
		panic(err)
	}
	b, err := orders.Serialize("orders", nil, &testpb.Order{Id: "o-1"})
	var re *registry.Error
	if errors.Is(err, registry.ErrNotFound) && errors.As(err, &re) {
		fmt.Println("register the schema first: registry error code", re.Code, "in", err)
	}
	_ = b
}

// A serde without generated code: messages are built from the schema's descriptors, and
// decoded into dynamic messages of the writer's schema.
func ExampleNewDynamic() {
	client, _ := registry.New(registry.Config{URLs: []string{"http://localhost:8081"}})
	s, err := protobuf.NewDynamic(client, `syntax = "proto3"; package shop; message Order { string id = 1; }`)
	if err != nil {
		panic(err)
	}
	m := dynamicpb.NewMessage(s.Descriptor("shop.Order"))
	m.Set(m.Descriptor().Fields().ByName("id"), protoreflect.ValueOfString("o-1"))
	b, _ := s.Serialize("orders", nil, m)
	back, _ := s.Deserialize("orders", nil, b)
	_ = back // *dynamicpb.Message
}
