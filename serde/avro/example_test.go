package avro_test

import (
	"fmt"

	"github.com/kstreams-go/kstreams/serde/avro"
	"github.com/kstreams-go/kstreams/serde/avro/avrotest"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
)

// A typed serde for a Go struct. In production the client points at the real registry:
// registry.New(registry.Config{URLs: []string{"http://schema-registry:8081"}}); in tests, at an avrotest.Registry.
func ExampleNew() {
	reg := avrotest.Start()
	defer reg.Close()

	type Pageview struct {
		User string `avro:"user"`
		Page string `avro:"page"`
		Ms   int64  `avro:"viewtime"`
	}
	s, err := avro.New[Pageview](reg.Client(), `{"type":"record","name":"Pageview","namespace":"demo","fields":[
	  {"name":"user","type":"string"},{"name":"page","type":"string"},{"name":"viewtime","type":"long"}]}`)
	if err != nil {
		panic(err)
	}
	b, err := s.Serialize("pageviews", nil, Pageview{User: "u1", Page: "/", Ms: 42})
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x\n", b)
	v, err := s.Deserialize("pageviews", nil, b)
	fmt.Printf("%+v %v\n", v, err)
	// Output:
	// 00 00 00 00 01 04 75 31 02 2f 54
	// {User:u1 Page:/ Ms:42} <nil>
}

// The generic serde works on goavro's native values, like Java's GenericRecord; with
// use.latest.version it needs no schema of its own.
func ExampleNewGeneric() {
	reg := avrotest.Start()
	defer reg.Close()
	if _, err := reg.Register("users-value", `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"email","type":["null","string"],"default":null}]}`); err != nil {
		panic(err)
	}
	cfg, _ := registry.ConfigFromProperties(map[string]string{"schema.registry.url": reg.URL()})
	client, _ := registry.New(cfg)
	opts, _ := avro.OptionsFromProperties(map[string]string{"use.latest.version": "true", "auto.register.schemas": "false"}, false)
	s, err := avro.NewGeneric(client, "", opts...)
	if err != nil {
		panic(err)
	}
	b, err := s.Serialize("users", nil, map[string]any{"name": "ann", "email": map[string]any{"string": "a@x"}})
	if err != nil {
		panic(err)
	}
	v, err := s.Deserialize("users", nil, b)
	fmt.Println(v, err)
	// Output:
	// map[email:map[string:a@x] name:ann] <nil>
}
