package io.kstreams.conformance.assignment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.internals.generated.SubscriptionInfoData;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;
import org.apache.kafka.streams.state.HostInfo;

/**
 * Runs Java Kafka Streams' own SubscriptionInfo and AssignmentInfo (the user data of the
 * "stream" group protocol) on the codec vectors of kstreams-go's internal/assignment package.
 *
 * <p>Input: one JSON object per line, {"name": N, "kind": "subscription" | "assignment", "op":
 * "encode", "value": V} or {..., "op": "decode", "hex": H}. Output: one line per input line,
 * {"name": N, "hex": H} (encode: Java's bytes for V) or {"name": N, "value": V} (decode: what
 * Java reads from H), or {"name": N, "error": "ExceptionClass: message"}.
 *
 * <p>The value form is canonical (the Go test builds the same): subscription {"version",
 * "latestSupportedVersion", "processId" (UUID text), "userEndPoint" (null for none),
 * "taskOffsetSums": [{"task": "0_1", "sum": S}] sorted by task text, "uniqueField",
 * "errorCode", "clientTags": {k: v} with sorted keys}; assignment {"version",
 * "commonlySupportedVersion", "activeTasks": [task text, in order], "standbyTasks": [{"task",
 * "partitions"}] sorted by task text, "partitionsByHost" and "standbyPartitionsByHost":
 * [{"host", "port", "partitions"}] sorted by host then port, "errorCode", "nextRebalanceMs"},
 * partitions as [{"topic", "partition"}] sorted by topic then partition.
 *
 * <p>Usage: CodecVectors INPUT.jsonl OUTPUT.jsonl
 */
public final class CodecVectors {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HexFormat HEX = HexFormat.of();
    private static final Comparator<TopicPartition> TP_ORDER =
        Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);
    private static final Comparator<HostInfo> HOST_ORDER =
        Comparator.comparing(HostInfo::host).thenComparingInt(HostInfo::port);

    private CodecVectors() {}

    public static void main(final String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: CodecVectors INPUT.jsonl OUTPUT.jsonl");
            System.exit(2);
        }
        try (BufferedWriter w = Files.newBufferedWriter(Path.of(args[1]), StandardCharsets.UTF_8)) {
            for (final String line : Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8)) {
                if (line.isBlank()) {
                    continue;
                }
                final JsonNode in = JSON.readTree(line);
                final ObjectNode out = JSON.createObjectNode();
                out.put("name", in.get("name").asText());
                try {
                    final boolean sub = in.get("kind").asText().equals("subscription");
                    if (in.get("op").asText().equals("encode")) {
                        final ByteBuffer buf = sub ? subscription(in.get("value")).encode() : assignment(in.get("value")).encode();
                        final byte[] b = new byte[buf.remaining()];
                        buf.get(b);
                        out.put("hex", HEX.formatHex(b));
                    } else {
                        final ByteBuffer buf = ByteBuffer.wrap(HEX.parseHex(in.get("hex").asText()));
                        out.set("value", sub ? canonical(SubscriptionInfo.decode(buf)) : canonical(AssignmentInfo.decode(buf)));
                    }
                } catch (final Exception e) {
                    out.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                w.write(JSON.writeValueAsString(out));
                w.write('\n');
            }
        }
    }

    private static SubscriptionInfo subscription(final JsonNode v) {
        final Map<TaskId, Long> sums = new HashMap<>();
        for (final JsonNode e : v.get("taskOffsetSums")) {
            sums.put(TaskId.parse(e.get("task").asText()), e.get("sum").asLong());
        }
        final Map<String, String> tags = new HashMap<>();
        final Iterator<Map.Entry<String, JsonNode>> it = v.get("clientTags").fields();
        while (it.hasNext()) {
            final Map.Entry<String, JsonNode> e = it.next();
            tags.put(e.getKey(), e.getValue().asText());
        }
        final JsonNode ep = v.get("userEndPoint");
        return new SubscriptionInfo(
            v.get("version").asInt(),
            v.get("latestSupportedVersion").asInt(),
            new ProcessId(UUID.fromString(v.get("processId").asText())),
            ep == null || ep.isNull() ? null : ep.asText(),
            sums,
            (byte) v.get("uniqueField").asInt(),
            v.get("errorCode").asInt(),
            tags);
    }

    private static AssignmentInfo assignment(final JsonNode v) {
        final List<TaskId> active = new ArrayList<>();
        for (final JsonNode t : v.get("activeTasks")) {
            active.add(TaskId.parse(t.asText()));
        }
        final Map<TaskId, Set<TopicPartition>> standby = new HashMap<>();
        for (final JsonNode e : v.get("standbyTasks")) {
            standby.put(TaskId.parse(e.get("task").asText()), partitions(e.get("partitions")));
        }
        final AssignmentInfo info = new AssignmentInfo(
            v.get("version").asInt(),
            v.get("commonlySupportedVersion").asInt(),
            active,
            standby,
            hosts(v.get("partitionsByHost")),
            hosts(v.get("standbyPartitionsByHost")),
            v.get("errorCode").asInt());
        info.setNextRebalanceTime(v.get("nextRebalanceMs").asLong());
        return info;
    }

    private static Set<TopicPartition> partitions(final JsonNode a) {
        final Set<TopicPartition> out = new HashSet<>();
        for (final JsonNode p : a) {
            out.add(new TopicPartition(p.get("topic").asText(), p.get("partition").asInt()));
        }
        return out;
    }

    private static Map<HostInfo, Set<TopicPartition>> hosts(final JsonNode a) {
        final Map<HostInfo, Set<TopicPartition>> out = new HashMap<>();
        for (final JsonNode h : a) {
            out.put(new HostInfo(h.get("host").asText(), h.get("port").asInt()), partitions(h.get("partitions")));
        }
        return out;
    }

    private static ObjectNode canonical(final SubscriptionInfo s) throws ReflectiveOperationException {
        final ObjectNode o = JSON.createObjectNode();
        o.put("version", s.version());
        o.put("latestSupportedVersion", s.latestSupportedVersion());
        o.put("processId", s.processId().id().toString());
        o.put("userEndPoint", s.userEndPoint());
        final ArrayNode sums = o.putArray("taskOffsetSums");
        final TreeMap<String, Long> sorted = new TreeMap<>();
        s.taskOffsetSums().forEach((id, sum) -> sorted.put(id.toString(), sum));
        sorted.forEach((id, sum) -> sums.addObject().put("task", id).put("sum", sum));
        // SubscriptionInfo has no getter for the unique field; read its generated data.
        final Field data = SubscriptionInfo.class.getDeclaredField("data");
        data.setAccessible(true);
        o.put("uniqueField", ((SubscriptionInfoData) data.get(s)).uniqueField());
        o.put("errorCode", s.errorCode());
        final ObjectNode tags = o.putObject("clientTags");
        new TreeMap<>(s.clientTags()).forEach(tags::put);
        return o;
    }

    private static ObjectNode canonical(final AssignmentInfo a) {
        final ObjectNode o = JSON.createObjectNode();
        o.put("version", a.version());
        o.put("commonlySupportedVersion", a.commonlySupportedVersion());
        final ArrayNode active = o.putArray("activeTasks");
        a.activeTasks().forEach(t -> active.add(t.toString()));
        final ArrayNode standby = o.putArray("standbyTasks");
        final TreeMap<String, Set<TopicPartition>> sorted = new TreeMap<>();
        a.standbyTasks().forEach((id, tps) -> sorted.put(id.toString(), tps));
        sorted.forEach((id, tps) -> {
            final ObjectNode e = standby.addObject();
            e.put("task", id);
            partitions(e.putArray("partitions"), tps);
        });
        hosts(o.putArray("partitionsByHost"), a.partitionsByHost());
        hosts(o.putArray("standbyPartitionsByHost"), a.standbyPartitionByHost());
        o.put("errorCode", a.errCode());
        o.put("nextRebalanceMs", a.nextRebalanceMs());
        return o;
    }

    private static void partitions(final ArrayNode out, final Set<TopicPartition> tps) {
        tps.stream().sorted(TP_ORDER).forEach(tp -> out.addObject().put("topic", tp.topic()).put("partition", tp.partition()));
    }

    private static void hosts(final ArrayNode out, final Map<HostInfo, Set<TopicPartition>> m) {
        if (m == null) {
            return;
        }
        m.keySet().stream().sorted(HOST_ORDER).forEach(h -> {
            final ObjectNode e = out.addObject();
            e.put("host", h.host());
            e.put("port", h.port());
            partitions(e.putArray("partitions"), m.get(h));
        });
    }
}
