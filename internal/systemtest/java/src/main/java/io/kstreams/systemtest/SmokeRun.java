package io.kstreams.systemtest;

import org.apache.kafka.streams.tests.SmokeTestDriver;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * Kafka's smoke-test driver as StreamsSmokeTest "run" drives it (SmokeTestDriver.generate, then
 * SmokeTestDriver.verify, both Kafka's own), with one difference: between the two it prints
 * {@code SMOKE-GENERATED} and waits for a line on stdin. StreamsSmokeTest verifies at once, while
 * the application may still be committing, and the driver's open-transaction check reads the end
 * offset before the last stable offset, so a commit marker landing between the two reads fails it
 * ("Offset for partition echo-1 is larger than topic endOffset"). The Go test writes the line once
 * the application's group has caught up; the check itself stays as strict as Kafka's.
 *
 * <pre>
 * SmokeRun BOOTSTRAP at_least_once|exactly_once_v2 [NUM_KEYS MAX_RECORDS_PER_KEY SECONDS]
 * </pre>
 *
 * Defaults are StreamsSmokeTest's: 20 keys, 1000 records per key, spread over 90 s. The verdict is
 * the driver's own last line, SUCCESS or FAILURE (the test reads that line, not the exit status).
 * Exit status 0 once the driver's verify returned, 1 when stdin closed first, 2 on a usage error.
 */
public final class SmokeRun {

    private SmokeRun() {
    }

    public static void main(final String[] args) throws Exception {
        if (args.length != 2 && args.length != 5) {
            System.err.println("usage: SmokeRun BOOTSTRAP at_least_once|exactly_once_v2 [NUM_KEYS MAX_RECORDS_PER_KEY SECONDS]");
            System.exit(2);
        }
        final String kafka = args[0];
        final boolean eos;
        switch (args[1]) {
            case "at_least_once":
                eos = false;
                break;
            case "exactly_once_v2":
                eos = true;
                break;
            default:
                System.err.println("processing guarantee must be at_least_once or exactly_once_v2, not " + args[1]);
                System.exit(2);
                return;
        }
        int numKeys = 20;
        int maxRecordsPerKey = 1000;
        long seconds = 90;
        if (args.length == 5) {
            numKeys = Integer.parseInt(args[2]);
            maxRecordsPerKey = Integer.parseInt(args[3]);
            seconds = Long.parseLong(args[4]);
        }
        final Map<String, Set<Integer>> allData =
            SmokeTestDriver.generate(kafka, numKeys, maxRecordsPerKey, Duration.ofSeconds(seconds));
        System.out.println("SMOKE-GENERATED " + numKeys * maxRecordsPerKey);
        System.out.flush();
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        if (in.readLine() == null) {
            System.err.println("stdin closed before the go-ahead to verify");
            System.exit(1);
        }
        SmokeTestDriver.verify(kafka, allData, maxRecordsPerKey, eos);
        System.out.flush();
        System.exit(0);
    }
}
