package topology

import (
	"os"
	"testing"
)

// The graph Java's StreamsBuilder produces for the DSL word count (conformance/golden/
// wordcount.describe.txt, from Java 4.4.0), built node by node: a repartition topic is an
// internal topic that describe prints undecorated, and the aggregate's store sits in the
// downstream sub-topology.
func TestDescribeDSLWordCountShape(t *testing.T) {
	want, err := os.ReadFile("../../conformance/golden/wordcount.describe.txt")
	if err != nil {
		t.Fatal(err)
	}
	b := New()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const rep = "KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition"
	must(b.AddSource("KSTREAM-SOURCE-0000000000", []string{"streams-plaintext-input"}, nil, "", ResetDefault, nil, nil, nil))
	must(b.AddProcessor("KSTREAM-FLATMAPVALUES-0000000001", fakeSupplier{}, "KSTREAM-SOURCE-0000000000"))
	must(b.AddProcessor("KSTREAM-KEY-SELECT-0000000002", fakeSupplier{}, "KSTREAM-FLATMAPVALUES-0000000001"))
	b.AddInternalTopic(rep, InternalTopicProperties{})
	must(b.AddProcessor("KSTREAM-FILTER-0000000006", fakeSupplier{}, "KSTREAM-KEY-SELECT-0000000002"))
	must(b.AddSink("KSTREAM-SINK-0000000005", rep, nil, "", nil, nil, nil, "KSTREAM-FILTER-0000000006"))
	must(b.AddSource("KSTREAM-SOURCE-0000000007", []string{rep}, nil, "", ResetDefault, nil, nil, nil))
	must(b.AddProcessor("KSTREAM-AGGREGATE-0000000004", fakeSupplier{}, "KSTREAM-SOURCE-0000000007"))
	must(b.AddStateStore(&fakeStore{name: "KSTREAM-AGGREGATE-STATE-STORE-0000000003", logging: true}, "KSTREAM-AGGREGATE-0000000004"))
	must(b.AddProcessor("KTABLE-TOSTREAM-0000000008", fakeSupplier{}, "KSTREAM-AGGREGATE-0000000004"))
	must(b.AddSink("KSTREAM-SINK-0000000009", "streams-wordcount-output", nil, "", nil, nil, nil, "KTABLE-TOSTREAM-0000000008"))
	if got := b.Describe().String(); got != string(want) {
		t.Fatalf("got\n%s\nwant (Java)\n%s", got, want)
	}
	groups := b.TopicGroups("streams-wordcount")
	if len(groups) != 2 || groups[0].SinkTopics[0] != "streams-wordcount-"+rep ||
		groups[1].SourceTopics[0] != "streams-wordcount-"+rep ||
		groups[1].ChangelogTopics["streams-wordcount-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog"] != "KSTREAM-AGGREGATE-STATE-STORE-0000000003" {
		t.Fatalf("topic groups %+v", groups)
	}
}
