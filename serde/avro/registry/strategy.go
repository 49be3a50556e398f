package registry

import "errors"

// errNoRecordName is what the record-name strategies return for a schema without a name;
// the serdes wrap a strategy's error in their ErrInvalidSchema.
var errNoRecordName = errors.New("schema has no record name for the subject name strategy")

// SubjectNameStrategy names the registry subject a serde registers or looks up its schema
// under. recordName is the full name of the schema's top-level type: an Avro named type's
// namespace.name, a Protobuf message's full name, a JSON Schema's "title"; "" when the schema
// has none. A strategy's error fails the serialization. Give one to a serde with its
// WithSubjectNameStrategy option; the default is TopicNameStrategy. Java counterpart:
// io.confluent.kafka.serializers.subject.strategy.SubjectNameStrategy, configured with
// key.subject.name.strategy / value.subject.name.strategy.
type SubjectNameStrategy func(topic string, isKey bool, recordName string) (string, error)

// TopicNameStrategy names the subject "<topic>-key" or "<topic>-value". It is the serdes'
// default. Java: io.confluent.kafka.serializers.subject.TopicNameStrategy.
func TopicNameStrategy(topic string, isKey bool, _ string) (string, error) {
	if isKey {
		return topic + "-key", nil
	}
	return topic + "-value", nil
}

// RecordNameStrategy names the subject after the record's full name, whatever the topic; it
// fails for a schema without a name (an Avro primitive, a JSON Schema without "title"). Java:
// io.confluent.kafka.serializers.subject.RecordNameStrategy.
func RecordNameStrategy(_ string, _ bool, recordName string) (string, error) {
	if recordName == "" {
		return "", errNoRecordName
	}
	return recordName, nil
}

// TopicRecordNameStrategy names the subject "<topic>-<record full name>"; it fails for a
// schema without a name. Java: io.confluent.kafka.serializers.subject.TopicRecordNameStrategy.
func TopicRecordNameStrategy(topic string, _ bool, recordName string) (string, error) {
	if recordName == "" {
		return "", errNoRecordName
	}
	return topic + "-" + recordName, nil
}
