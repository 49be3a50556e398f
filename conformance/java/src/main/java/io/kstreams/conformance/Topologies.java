package io.kstreams.conformance;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Produced;

/** The registry of reference topologies, by name. */
public final class Topologies {

    private static final Map<String, RefTopology> ALL = new TreeMap<>();

    static {
        register(new Pipe());
        register(new WordCount());
        register(new PapiTopologies.WordCountProcessor());
        register(new PapiTopologies.Multi());
        register(new PapiTopologies.Global());
        register(new PapiTopologies.Sinks());
        register(new CacheTopologies.PapiCache());
        WindowTopologies.all().forEach(Topologies::register);
        register(new CacheTopologies.DslCache());
        register(new CacheTopologies.PapiWindowCache());
        register(new CacheTopologies.DslWindowCache());
        register(new CacheTopologies.PapiSessionCache());
        DslTopologies.all().forEach(Topologies::register);
        JoinTopologies.all().forEach(Topologies::register);
        TableJoinTopologies.all().forEach(Topologies::register);
        NullKeyTopologies.all().forEach(Topologies::register);
        DedupTopologies.all().forEach(Topologies::register);
        SemanticsTopologies.all().forEach(Topologies::register);
    }

    private Topologies() {
    }

    static void register(final RefTopology t) {
        if (ALL.put(t.name(), t) != null) {
            throw new IllegalStateException("duplicate topology " + t.name());
        }
    }

    /** The topology with this name, or an IllegalArgumentException listing the known names. */
    public static RefTopology get(final String name) {
        final RefTopology t = ALL.get(name);
        if (t == null) {
            throw new IllegalArgumentException("unknown topology \"" + name + "\"; known: " + ALL.keySet());
        }
        return t;
    }

    /** Names of all reference topologies, sorted. */
    public static Iterable<String> names() {
        return ALL.keySet();
    }

    static Properties stringDefaultSerdes() {
        final Properties p = new Properties();
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        return p;
    }

    /**
     * Kafka's PipeDemo: streams-plaintext-input copied unchanged to streams-pipe-output, with
     * String default serdes.
     */
    static final class Pipe implements RefTopology {
        @Override
        public String name() {
            return "pipe";
        }

        @Override
        public String applicationId() {
            return "streams-pipe";
        }

        @Override
        public Properties defaults() {
            return stringDefaultSerdes();
        }

        @Override
        public Topology build(final Properties props) {
            final StreamsBuilder builder = new StreamsBuilder();
            builder.stream("streams-plaintext-input").to("streams-pipe-output");
            return builder.build(props);
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            return Map.of("streams-pipe-output", new TopicTypes(ValueType.STRING, ValueType.STRING));
        }
    }

    /**
     * Kafka's WordCountDemo (4.x): lines from streams-plaintext-input are lower-cased, split on
     * non-word characters, re-keyed by word, counted, and the count changes written to
     * streams-wordcount-output as String/Long. The demo sets statestore.cache.max.bytes=0.
     */
    static final class WordCount implements RefTopology {
        static final String STORE = "KSTREAM-AGGREGATE-STATE-STORE-0000000003";

        @Override
        public String name() {
            return "wordcount";
        }

        @Override
        public String applicationId() {
            return "streams-wordcount";
        }

        @Override
        public Properties defaults() {
            final Properties p = stringDefaultSerdes();
            p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
            return p;
        }

        @Override
        public Topology build(final Properties props) {
            final StreamsBuilder builder = new StreamsBuilder();
            final KStream<String, String> lines = builder.stream("streams-plaintext-input");
            final KTable<String, Long> counts = lines
                .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.getDefault()).split("\\W+")))
                .groupBy((key, word) -> word)
                .count();
            counts.toStream().to("streams-wordcount-output", Produced.with(Serdes.String(), Serdes.Long()));
            return builder.build(props);
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            final Map<String, TopicTypes> m = new LinkedHashMap<>();
            m.put("streams-wordcount-" + STORE + "-repartition", new TopicTypes(ValueType.STRING, ValueType.STRING));
            m.put("streams-wordcount-" + STORE + "-changelog", new TopicTypes(ValueType.STRING, ValueType.LONG));
            m.put("streams-wordcount-output", new TopicTypes(ValueType.STRING, ValueType.LONG));
            return m;
        }
    }
}
