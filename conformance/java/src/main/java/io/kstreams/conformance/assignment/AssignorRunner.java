package io.kstreams.conformance.assignment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.StreamsPartitionAssignor;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor;

/**
 * Runs Java Kafka Streams 4.4's own task assignment on the scenarios of kstreams-go's
 * internal/assignment tests: ClientState built from the members' owned partitions and task
 * offset sums and the changelog end offset sums (as StreamsPartitionAssignor builds it), the
 * HighAvailabilityTaskAssignor over the clients, then StreamsPartitionAssignor's
 * assignTasksToThreads (package-private, called through reflection) for each client's active
 * stateful, standby and stateless tasks.
 *
 * <p>Input: one scenario per line, {"name", "config": {"acceptableRecoveryLag",
 * "maxWarmupReplicas", "numStandbyReplicas"}, "tasks": {task: [{"topic", "partition"}]},
 * "stateful": [task], "endOffsetSums": {task: sum}, "clients": [{"processId", "consumers":
 * [{"id", "owned": [{"topic", "partition"}], "offsetSums": {task: sum}}]}]}. Output: one line
 * per scenario, {"name", "probing": bool, "clients": [{"processId", "active": [task, sorted],
 * "standby": [task, sorted], "threads": {member: {"active": [task], "standby": [task]}}}]} (thread
 * lists in Java's order), or {"name", "error"}.
 *
 * <p>Usage: AssignorRunner INPUT.jsonl OUTPUT.jsonl
 */
public final class AssignorRunner {

    private static final ObjectMapper JSON = new ObjectMapper();

    private AssignorRunner() {}

    public static void main(final String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: AssignorRunner INPUT.jsonl OUTPUT.jsonl");
            System.exit(2);
        }
        final Method toThreads = StreamsPartitionAssignor.class.getDeclaredMethod("assignTasksToThreads",
            Collection.class, boolean.class, SortedSet.class, ClientState.class, Map.class);
        toThreads.setAccessible(true);
        try (BufferedWriter w = Files.newBufferedWriter(Path.of(args[1]), StandardCharsets.UTF_8)) {
            for (final String line : Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8)) {
                if (line.isBlank()) {
                    continue;
                }
                final JsonNode in = JSON.readTree(line);
                ObjectNode out;
                try {
                    out = run(in, toThreads);
                } catch (final Exception e) {
                    out = JSON.createObjectNode();
                    final Throwable cause = e.getCause() != null ? e.getCause() : e;
                    out.put("error", cause.getClass().getSimpleName() + ": " + cause.getMessage());
                }
                out.put("name", in.get("name").asText());
                w.write(JSON.writeValueAsString(out));
                w.write('\n');
            }
        }
    }

    private static Map<TaskId, Long> sums(final JsonNode obj) {
        final Map<TaskId, Long> out = new HashMap<>();
        final Iterator<Map.Entry<String, JsonNode>> it = obj.fields();
        while (it.hasNext()) {
            final Map.Entry<String, JsonNode> e = it.next();
            out.put(TaskId.parse(e.getKey()), e.getValue().asLong());
        }
        return out;
    }

    private static List<TopicPartition> partitions(final JsonNode a) {
        final List<TopicPartition> out = new ArrayList<>();
        for (final JsonNode p : a) {
            out.add(new TopicPartition(p.get("topic").asText(), p.get("partition").asInt()));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static ObjectNode run(final JsonNode in, final Method toThreads) throws Exception {
        final JsonNode cfg = in.get("config");
        final AssignmentConfigs configs = new AssignmentConfigs(
            cfg.get("acceptableRecoveryLag").asLong(),
            cfg.get("maxWarmupReplicas").asInt(),
            cfg.get("numStandbyReplicas").asInt(),
            600_000L,
            Collections.emptyList(),
            OptionalInt.empty(),
            OptionalInt.empty(),
            StreamsConfig.RACK_AWARE_ASSIGNMENT_STRATEGY_NONE);

        final Map<TopicPartition, TaskId> taskForPartition = new HashMap<>();
        final Set<TaskId> allTasks = new HashSet<>();
        final Iterator<Map.Entry<String, JsonNode>> tasks = in.get("tasks").fields();
        while (tasks.hasNext()) {
            final Map.Entry<String, JsonNode> e = tasks.next();
            final TaskId id = TaskId.parse(e.getKey());
            allTasks.add(id);
            for (final TopicPartition tp : partitions(e.getValue())) {
                taskForPartition.put(tp, id);
            }
        }
        final Set<TaskId> stateful = new HashSet<>();
        for (final JsonNode t : in.get("stateful")) {
            stateful.add(TaskId.parse(t.asText()));
        }
        final Map<TaskId, Long> endOffsetSums = sums(in.get("endOffsetSums"));

        final Map<ProcessId, ClientState> states = new HashMap<>();
        final Map<ProcessId, SortedSet<String>> consumers = new HashMap<>();
        for (final JsonNode c : in.get("clients")) {
            final ProcessId pid = new ProcessId(UUID.fromString(c.get("processId").asText()));
            final ClientState state = new ClientState(pid, Collections.emptyMap());
            final SortedSet<String> members = new TreeSet<>();
            for (final JsonNode m : c.get("consumers")) {
                final String id = m.get("id").asText();
                members.add(id);
                state.incrementCapacity();
                state.addOwnedPartitions(partitions(m.get("owned")), id);
                state.addPreviousTasksAndOffsetSums(id, sums(m.get("offsetSums")));
            }
            state.initializePrevTasks(taskForPartition, false);
            state.computeTaskLags(pid, endOffsetSums);
            states.put(pid, state);
            consumers.put(pid, members);
        }
        final RackAwareTaskAssignor rackAware = new RackAwareTaskAssignor(Cluster.empty(), Collections.emptyMap(),
            Collections.emptyMap(), Collections.emptyMap(), Collections.emptyMap(), null, configs, Time.SYSTEM);
        final boolean probing = new HighAvailabilityTaskAssignor().assign(states, allTasks, stateful, rackAware, configs);

        final ObjectNode out = JSON.createObjectNode();
        out.put("probing", probing);
        final ArrayNode clients = out.putArray("clients");
        for (final Map.Entry<ProcessId, ClientState> e : new TreeMap<>(states).entrySet()) {
            final ClientState state = e.getValue();
            final ObjectNode c = clients.addObject();
            c.put("processId", e.getKey().id().toString());
            final ArrayNode active = c.putArray("active");
            new TreeSet<>(state.activeTasks()).forEach(t -> active.add(t.toString()));
            final ArrayNode standby = c.putArray("standby");
            new TreeSet<>(state.standbyTasks()).forEach(t -> standby.add(t.toString()));

            final SortedSet<String> members = consumers.get(e.getKey());
            final Map<String, Integer> load = new HashMap<>();
            final Map<String, List<TaskId>> activeStateful = (Map<String, List<TaskId>>)
                toThreads.invoke(null, state.statefulActiveTasks(), true, members, state, load);
            final Map<String, List<TaskId>> standbys = (Map<String, List<TaskId>>)
                toThreads.invoke(null, state.standbyTasks(), true, members, state, load);
            final Map<String, List<TaskId>> stateless = (Map<String, List<TaskId>>)
                toThreads.invoke(null, state.statelessActiveTasks(), false, members, state, load);
            final ObjectNode threads = c.putObject("threads");
            for (final String m : members) {
                final ObjectNode t = threads.putObject(m);
                final ArrayNode ta = t.putArray("active");
                activeStateful.get(m).forEach(id -> ta.add(id.toString()));
                stateless.get(m).forEach(id -> ta.add(id.toString()));
                final ArrayNode ts = t.putArray("standby");
                standbys.get(m).forEach(id -> ts.add(id.toString()));
            }
        }
        return out;
    }
}
