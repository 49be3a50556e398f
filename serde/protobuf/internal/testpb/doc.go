// Package testpb holds Go code generated from common.proto and shop.proto (go run ./gen)
// for the tests of the Protobuf serde: nested messages, a oneof between other fields, a
// map, an import that becomes a schema reference and a standard import.
package testpb

//go:generate go run ./gen
