package io.kstreams.conformance;

import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Runs a reference topology in Kafka Streams' TopologyTestDriver on an input vector and writes
 * every record it produced (sinks, repartition and changelog topics) as JSON lines. The formats
 * are specified in conformance/README.md.
 *
 * <pre>
 * Runner --topology NAME --input VECTOR.jsonl --output OUT.jsonl [--describe DESCRIBE.txt] [--config key=value ...]
 * Runner --topology NAME --describe-only --describe DESCRIBE.txt [--config key=value ...]
 * Runner --list
 * Runner --serve
 * </pre>
 *
 * Exit status: 0 on success, 2 on a usage error, 1 on any other failure (message on stderr).
 *
 * <p>{@code --serve} runs many of those command lines in one JVM, so that a test suite running
 * hundreds of them pays for the JVM start and the loading of Kafka Streams once: each line of
 * stdin is a request {@code {"args": ["--topology", "NAME", ...]}} holding the arguments of one
 * run above; the run is done exactly as a JVM of its own would do it (its own driver, its own
 * state directory, the same files written), and one line answers it on stdout,
 * {@code {"status": S, "output": "..."}}: the exit status that run would have had and everything
 * it would have printed on stdout and stderr. A failed run does not stop the server; it exits
 * at the end of stdin. Nothing else is written on stdout while serving.
 */
public final class Runner {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The pseudo topic of the dropped-records reports (see RefTopology#reportsDroppedRecords). */
    static final String DROPPED_RECORDS_TOPIC = "dropped-records";

    /**
     * The dropped-records reports of one run: a run starts with none reported, also when an
     * earlier run of the same JVM (--serve) reported some.
     */
    private static final class DroppedReports {
        /** The last dropped-records total reported. */
        private double last;

        /** Set once the driver is closed: its metrics are gone, so no dropped-records report follows. */
        private boolean driverClosed;
    }

    private Runner() {
    }

    /** Thrown for a bad command line; main exits with status 2. */
    static final class UsageException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UsageException(final String message) {
            super(message);
        }
    }

    private static final String USAGE =
        "usage: Runner --topology NAME --input VECTOR.jsonl --output OUT.jsonl [--describe FILE] [--config key=value ...]\n"
            + "       Runner --topology NAME --describe-only --describe FILE [--config key=value ...]\n"
            + "       Runner --list\n"
            + "       Runner --serve";

    public static void main(final String[] args) throws IOException {
        if (args.length == 1 && args[0].equals("--serve")) {
            serve();
            return;
        }
        final int status = runReporting(args, System.err);
        if (status != 0) {
            System.exit(status);
        }
    }

    /**
     * Runs one command line, printing a failure on err as main does, and returns the exit status
     * (0 success, 2 usage error, 1 other failure). Errors (the JVM's own trouble) are not caught.
     */
    static int runReporting(final String[] args, final PrintStream err) {
        try {
            run(args);
            return 0;
        } catch (final UsageException e) {
            err.println("conformance runner: " + e.getMessage());
            err.println(USAGE);
            return 2;
        } catch (final Exception e) {
            err.println("conformance runner: " + e);
            e.printStackTrace(err);
            return 1;
        }
    }

    /**
     * The --serve loop (see the class comment). While a request runs, System.out and System.err
     * both print into its answer's output, as a run of its own prints both into the one stream
     * its caller reads; between requests they print on the real stderr, so stdout carries answers
     * only. An Error thrown by a run (out of memory, ...) ends the server without an answer:
     * the caller then learns of it from the end of stdout.
     */
    static void serve() throws IOException {
        final PrintStream stderr = System.err;
        final PrintStream answers = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(stderr);
        final BufferedReader requests = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = requests.readLine()) != null; ) {
            if (line.isBlank()) {
                continue;
            }
            final ByteArrayOutputStream captured = new ByteArrayOutputStream();
            final PrintStream capture = new PrintStream(captured, true, StandardCharsets.UTF_8);
            int status;
            String[] args = null;
            try {
                args = requestArgs(line);
            } catch (final IOException | IllegalArgumentException e) {
                capture.println("conformance runner: bad --serve request: " + e.getMessage());
            }
            if (args == null) {
                status = 2;
            } else {
                System.setOut(capture);
                System.setErr(capture);
                try {
                    status = runReporting(args, capture);
                } finally {
                    System.setOut(stderr);
                    System.setErr(stderr);
                }
            }
            capture.flush();
            final ObjectNode answer = JSON.createObjectNode();
            answer.put("status", status);
            answer.put("output", captured.toString(StandardCharsets.UTF_8));
            answers.print(JSON.writeValueAsString(answer));
            answers.print('\n');
            answers.flush();
        }
        answers.flush();
    }

    /** The arguments of a --serve request line {"args": ["...", ...]}. */
    private static String[] requestArgs(final String line) throws IOException {
        final JsonNode req = JSON.readTree(line);
        final JsonNode args = req == null ? null : req.get("args");
        if (args == null || !args.isArray() || req.size() != 1) {
            throw new IllegalArgumentException("a request is {\"args\": [\"...\", ...]}, got " + line);
        }
        final String[] out = new String[args.size()];
        for (int i = 0; i < out.length; i++) {
            if (!args.get(i).isTextual()) {
                throw new IllegalArgumentException("argument " + i + " is not a string: " + args.get(i));
            }
            out[i] = args.get(i).textValue();
        }
        return out;
    }

    static void run(final String[] args) throws IOException {
        // Fixed locale: the word-count demos lower-case with Locale.getDefault(), and the output
        // must not depend on the machine's locale (e.g. the Turkish dotless i).
        Locale.setDefault(Locale.ROOT);

        String topologyName = null;
        Path input = null;
        Path output = null;
        Path describe = null;
        boolean describeOnly = false;
        final Map<String, String> configs = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            final String a = args[i];
            switch (a) {
                case "--topology":
                    topologyName = value(args, ++i, a);
                    break;
                case "--input":
                    input = Path.of(value(args, ++i, a));
                    break;
                case "--output":
                    output = Path.of(value(args, ++i, a));
                    break;
                case "--describe":
                    describe = Path.of(value(args, ++i, a));
                    break;
                case "--describe-only":
                    describeOnly = true;
                    break;
                case "--config": {
                    final String kv = value(args, ++i, a);
                    final int eq = kv.indexOf('=');
                    if (eq <= 0) {
                        throw new UsageException("--config needs key=value, got \"" + kv + "\"");
                    }
                    configs.put(kv.substring(0, eq), kv.substring(eq + 1));
                    break;
                }
                case "--list":
                    for (final String n : Topologies.names()) {
                        System.out.println(n);
                    }
                    return;
                default:
                    throw new UsageException("unknown argument \"" + a + "\"");
            }
        }
        if (topologyName == null) {
            throw new UsageException("--topology is required");
        }
        if (describeOnly) {
            if (describe == null || input != null || output != null) {
                throw new UsageException("--describe-only takes --describe and no --input/--output");
            }
        } else if (input == null || output == null) {
            throw new UsageException("--input and --output are required");
        }
        final RefTopology ref;
        try {
            ref = Topologies.get(topologyName);
        } catch (final IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }

        final Properties props = new Properties();
        props.putAll(ref.defaults());
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, ref.applicationId());
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:1234");
        props.putAll(configs);

        final Path stateDir = Files.createTempDirectory("kstreams-conformance-");
        try {
            props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
            final Topology topology = ref.build(props);
            if (describe != null) {
                Files.write(describe, topology.describe().toString().getBytes(StandardCharsets.UTF_8));
            }
            if (describeOnly) {
                return;
            }
            final List<JsonNode> events = readEvents(input);
            try (BufferedWriter out = Files.newBufferedWriter(output, StandardCharsets.UTF_8)) {
                runDriver(ref, topology, props, events, out);
            }
        } finally {
            deleteRecursively(stateDir);
        }
    }

    private static String value(final String[] args, final int i, final String flag) {
        if (i >= args.length) {
            throw new UsageException(flag + " needs a value");
        }
        return args[i];
    }

    /** Reads the non-blank lines of a vector, each one JSON event. */
    static List<JsonNode> readEvents(final Path input) throws IOException {
        final List<JsonNode> events = new ArrayList<>();
        int lineNo = 0;
        for (final String line : Files.readAllLines(input, StandardCharsets.UTF_8)) {
            lineNo++;
            if (line.isBlank()) {
                continue;
            }
            try {
                events.add(JSON.readTree(line));
            } catch (final IOException e) {
                throw new IOException(input + ":" + lineNo + ": " + e.getMessage(), e);
            }
        }
        return events;
    }

    private static void runDriver(final RefTopology ref,
                                  final Topology topology,
                                  final Properties props,
                                  final List<JsonNode> events,
                                  final Writer out) throws IOException {
        final Map<String, TestInputTopic<byte[], byte[]>> inputs = new HashMap<>();
        final Map<String, TestOutputTopic<byte[], byte[]>> outputs = new HashMap<>();
        final DroppedReports dropped = new DroppedReports();
        final TopologyTestDriver driver = new TopologyTestDriver(topology, props, Instant.ofEpochMilli(0));
        boolean closed = false;
        try {
            drain(ref, driver, outputs, -1, out, dropped);
            for (int step = 0; step < events.size(); step++) {
                final JsonNode ev = events.get(step);
                try {
                    apply(driver, inputs, ev);
                } catch (final RuntimeException e) {
                    throw new IllegalArgumentException("event " + step + " " + ev + ": " + e.getMessage(), e);
                }
                drain(ref, driver, outputs, step, out, dropped);
            }
            closed = true;
            driver.close();
            dropped.driverClosed = true;
            drain(ref, driver, outputs, events.size(), out, dropped);
        } finally {
            if (!closed) {
                driver.close();
            }
        }
    }

    private static void apply(final TopologyTestDriver driver,
                              final Map<String, TestInputTopic<byte[], byte[]>> inputs,
                              final JsonNode ev) {
        if (!ev.isObject()) {
            throw new IllegalArgumentException("an event is a JSON object");
        }
        if (ev.has("advanceWallClockMs")) {
            if (ev.size() != 1 || !ev.get("advanceWallClockMs").canConvertToLong()
                || !ev.get("advanceWallClockMs").isIntegralNumber() || ev.get("advanceWallClockMs").longValue() < 0) {
                throw new IllegalArgumentException("advance event is {\"advanceWallClockMs\": N} with N >= 0");
            }
            driver.advanceWallClockTime(Duration.ofMillis(ev.get("advanceWallClockMs").longValue()));
            return;
        }
        for (final Iterator<String> it = ev.fieldNames(); it.hasNext(); ) {
            final String f = it.next();
            if (!List.of("topic", "key", "value", "timestamp", "headers").contains(f)) {
                throw new IllegalArgumentException("unknown member \"" + f + "\"");
            }
        }
        final JsonNode topicNode = ev.get("topic");
        if (topicNode == null || !topicNode.isTextual()) {
            throw new IllegalArgumentException("record needs \"topic\" (string)");
        }
        final JsonNode tsNode = ev.get("timestamp");
        if (tsNode == null || !tsNode.isIntegralNumber() || !tsNode.canConvertToLong()) {
            throw new IllegalArgumentException("record needs \"timestamp\" (integer ms)");
        }
        final String topic = topicNode.textValue();
        final Headers headers = new RecordHeaders();
        final JsonNode hs = ev.get("headers");
        if (hs != null && !hs.isNull()) {
            if (!hs.isArray()) {
                throw new IllegalArgumentException("\"headers\" is an array");
            }
            for (final JsonNode h : hs) {
                if (!h.isObject() || !h.has("key") || !h.get("key").isTextual()) {
                    throw new IllegalArgumentException("a header is {\"key\":\"k\",\"value\":V}");
                }
                headers.add(h.get("key").textValue(), ValueType.parse(h.get("value")).serialize(topic, null));
            }
        }
        final byte[] key = ValueType.parse(ev.get("key")).serialize(topic, headers);
        final byte[] value = ValueType.parse(ev.get("value")).serialize(topic, headers);
        final TestInputTopic<byte[], byte[]> in = inputs.computeIfAbsent(topic, t -> driver.createInputTopic(
            t, new ByteArraySerializer(), new ByteArraySerializer(), Instant.ofEpochMilli(0), Duration.ZERO));
        in.pipeInput(new TestRecord<>(key, value, headers, tsNode.longValue()));
    }

    /** Writes every record produced so far, topic by topic in ascending name order. */
    private static void drain(final RefTopology ref,
                              final TopologyTestDriver driver,
                              final Map<String, TestOutputTopic<byte[], byte[]>> outputs,
                              final int step,
                              final Writer out,
                              final DroppedReports dropped) throws IOException {
        for (final String topic : new TreeSet<>(driver.producedTopicNames())) {
            final TestOutputTopic<byte[], byte[]> ot = outputs.computeIfAbsent(topic, t -> driver.createOutputTopic(
                t, new ByteArrayDeserializer(), new ByteArrayDeserializer()));
            final RefTopology.TopicTypes types = ref.typesFor(topic);
            while (!ot.isEmpty()) {
                final TestRecord<byte[], byte[]> r = ot.readRecord();
                final ObjectNode line = JSON.createObjectNode();
                line.put("step", step);
                line.put("topic", topic);
                line.set("key", types.key().toJson(types.key().deserialize(topic, r.headers(), r.key())));
                line.set("value", types.value().toJson(types.value().deserialize(topic, r.headers(), r.value())));
                line.set("keyBytes", ValueType.hexOrNull(r.key()));
                line.set("valueBytes", ValueType.hexOrNull(r.value()));
                line.put("timestamp", r.timestamp());
                final ArrayNode hs = line.putArray("headers");
                for (final Header h : r.headers()) {
                    final ObjectNode ho = hs.addObject();
                    ho.put("key", h.key());
                    ho.set("value", ValueType.BYTES.toJson(h.value()));
                }
                out.write(JSON.writeValueAsString(line));
                out.write('\n');
            }
        }
        if (ref.reportsDroppedRecords() && !dropped.driverClosed) {
            double total = 0;
            for (final Map.Entry<MetricName, ? extends Metric> m : driver.metrics().entrySet()) {
                if (m.getKey().name().equals("dropped-records-total") && m.getKey().group().equals("stream-task-metrics")) {
                    total += ((Number) m.getValue().metricValue()).doubleValue();
                }
            }
            if (total != dropped.last) {
                dropped.last = total;
                final long n = (long) total;
                final ObjectNode line = JSON.createObjectNode();
                line.put("step", step);
                line.put("topic", DROPPED_RECORDS_TOPIC);
                line.putNull("key");
                line.set("value", ValueType.LONG.toJson(n));
                line.putNull("keyBytes");
                line.set("valueBytes", ValueType.hexOrNull(java.nio.ByteBuffer.allocate(8).putLong(n).array()));
                line.put("timestamp", 0L);
                line.putArray("headers");
                out.write(JSON.writeValueAsString(line));
                out.write('\n');
            }
        }
    }

    private static void deleteRecursively(final Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (final Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
