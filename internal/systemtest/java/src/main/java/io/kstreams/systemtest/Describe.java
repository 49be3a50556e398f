package io.kstreams.systemtest;

import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Properties;

/**
 * Prints Java's describe() of a Kafka system-test client's topology, built by Kafka's own class
 * from the kafka-streams test jar on the classpath, so the Go ports in systemtest/ can be checked
 * against it.
 *
 * <pre>
 * Describe eos            EosTestClient, simple topology (test jar 4.2.1)
 * Describe eos-complex    EosTestClient, with the "repartition" topic (test jar 4.2.1)
 * Describe smoke          SmokeTestClient.getTopology() (test jar 4.3.1)
 * </pre>
 *
 * EosTestClient builds its topology inside a private method that also makes the KafkaStreams
 * instance, so this reaches it by reflection: the instance is made (pointing at an address that
 * is never contacted: nothing is started), its topology metadata describes the topology exactly
 * as Topology.describe() does, and it is closed again. Exit status 2 on a usage error.
 */
public final class Describe {

    private Describe() {
    }

    public static void main(final String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: Describe eos|eos-complex|smoke");
            System.exit(2);
        }
        switch (args[0]) {
            case "eos":
                System.out.print(eos(false));
                break;
            case "eos-complex":
                System.out.print(eos(true));
                break;
            case "smoke":
                System.out.print(smoke());
                break;
            default:
                System.err.println("usage: Describe eos|eos-complex|smoke");
                System.exit(2);
        }
        System.out.flush();
        System.exit(0);
    }

    private static String smoke() throws Exception {
        final Class<?> client = Class.forName("org.apache.kafka.streams.tests.SmokeTestClient");
        final Object instance = client.getConstructor(String.class).newInstance("describe");
        final Topology topology = (Topology) client.getMethod("getTopology").invoke(instance);
        return topology.describe().toString();
    }

    private static String eos(final boolean withRepartitioning) throws Exception {
        final Class<?> client = Class.forName("org.apache.kafka.streams.tests.EosTestClient");
        final Constructor<?> ctor = client.getDeclaredConstructor(Properties.class, boolean.class);
        ctor.setAccessible(true);
        final Properties props = new Properties();
        props.put("bootstrap.servers", "127.0.0.1:9");
        props.put("state.dir", Files.createTempDirectory("describe-eos").toString());
        final Object instance = ctor.newInstance(props, withRepartitioning);
        final Method create = client.getDeclaredMethod("createKafkaStreams", Properties.class);
        create.setAccessible(true);
        final KafkaStreams streams = (KafkaStreams) create.invoke(instance, props);
        try {
            final Field metadata = KafkaStreams.class.getDeclaredField("topologyMetadata");
            metadata.setAccessible(true);
            final Object topologyMetadata = metadata.get(streams);
            return (String) topologyMetadata.getClass().getMethod("topologyDescriptionString").invoke(topologyMetadata);
        } finally {
            streams.close(Duration.ZERO);
        }
    }
}
