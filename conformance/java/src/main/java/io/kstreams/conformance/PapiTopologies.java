package io.kstreams.conformance;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.RecordContext;
import org.apache.kafka.streams.processor.TopicNameExtractor;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * Processor API reference topologies. Each is described in conformance/README.md with its node,
 * store and topic names and serdes, so the Go port can rebuild it node for node.
 */
final class PapiTopologies {

    private PapiTopologies() {
    }

    /**
     * Kafka's WordCountProcessorDemo (4.x): processor "Process" counts words of
     * streams-plaintext-input lines in the in-memory KV store "Counts" (String/Integer, logged)
     * and, from a one-second STREAM_TIME punctuator, forwards every (word, count.toString()) with
     * the punctuation timestamp to the sink "Sink" (streams-wordcount-processor-output, default
     * String serdes). process() itself forwards nothing.
     */
    static final class WordCountProcessor implements RefTopology {
        @Override
        public String name() {
            return "wordcount-processor";
        }

        @Override
        public String applicationId() {
            return "streams-wordcount-processor";
        }

        @Override
        public Properties defaults() {
            final Properties p = Topologies.stringDefaultSerdes();
            p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
            return p;
        }

        @Override
        public Topology build(final Properties props) {
            final Topology t = new Topology();
            t.addSource("Source", "streams-plaintext-input");
            t.addProcessor("Process", CountWords::new, "Source");
            t.addStateStore(Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore("Counts"), Serdes.String(), Serdes.Integer()), "Process");
            t.addSink("Sink", "streams-wordcount-processor-output", "Process");
            return t;
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            final Map<String, TopicTypes> m = new LinkedHashMap<>();
            m.put("streams-wordcount-processor-Counts-changelog", new TopicTypes(ValueType.STRING, ValueType.INTEGER));
            m.put("streams-wordcount-processor-output", new TopicTypes(ValueType.STRING, ValueType.STRING));
            return m;
        }

        /** The demo's processor: count in process(), emit everything on stream-time punctuation. */
        static final class CountWords implements Processor<String, String, String, String> {
            private KeyValueStore<String, Integer> counts;

            @Override
            public void init(final ProcessorContext<String, String> context) {
                context.schedule(Duration.ofSeconds(1), PunctuationType.STREAM_TIME, ts -> {
                    try (KeyValueIterator<String, Integer> it = counts.all()) {
                        while (it.hasNext()) {
                            final KeyValue<String, Integer> kv = it.next();
                            context.forward(new Record<>(kv.key, kv.value.toString(), ts));
                        }
                    }
                });
                counts = context.getStateStore("Counts");
            }

            @Override
            public void process(final Record<String, String> record) {
                for (final String word : record.value().toLowerCase(Locale.getDefault()).split("\\W+")) {
                    final Integer old = counts.get(word);
                    counts.put(word, old == null ? 1 : old + 1);
                }
            }
        }
    }

    /**
     * Two sources into one processor, and a store shared by two processors (which merges what
     * would be two sub-topologies into one), with a wall-clock punctuator and tombstones.
     */
    static final class Multi implements RefTopology {
        @Override
        public String name() {
            return "papi-multi";
        }

        @Override
        public String applicationId() {
            return "papi-multi";
        }

        @Override
        public Properties defaults() {
            final Properties p = Topologies.stringDefaultSerdes();
            p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
            return p;
        }

        @Override
        public Topology build(final Properties props) {
            final Topology t = new Topology();
            t.addSource("SourceA", Serdes.String().deserializer(), Serdes.String().deserializer(), "papi-multi-input-a");
            t.addSource("SourceB", Serdes.String().deserializer(), Serdes.Long().deserializer(), "papi-multi-input-b");
            t.addSource("SourceC", Serdes.String().deserializer(), Serdes.String().deserializer(), "papi-multi-input-c");
            t.addProcessor("Merge", Merge::new, "SourceA", "SourceB");
            t.addProcessor("Audit", Audit::new, "SourceC");
            t.addStateStore(Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore("Shared"), Serdes.String(), Serdes.Long()), "Merge");
            t.connectProcessorAndStateStores("Audit", "Shared");
            t.addSink("TotalsSink", "papi-multi-totals", Serdes.String().serializer(), Serdes.Long().serializer(), "Merge");
            t.addSink("AuditSink", "papi-multi-audit", Serdes.String().serializer(), Serdes.String().serializer(), "Audit");
            return t;
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            final Map<String, TopicTypes> m = new LinkedHashMap<>();
            m.put("papi-multi-Shared-changelog", new TopicTypes(ValueType.STRING, ValueType.LONG));
            m.put("papi-multi-totals", new TopicTypes(ValueType.STRING, ValueType.LONG));
            m.put("papi-multi-audit", new TopicTypes(ValueType.STRING, ValueType.STRING));
            return m;
        }

        /**
         * Keeps a running total per key in "Shared": a String value adds its length, a Long value
         * adds itself; a null value deletes the key. Forwards the new total (null after a delete)
         * with the input's timestamp and headers. Records with a null key are dropped.
         */
        static final class Merge implements Processor<String, Object, String, Long> {
            private ProcessorContext<String, Long> context;
            private KeyValueStore<String, Long> shared;

            @Override
            public void init(final ProcessorContext<String, Long> context) {
                this.context = context;
                shared = context.getStateStore("Shared");
            }

            @Override
            public void process(final Record<String, Object> record) {
                if (record.key() == null) {
                    return;
                }
                if (record.value() == null) {
                    shared.delete(record.key());
                    context.forward(record.withValue((Long) null));
                    return;
                }
                final long delta = record.value() instanceof Long
                    ? (Long) record.value()
                    : ((String) record.value()).length();
                final Long old = shared.get(record.key());
                final long total = (old == null ? 0L : old) + delta;
                shared.put(record.key(), total);
                context.forward(record.withValue(total));
            }
        }

        /**
         * Forwards value + "=" + the key's total in "Shared" ("null" if none). Every 10 s of wall
         * clock it forwards ("entries", number of keys in "Shared") stamped with the punctuation
         * time.
         */
        static final class Audit implements Processor<String, String, String, String> {
            private ProcessorContext<String, String> context;
            private KeyValueStore<String, Long> shared;

            @Override
            public void init(final ProcessorContext<String, String> context) {
                this.context = context;
                shared = context.getStateStore("Shared");
                context.schedule(Duration.ofSeconds(10), PunctuationType.WALL_CLOCK_TIME, ts -> {
                    long n = 0;
                    try (KeyValueIterator<String, Long> it = shared.all()) {
                        while (it.hasNext()) {
                            it.next();
                            n++;
                        }
                    }
                    context.forward(new Record<>("entries", Long.toString(n), ts));
                });
            }

            @Override
            public void process(final Record<String, String> record) {
                final Long total = record.key() == null ? null : shared.get(record.key());
                context.forward(record.withValue(record.value() + "=" + total));
            }
        }
    }

    /**
     * A topic-pattern source and a global store: orders (String currency -> Double amount) from
     * any topic matching papi-global-orders-.* are converted with the rate in the global store
     * "Rates", which is fed from papi-global-rates.
     */
    static final class Global implements RefTopology {
        @Override
        public String name() {
            return "papi-global";
        }

        @Override
        public String applicationId() {
            return "papi-global";
        }

        @Override
        public Properties defaults() {
            return Topologies.stringDefaultSerdes();
        }

        @Override
        public Topology build(final Properties props) {
            final Topology t = new Topology();
            t.addGlobalStore(
                Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("Rates"), Serdes.String(), Serdes.Double())
                    .withLoggingDisabled(),
                "RatesSource",
                Serdes.String().deserializer(),
                Serdes.Double().deserializer(),
                "papi-global-rates",
                "RatesUpdater",
                RatesUpdater::new);
            t.addSource("OrdersSource", Serdes.String().deserializer(), Serdes.Double().deserializer(),
                Pattern.compile("papi-global-orders-.*"));
            t.addProcessor("Convert", Convert::new, "OrdersSource");
            t.addSink("ConvertedSink", "papi-global-converted",
                Serdes.String().serializer(), Serdes.Double().serializer(), "Convert");
            return t;
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            return Map.of("papi-global-converted", new TopicTypes(ValueType.STRING, ValueType.DOUBLE));
        }

        /** Puts each rate into "Rates"; a null rate deletes the currency. */
        static final class RatesUpdater implements Processor<String, Double, Void, Void> {
            private KeyValueStore<String, Double> rates;

            @Override
            public void init(final ProcessorContext<Void, Void> context) {
                rates = context.getStateStore("Rates");
            }

            @Override
            public void process(final Record<String, Double> record) {
                if (record.value() == null) {
                    rates.delete(record.key());
                } else {
                    rates.put(record.key(), record.value());
                }
            }
        }

        /**
         * Forwards amount * rate of the key's currency, or a null value when the amount or the
         * rate is missing (or the key is null), keeping timestamp and headers.
         */
        static final class Convert implements Processor<String, Double, String, Double> {
            private ProcessorContext<String, Double> context;
            private KeyValueStore<String, Double> rates;

            @Override
            public void init(final ProcessorContext<String, Double> context) {
                this.context = context;
                rates = context.getStateStore("Rates");
            }

            @Override
            public void process(final Record<String, Double> record) {
                final Double rate = record.key() == null ? null : rates.get(record.key());
                final Double converted = rate == null || record.value() == null ? null : record.value() * rate;
                context.forward(record.withValue(converted));
            }
        }
    }

    /**
     * Several sinks: a fixed-topic sink with explicit serializers behind a processor, a sink with
     * default serdes, and a TopicNameExtractor sink whose topic is derived from the key.
     */
    static final class Sinks implements RefTopology {
        static final String KEY_TOPIC_PREFIX = "papi-sinks-key-";

        @Override
        public String name() {
            return "papi-sinks";
        }

        @Override
        public String applicationId() {
            return "papi-sinks";
        }

        @Override
        public Properties defaults() {
            return Topologies.stringDefaultSerdes();
        }

        @Override
        public Topology build(final Properties props) {
            final Topology t = new Topology();
            t.addSource("Input", Serdes.String().deserializer(), Serdes.String().deserializer(), "papi-sinks-input");
            t.addProcessor("Router", Router::new, "Input");
            t.addProcessor("Upper", Upper::new, "Router");
            t.addSink("UpperSink", "papi-sinks-upper", Serdes.String().serializer(), Serdes.String().serializer(), "Upper");
            t.addSink("KeySink", new KeyTopicExtractor(), Serdes.String().serializer(), Serdes.String().serializer(), "Router");
            t.addSink("ErrorSink", "papi-sinks-errors", "Router");
            return t;
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            final Map<String, TopicTypes> m = new LinkedHashMap<>();
            m.put("papi-sinks-upper", new TopicTypes(ValueType.STRING, ValueType.STRING));
            m.put("papi-sinks-errors", new TopicTypes(ValueType.STRING, ValueType.STRING));
            return m;
        }

        @Override
        public TopicTypes typesFor(final String topic) {
            if (topic.startsWith(KEY_TOPIC_PREFIX)) {
                return new TopicTypes(ValueType.STRING, ValueType.STRING);
            }
            return RefTopology.super.typesFor(topic);
        }

        /**
         * Sends each record to "papi-sinks-key-" + key, or "papi-sinks-key-none" for a null key.
         * Its toString() is the fixed text "KeyTopicExtractor", which describe() prints.
         */
        static final class KeyTopicExtractor implements TopicNameExtractor<String, String> {
            @Override
            public String extract(final String key, final String value, final RecordContext recordContext) {
                return KEY_TOPIC_PREFIX + (key == null ? "none" : key);
            }

            @Override
            public String toString() {
                return "KeyTopicExtractor";
            }
        }

        /**
         * A null value or one starting with "!" goes to "ErrorSink" only; anything else to
         * "Upper" and then "KeySink" (forward with a child name, in that order).
         */
        static final class Router implements Processor<String, String, String, String> {
            private ProcessorContext<String, String> context;

            @Override
            public void init(final ProcessorContext<String, String> context) {
                this.context = context;
            }

            @Override
            public void process(final Record<String, String> record) {
                if (record.value() == null || record.value().startsWith("!")) {
                    context.forward(record, "ErrorSink");
                    return;
                }
                context.forward(record, "Upper");
                context.forward(record, "KeySink");
            }
        }

        /**
         * Upper-cases the value (Locale.ROOT) and appends a header "stage" = UTF-8 "upper" to a
         * copy of the input's headers.
         */
        static final class Upper implements Processor<String, String, String, String> {
            private ProcessorContext<String, String> context;

            @Override
            public void init(final ProcessorContext<String, String> context) {
                this.context = context;
            }

            @Override
            public void process(final Record<String, String> record) {
                final RecordHeaders headers = new RecordHeaders(record.headers().toArray());
                headers.add("stage", "upper".getBytes(StandardCharsets.UTF_8));
                context.forward(record.withValue(record.value().toUpperCase(Locale.ROOT)).withHeaders(headers));
            }
        }
    }
}
