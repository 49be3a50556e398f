package io.kstreams.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.Stores;

/**
 * Java side of the restore benchmark of bench/run.sh (issue 9, item 3): a Kafka Streams
 * application whose topology is source &lt;app&gt;-input -&gt; processor "proc" with the persistent
 * (RocksDB) key-value store "kv" (Stores.persistentKeyValueStore, Bytes/byte[] serdes, logging
 * on), started on a fresh state directory, so it restores the pre-filled changelog
 * &lt;app&gt;-kv-changelog (bench/cmd/restorebench -mode produce writes it). When the global restore
 * listener reports the end of the restore it prints one line and exits:
 *
 * <pre>restore impl=java records=N restore_s=S end_ms=E peak_rss_mib=R cpu_s=C</pre>
 *
 * restore_s runs from onRestoreStart to onRestoreEnd; end_ms is the Unix time in ms at the end
 * (the caller subtracts its own start time); peak_rss_mib is VmHWM of /proc/self/status;
 * cpu_s the process CPU time. The same line as the Go command prints.
 *
 * Arguments: bootstrap application-id records state-dir. One stream thread, default configs
 * otherwise. Exit status 1 when fewer records than expected were restored or on failure.
 */
public final class Restore {
    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: Restore bootstrap app-id records state-dir");
            System.exit(2);
        }
        String app = args[1];
        long records = Long.parseLong(args[2]);
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[3]);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");

        Topology topology = new Topology();
        topology.addSource("src", Serdes.Bytes().deserializer(), Serdes.ByteArray().deserializer(), app + "-input");
        topology.addProcessor("proc", () -> new Processor<Bytes, byte[], Void, Void>() {
            @Override
            public void process(Record<Bytes, byte[]> record) {
            }
        }, "src");
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("kv"), Serdes.Bytes(), Serdes.ByteArray()), "proc");

        AtomicLong startNanos = new AtomicLong();
        AtomicLong total = new AtomicLong(-1);
        AtomicLong endMillis = new AtomicLong();
        AtomicLong endNanos = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        KafkaStreams streams = new KafkaStreams(topology, props);
        streams.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(TopicPartition tp, String store, long startingOffset, long endingOffset) {
                startNanos.compareAndSet(0, System.nanoTime());
            }

            @Override
            public void onBatchRestored(TopicPartition tp, String store, long batchEndOffset, long numRestored) {
            }

            @Override
            public void onRestoreEnd(TopicPartition tp, String store, long totalRestored) {
                endNanos.set(System.nanoTime());
                endMillis.set(System.currentTimeMillis());
                total.set(totalRestored);
                done.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            e.printStackTrace();
            System.exit(1);
            return null;
        });
        streams.start();
        if (!done.await(30, TimeUnit.MINUTES)) {
            System.err.println("restore did not end within 30 minutes");
            System.exit(1);
        }
        double rss = peakRssMiB();
        double cpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
        double restoreS = (endNanos.get() - startNanos.get()) / 1e9;
        System.out.println(String.format(Locale.ROOT, "restore impl=java records=%d restore_s=%.3f end_ms=%d peak_rss_mib=%.1f cpu_s=%.2f",
            total.get(), restoreS, endMillis.get(), rss, cpu));
        System.out.flush();
        streams.close(Duration.ofSeconds(30));
        System.exit(total.get() == records ? 0 : 1);
    }

    /** VmHWM of /proc/self/status in MiB, 0 when unreadable. */
    static double peakRssMiB() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Double.parseDouble(line.substring(6).trim().split("\\s+")[0]) / 1024.0;
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }
}
