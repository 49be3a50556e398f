package io.kstreams.conformance;

import java.util.Map;
import java.util.Properties;
import org.apache.kafka.streams.Topology;

/**
 * A reference topology: what the Go port rebuilds and compares against. Each one is documented
 * in conformance/README.md (node, store and topic names, serdes) so it can be rebuilt exactly.
 */
public interface RefTopology {

    /** The key and value types used to decode what a topology writes to one topic. */
    record TopicTypes(ValueType key, ValueType value) {
        /** Raw bytes both ways: what topics missing from {@link #topicTypes()} decode as. */
        public static final TopicTypes BYTES = new TopicTypes(ValueType.BYTES, ValueType.BYTES);
    }

    /** The name given to the Runner's --topology flag, e.g. "wordcount". */
    String name();

    /** The application.id the topology runs under, e.g. "streams-wordcount". */
    String applicationId();

    /**
     * Streams properties the reference application sets itself (serdes, cache size, ...), without
     * application.id and bootstrap.servers. The Runner's --config flags override them.
     */
    Properties defaults();

    /** Builds the topology; props are the final Streams properties (for optimizations). */
    Topology build(Properties props);

    /**
     * Types used to decode each produced topic (sinks, repartition and changelog topics). For a
     * changelog of a timestamped store the value type is the type of the plain value: the
     * changelog carries the value without the timestamp.
     */
    Map<String, TopicTypes> topicTypes();

    /**
     * Types used to decode records of one produced topic: {@link #topicTypes()}'s entry, else raw
     * bytes. Topologies writing to topics whose names depend on the data (TopicNameExtractor)
     * override this.
     */
    default TopicTypes typesFor(final String topic) {
        return topicTypes().getOrDefault(topic, TopicTypes.BYTES);
    }

    /**
     * Whether the Runner reports the driver's dropped-records count: after each step whose
     * records changed it, one line on the pseudo topic {@link Runner#DROPPED_RECORDS_TOPIC}
     * (value: the new total as a long), written after that step's records.
     */
    default boolean reportsDroppedRecords() {
        return false;
    }
}
