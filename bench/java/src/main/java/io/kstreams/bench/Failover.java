package io.kstreams.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * Java side of the fail-over benchmark of bench/run.sh (bench/cmd/failbench drives it): a count
 * in the Processor API, source -&gt; "Count" with the persistent (RocksDB) key-value store "Counts"
 * (String keys, Long values, logged, no cache) -&gt; sink, each new count written with the input
 * record's timestamp; the same topology as failbench's own instance. One stream thread, no
 * standbys, session.timeout.ms and commit.interval.ms as given. Runs until SIGTERM (or SIGKILL),
 * printing on stdout, each as "event &lt;unix ms&gt; &lt;kind&gt; ...":
 *
 * <pre>
 * event MS tasks STATE 0,2,4,6     (whenever the state or the set of active tasks changes; "-" for none)
 * event MS restore-start P FROM TO (the global restore listener's onRestoreStart, P the partition)
 * event MS restore-end P TOTAL     (onRestoreEnd)
 * </pre>
 *
 * Arguments: bootstrap application-id input output state-dir session-timeout-ms commit-interval-ms.
 */
public final class Failover {
    static synchronized void event(String s) {
        System.out.println("event " + System.currentTimeMillis() + " " + s);
        System.out.flush();
    }

    /** Counts the records of every key in "Counts" and forwards each new count. */
    static final class Count implements Processor<String, String, String, Long> {
        private ProcessorContext<String, Long> ctx;
        private KeyValueStore<String, Long> store;

        @Override
        public void init(ProcessorContext<String, Long> context) {
            ctx = context;
            store = context.getStateStore("Counts");
        }

        @Override
        public void process(Record<String, String> r) {
            Long old = store.get(r.key());
            long n = (old == null ? 0 : old) + 1;
            store.put(r.key(), n);
            ctx.forward(new Record<>(r.key(), n, r.timestamp()));
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: Failover bootstrap app-id input output state-dir session-ms commit-ms");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        props.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, "0");
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, args[6]);
        props.put(StreamsConfig.consumerPrefix("session.timeout.ms"), args[5]);
        props.put("auto.offset.reset", "earliest");

        Topology topology = new Topology();
        topology.addSource("Source", Serdes.String().deserializer(), Serdes.String().deserializer(), args[2]);
        topology.addProcessor("Count", Count::new, "Source");
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("Counts"), Serdes.String(), Serdes.Long()), "Count");
        topology.addSink("Sink", args[3], Serdes.String().serializer(), Serdes.Long().serializer(), "Count");

        KafkaStreams streams = new KafkaStreams(topology, props);
        streams.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(TopicPartition tp, String store, long from, long to) {
                event("restore-start " + tp.partition() + " " + from + " " + to);
            }

            @Override
            public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long n) {
            }

            @Override
            public void onRestoreEnd(TopicPartition tp, String store, long total) {
                event("restore-end " + tp.partition() + " " + total);
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            e.printStackTrace();
            System.exit(1);
            return null;
        });
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            done.countDown();
            streams.close(Duration.ofSeconds(30));
        }));
        streams.start();
        String last = "";
        while (done.getCount() > 0) {
            List<Integer> ps = new ArrayList<>();
            try {
                for (ThreadMetadata t : streams.metadataForLocalThreads()) {
                    for (TaskMetadata tm : t.activeTasks()) {
                        ps.add(tm.taskId().partition());
                    }
                }
            } catch (RuntimeException e) {
                // not running yet or any more
            }
            Collections.sort(ps);
            StringBuilder sb = new StringBuilder(streams.state().toString()).append(' ');
            if (ps.isEmpty()) {
                sb.append('-');
            }
            for (int i = 0; i < ps.size(); i++) {
                sb.append(i > 0 ? "," : "").append(ps.get(i));
            }
            String now = sb.toString();
            if (!now.equals(last)) {
                event("tasks " + now);
                last = now;
            }
            Thread.sleep(50);
        }
    }
}
