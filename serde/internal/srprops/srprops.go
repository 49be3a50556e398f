// Package srprops reads the Java schema-registry serializer properties shared by the
// Protobuf and JSON Schema serdes (auto.register.schemas, use.latest.version,
// normalize.schemas, key/value.subject.name.strategy, ...) and holds the subject naming
// those strategies do.
package srprops

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoRecordName is returned by the record-name strategies for a schema without a name.
var ErrNoRecordName = errors.New("schema has no record name for the subject name strategy")

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

// Strategy names the subject name strategy key.subject.name.strategy (isKey) or
// value.subject.name.strategy sets: "TopicNameStrategy", "RecordNameStrategy" or
// "TopicRecordNameStrategy" (the Java class name, with or without its package). ok is false
// when the property is not set; err is non-nil for another class.
func Strategy(props map[string]string, isKey bool) (name string, ok bool, err error) {
	prop := "value.subject.name.strategy"
	if isKey {
		prop = "key.subject.name.strategy"
	}
	raw, ok := props[prop]
	if !ok {
		return "", false, nil
	}
	name = strings.TrimSpace(raw)
	name = name[strings.LastIndexByte(name, '.')+1:]
	switch name {
	case "TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy":
		return name, true, nil
	}
	return "", true, fmt.Errorf("property %s=%q: unknown subject name strategy", prop, raw)
}

// TopicName is "<topic>-key" or "<topic>-value".
func TopicName(topic string, isKey bool) string {
	if isKey {
		return topic + "-key"
	}
	return topic + "-value"
}

// RecordName is recordName, or ErrNoRecordName when it is empty.
func RecordName(recordName string) (string, error) {
	if recordName == "" {
		return "", ErrNoRecordName
	}
	return recordName, nil
}

// TopicRecordName is "<topic>-<recordName>", or ErrNoRecordName when recordName is empty.
func TopicRecordName(topic, recordName string) (string, error) {
	if recordName == "" {
		return "", ErrNoRecordName
	}
	return topic + "-" + recordName, nil
}
