// Package testdriver tests topologies without a broker, the Go counterpart of Java's
// kafka-streams-test-utils: [TopologyTestDriver], [TestInputTopic], [TestOutputTopic],
// [TestRecord] and [MockProcessorContext]; package testdriver/mocks has gomock mocks of the
// processor contexts (generated with mockgen), and store/storemock those of the stores.
//
//	d, err := testdriver.New(topology, map[string]string{
//		"application.id":      "wordcount",
//		"default.key.serde":   "org.apache.kafka.common.serialization.Serdes$StringSerde",
//		"default.value.serde": "org.apache.kafka.common.serialization.Serdes$StringSerde",
//	}, 0)
//	if err != nil { ... }
//	defer d.Close()
//	in := testdriver.CreateInputTopic(d, "streams-plaintext-input", serde.String(), serde.String())
//	out := testdriver.CreateOutputTopic(d, "streams-wordcount-output", serde.String(), serde.Long())
//	err = in.PipeInput("hello kafka streams")
//	counts, err := testdriver.ReadKeyValuesToMap(out)
//
// Behaviour follows Java's driver (checked record for record against Java 4.4's
// TopologyTestDriver by the conformance tests in this package): every sub-topology runs in one
// task 0_0 on partition 0; each piped record is processed synchronously, followed by the
// stream-time punctuations it made due and a commit; records written to topics the topology
// reads (repartition topics) are piped back in; every produced record, changelog writes
// included, is captured per topic; wall-clock time is mocked and moves only with
// AdvanceWallClockTime.
//
// Async steps (kstream's MapValuesAsync, processor.NewAsyncFixedKeySupplier) really call out,
// on goroutines of their own, but the driver waits for them: after each record is processed
// (and after the wall-clock punctuators of AdvanceWallClockTime), it waits until every call
// that record caused has completed and been applied, so each pipe's output is the same as a
// synchronous step's, in input order. A call's timeout still applies in real time.
//
// Generic operations are functions rather than methods where Java has a generic method on the
// driver (CreateInputTopic, CreateOutputTopic, KeyValueStore, ReadKeyValuesToMap). Errors are
// returned, never thrown: processing errors come back from the call that caused the
// processing (PipeInput, AdvanceWallClockTime, ...).
//
// Configuration read from the properties: application.id, default.key.serde,
// default.value.serde, default.timestamp.extractor, deserialization.exception.handler,
// processing.exception.handler, max.task.idle.ms, statestore.cache.max.bytes (and the deprecated
// cache.max.bytes.buffering), as Java's driver does; Go values can be given with options
// (WithDefaultSerdes, WithTimestampExtractor, WithLogger).
//
// Store access: StateStore, AllStateStores, KeyValueStore and WindowStore (which, as Java, give a
// plain view of timestamped stores), TimestampedKeyValueStore, TimestampedWindowStore,
// SessionStore, VersionedKeyValueStore. Not supported yet: metrics.
package testdriver
