package io.kstreams.conformance;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.BiFunction;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Deduplication (issue 15 item 6). Java has no deduplication operator (KIP-655 plans one), so
 * these topologies are what a Java user writes by hand: a Processor over a persistent
 * WindowStore&lt;String, Long&gt; (retention 2 x window, size window, no duplicates) that drops a
 * record when fetch(id, t - window, t + window) finds an entry and otherwise puts (id, t) at
 * window start t and forwards it; a null id forwards. Node and store names are the ones the Go
 * DSL generates for KStream.DeduplicateByKey / Deduplicate (kstream/dedupe_conformance_test.go),
 * so describe() and the store's changelog compare too. Window 10 ms.
 */
final class DedupTopologies {

    private DedupTopologies() {
    }

    static final long WINDOW = 10;

    static final class Dedup implements RefTopology {
        private final String name;
        private final String processor;
        private final String storeName;
        private final String sink;
        private final BiFunction<String, String, String> idOf;

        Dedup(final String name, final String processor, final String storeName, final String sink,
              final BiFunction<String, String, String> idOf) {
            this.name = name;
            this.processor = processor;
            this.storeName = storeName;
            this.sink = sink;
            this.idOf = idOf;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String applicationId() {
            return name;
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
            t.addSource("KSTREAM-SOURCE-0000000000", Serdes.String().deserializer(), Serdes.String().deserializer(), name + "-input");
            t.addProcessor(processor, () -> new DedupProcessor(storeName, idOf), "KSTREAM-SOURCE-0000000000");
            t.addStateStore(Stores.windowStoreBuilder(
                Stores.persistentWindowStore(storeName, Duration.ofMillis(2 * WINDOW), Duration.ofMillis(WINDOW), false),
                Serdes.String(), Serdes.Long()), processor);
            t.addSink(sink, name + "-output", Serdes.String().serializer(), Serdes.String().serializer(), processor);
            return t;
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            return Map.of(name + "-output", new TopicTypes(ValueType.STRING, ValueType.STRING),
                name + "-" + storeName + "-changelog", new TopicTypes(ValueType.BYTES, ValueType.LONG));
        }
    }

    static final class DedupProcessor implements Processor<String, String, String, String> {
        private final String storeName;
        private final BiFunction<String, String, String> idOf;
        private ProcessorContext<String, String> context;
        private WindowStore<String, Long> store;

        DedupProcessor(final String storeName, final BiFunction<String, String, String> idOf) {
            this.storeName = storeName;
            this.idOf = idOf;
        }

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            store = context.getStateStore(storeName);
        }

        @Override
        public void process(final Record<String, String> r) {
            final String id = idOf.apply(r.key(), r.value());
            if (id == null) {
                context.forward(r);
                return;
            }
            final long t = r.timestamp();
            try (WindowStoreIterator<Long> it = store.fetch(id, Math.max(0, t - WINDOW), t + WINDOW)) {
                if (it.hasNext()) {
                    return;
                }
            }
            store.put(id, t, t);
            context.forward(r);
        }
    }

    static List<RefTopology> all() {
        return List.of(
            // by key (DeduplicateByKey): generated names.
            new Dedup("dedupe-key", "KSTREAM-DEDUPLICATE-0000000002", "KSTREAM-DEDUPLICATE-STATE-STORE-0000000001",
                "KSTREAM-SINK-0000000003", (k, v) -> k),
            // by an id taken from the value (the text before ':'), named "dd" (store "dd-store").
            new Dedup("dedupe-id", "dd", "dd-store", "KSTREAM-SINK-0000000002",
                (k, v) -> v == null ? "" : v.split(":", 2)[0])
        );
    }
}
