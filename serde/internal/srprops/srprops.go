// Package srprops reads the Java schema-registry serializer properties shared by the Avro,
// Protobuf and JSON Schema serdes (auto.register.schemas, use.latest.version,
// normalize.schemas, key/value.subject.name.strategy, ...).
package srprops

import (
	"fmt"
	"strings"

	"github.com/kstreams-go/kstreams/serde/avro/registry"
)

// Bool reads the boolean property name: ok reports whether it is set; err is non-nil for a
// value other than true/false (any case, surrounding space ignored).
func Bool(props map[string]string, name string) (v, ok bool, err error) {
	raw, ok := props[name]
	if !ok {
		return false, false, nil
	}
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, true, fmt.Errorf("property %s=%q is not true or false", name, raw)
}

// Strategy returns the subject name strategy key.subject.name.strategy (isKey) or
// value.subject.name.strategy names: TopicNameStrategy, RecordNameStrategy or
// TopicRecordNameStrategy (the Java class name, with or without its package
// io.confluent.kafka.serializers.subject). ok is false when the property is not set; err is
// non-nil for another class.
func Strategy(props map[string]string, isKey bool) (s registry.SubjectNameStrategy, ok bool, err error) {
	prop := "value.subject.name.strategy"
	if isKey {
		prop = "key.subject.name.strategy"
	}
	raw, ok := props[prop]
	if !ok {
		return nil, false, nil
	}
	name := strings.TrimSpace(raw)
	switch name[strings.LastIndexByte(name, '.')+1:] {
	case "TopicNameStrategy":
		return registry.TopicNameStrategy, true, nil
	case "RecordNameStrategy":
		return registry.RecordNameStrategy, true, nil
	case "TopicRecordNameStrategy":
		return registry.TopicRecordNameStrategy, true, nil
	}
	return nil, true, fmt.Errorf("property %s=%q: unknown subject name strategy", prop, raw)
}
