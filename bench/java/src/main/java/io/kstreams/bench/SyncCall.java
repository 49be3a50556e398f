package io.kstreams.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Java side of bench/cmd/asyncbench's synchronous baseline: input -&gt; mapValues making a blocking
 * call per record on the stream thread -&gt; output (String keys and values), the topology of
 * asyncbench's sync runs. The call is either a sleep of latency-ms (service "sleep", the value
 * becomes value + "!") or an HTTP GET of url + the URL-encoded value (service "http", the value
 * becomes the response body). Runs until SIGTERM; prints "running &lt;unix ms&gt;" on stdout the first
 * time the instance reaches RUNNING.
 *
 * Arguments: bootstrap application-id input output guarantee commit-interval-ms
 * num-stream-threads state-dir latency-ms service [url].
 */
public final class SyncCall {
    static String call(String service, long latencyMs, String url, String value) {
        if (service.equals("sleep")) {
            try {
                Thread.sleep(latencyMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            return value + "!";
        }
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create(url + URLEncoder.encode(value, StandardCharsets.UTF_8)).toURL().openConnection();
            try (InputStream in = c.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 10 && args.length != 11) {
            System.err.println("usage: SyncCall bootstrap app-id input output guarantee commit-ms threads state-dir latency-ms sleep|http [url]");
            System.exit(2);
        }
        String service = args[9];
        long latencyMs = Long.parseLong(args[8]);
        String url = args.length == 11 ? args[10] : "";
        if (!service.equals("sleep") && !(service.equals("http") && !url.isEmpty())) {
            System.err.println("SyncCall: service must be sleep, or http with a url");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, args[4]);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, args[5]);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args[6]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[7]);
        props.put("auto.offset.reset", "earliest");

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(args[2], Consumed.with(Serdes.String(), Serdes.String()))
            .mapValues(v -> call(service, latencyMs, url, v))
            .to(args[3], Produced.with(Serdes.String(), Serdes.String()));
        Topology topology = builder.build();

        KafkaStreams streams = new KafkaStreams(topology, props);
        AtomicBoolean announced = new AtomicBoolean();
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING && announced.compareAndSet(false, true)) {
                System.out.println("running " + System.currentTimeMillis());
                System.out.flush();
            }
        });
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(10));
            done.countDown();
        }));
        streams.setUncaughtExceptionHandler(e -> {
            e.printStackTrace();
            System.exit(1);
            return null;
        });
        streams.start();
        done.await();
    }
}
