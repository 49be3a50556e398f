package io.kstreams.conformance.versioned;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;

/**
 * Runs a script of versioned key-value store operations against Java's persistent versioned
 * store (RocksDBVersionedStore, in a TopologyTestDriver) and prints one result line per
 * operation, for the store tests of kstreams-go (package store, TestVersionedStoreAgainstJava).
 *
 * <pre>
 * VersionedOracle &lt; scripts
 * script lines:           result lines:
 *   store RETENTION SEGMENT store RETENTION SEGMENT  (a new, empty store: history retention and
 *                           segment interval in ms; every script starts with one)
 *   put K V TS              put RETURN_CODE
 *   del K TS                del RECORD
 *   get K                   get RECORD
 *   asof K TS               asof RECORD
 * RECORD is "null" or VALUE@TIMESTAMP[-VALIDTO].
 * </pre>
 * V "-" puts a null value (a tombstone).
 */
public final class VersionedOracle {

    private VersionedOracle() {
    }

    public static void main(final String[] args) throws Exception {
        final BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        final List<String> out = new ArrayList<>();
        List<String> script = null;
        long retention = 0;
        long segment = 0;
        String line;
        while ((line = r.readLine()) != null) {
            final String[] f = line.trim().split(" ");
            if ("store".equals(f[0])) {
                if (script != null) {
                    run(retention, segment, script, out);
                }
                retention = Long.parseLong(f[1]);
                segment = Long.parseLong(f[2]);
                script = new ArrayList<>();
                out.add(line.trim());
            } else if (!line.isBlank()) {
                script.add(line);
            }
        }
        if (script != null) {
            run(retention, segment, script, out);
        }
        final PrintStream ps = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        for (final String s : out) {
            ps.println(s);
        }
        ps.flush();
    }

    private static void run(final long retention, final long segment, final List<String> script, final List<String> out) {
        final Topology t = new Topology();
        t.addSource("source", Serdes.String().deserializer(), Serdes.String().deserializer(), "ops");
        t.addProcessor("ops", () -> new Ops(out), "source");
        t.addStateStore(Stores.versionedKeyValueStoreBuilder(
            Stores.persistentVersionedKeyValueStore("ver", Duration.ofMillis(retention), Duration.ofMillis(segment)),
            Serdes.String(), Serdes.String()), "ops");
        final Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "versioned-oracle");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(t, p)) {
            final TestInputTopic<String, String> in =
                driver.createInputTopic("ops", Serdes.String().serializer(), Serdes.String().serializer());
            for (final String op : script) {
                in.pipeInput("op", op, 0L);
            }
        }
    }

    static final class Ops implements Processor<String, String, Void, Void> {
        private final List<String> out;
        private VersionedKeyValueStore<String, String> store;

        Ops(final List<String> out) {
            this.out = out;
        }

        @Override
        public void init(final ProcessorContext<Void, Void> context) {
            store = context.getStateStore("ver");
        }

        @Override
        public void process(final Record<String, String> rec) {
            final String[] f = rec.value().trim().split(" ");
            switch (f[0]) {
                case "put":
                    out.add("put " + store.put(f[1], "-".equals(f[2]) ? null : f[2], Long.parseLong(f[3])));
                    break;
                case "del":
                    out.add("del " + format(store.delete(f[1], Long.parseLong(f[2]))));
                    break;
                case "get":
                    out.add("get " + format(store.get(f[1])));
                    break;
                case "asof":
                    out.add("asof " + format(store.get(f[1], Long.parseLong(f[2]))));
                    break;
                default:
                    throw new IllegalArgumentException("bad op " + rec.value());
            }
        }
    }

    static String format(final VersionedRecord<String> r) {
        if (r == null) {
            return "null";
        }
        return r.value() + "@" + r.timestamp() + r.validTo().map(v -> "-" + v).orElse("");
    }
}
