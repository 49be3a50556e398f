import java.nio.file.*;
import java.util.*;
import java.util.regex.Pattern;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.*;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.*;
import org.apache.kafka.streams.processor.internals.*;

// Reads topology specs (one command per line) and prints Java's topology.describe().
// Usage: java DescribeSpec spec-file... ; writes <spec>.describe.txt next to each spec, or
// "ERROR <message>" when building fails.
public class DescribeSpec {
  static ProcessorSupplier<Object,Object,Object,Object> sup() {
    return () -> new Processor<Object,Object,Object,Object>() { public void process(Record<Object,Object> r) {} };
  }
  static StoreBuilder<?> store(String n, boolean logging) {
    StoreBuilder<?> b = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(n), Serdes.String(), Serdes.String());
    return logging ? b : b.withLoggingDisabled();
  }
  static InternalTopologyBuilder itb(Topology t) throws Exception {
    java.lang.reflect.Field fl = Topology.class.getDeclaredField("internalTopologyBuilder");
    fl.setAccessible(true);
    return (InternalTopologyBuilder) fl.get(t);
  }
  static int subtopologyId(TopologyMetadata.Subtopology s) throws Exception {
    java.lang.reflect.Field fl = TopologyMetadata.Subtopology.class.getDeclaredField("nodeGroupId");
    fl.setAccessible(true);
    return (Integer) fl.get(s);
  }
  static String[] list(String s) { return s.equals("-") ? new String[0] : s.split(","); }
  public static void main(String[] args) throws Exception {
    for (String f : args) {
      Topology t = new Topology();
      String out;
      try {
        for (String line : Files.readAllLines(Paths.get(f))) {
          line = line.trim();
          if (line.isEmpty() || line.startsWith("#")) continue;
          String[] p = line.split(" ");
          switch (p[0]) {
            case "source": t.addSource(p[1], list(p[2])); break;
            case "pattern": t.addSource(p[1], Pattern.compile(p[2])); break;
            case "processor": t.addProcessor(p[1], sup(), list(p[2])); break;
            case "sink": t.addSink(p[1], p[2], list(p[3])); break;
            case "store": t.addStateStore(store(p[1], true), list(p[2])); break;
            case "connect": t.connectProcessorAndStateStores(p[1], list(p[2])); break;
            case "global": t.addGlobalStore(store(p[1], false), p[2], Serdes.String().deserializer(), Serdes.String().deserializer(), p[3], p[4],
                () -> new Processor<String,String,Void,Void>() { public void process(Record<String,String> r) {} }); break;
            case "globallog": t.addGlobalStore(store(p[1], true), p[2], Serdes.String().deserializer(), Serdes.String().deserializer(), p[3], p[4],
                () -> new Processor<String,String,Void,Void>() { public void process(Record<String,String> r) {} }); break;
            case "readonly": t.addReadOnlyStateStore(store(p[1], true), p[2], Serdes.String().deserializer(), Serdes.String().deserializer(), p[3], p[4],
                () -> new Processor<String,String,Void,Void>() { public void process(Record<String,String> r) {} }); break;
            case "internal": itb(t).addInternalTopic(p[1], new InternalTopicProperties(p.length > 2 ? Integer.valueOf(p[2]) : null)); break;
            case "copartition": itb(t).copartitionSources(Arrays.asList(list(p[1]))); break;
            default: throw new IllegalArgumentException(line);
          }
        }
        out = t.describe().toString();
        if (f.endsWith(".topics.spec")) {
          InternalTopologyBuilder b = itb(t);
          b.setApplicationId("app");
          b.buildTopology();
          StringBuilder sb = new StringBuilder();
          for (Map.Entry<TopologyMetadata.Subtopology, InternalTopologyBuilder.TopicsInfo> e : b.subtopologyToTopicsInfo().entrySet()) {
            InternalTopologyBuilder.TopicsInfo ti = e.getValue();
            sb.append("subtopology ").append(subtopologyId(e.getKey())).append("\n");
            sb.append(" source: ").append(new TreeSet<>(ti.sourceTopics)).append("\n");
            sb.append(" sink: ").append(new TreeSet<>(ti.sinkTopics)).append("\n");
            TreeMap<String, String> rep = new TreeMap<>();
            ti.repartitionSourceTopics.forEach((k, v) -> rep.put(k, String.valueOf(v.numberOfPartitions().orElse(0))));
            sb.append(" repartition: ").append(rep).append("\n");
            sb.append(" changelog: ").append(new TreeSet<>(ti.stateChangelogTopics.keySet())).append("\n");
          }
          TreeSet<String> groups = new TreeSet<>();
          for (Set<String> g : b.copartitionGroups()) groups.add(new TreeSet<>(g).toString());
          sb.append("copartition: ").append(groups).append("\n");
          Files.write(Paths.get(f.replaceAll("\\.spec$", "") + ".txt"), sb.toString().getBytes("UTF-8"));
        }
      } catch (Exception e) {
        out = "ERROR " + e.getMessage() + "\n";
      }
      Files.write(Paths.get(f.replaceAll("\\.spec$", "") + ".describe.txt"), out.getBytes("UTF-8"));
    }
  }
}
