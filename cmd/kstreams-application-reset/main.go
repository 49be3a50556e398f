// Command kstreams-application-reset resets a Kafka Streams application, this library's or
// Java's, so that it reprocesses its input from scratch: Apache Kafka's
// kafka-streams-application-reset (StreamsResetter), with the same options, output and exit
// codes, plus --state-dir to delete the local state too.
//
// Usage:
//
//	kstreams-application-reset --application-id ID [--bootstrap-server HOST:PORT,...]
//	    [--input-topics T1,T2] [--intermediate-topics T3] [--internal-topics T4,...]
//	    [--to-earliest | --to-latest | --to-offset N | --to-datetime YYYY-MM-DDTHH:mm:SS.sss |
//	     --by-duration PnDTnHnMnS | --shift-by N | --from-file PLAN.csv]
//	    [--command-config client.properties] [--state-dir DIR] [--force] [--dry-run]
//
// It does, in this order:
//
//  1. refuses while the consumer group ID has members (an instance still runs, or its member
//     has not yet timed out), unless --force, which removes them (KIP-571);
//  2. with --state-dir DIR, deletes the local state in DIR/ID as KafkaStreams#cleanUp does
//     (kstreams.CleanUpStateDir), refused while an instance, Go or Java, holds DIR/ID/.lock;
//  3. commits, for group ID, the input topics' offsets: the earliest offset (the default, or
//     --to-earliest), the end (--to-latest), offset N (--to-offset, clamped to the partition's
//     range), the first offset at or after a time (--to-datetime, UTC unless the time has a
//     zone; --by-duration, now minus a duration), the committed offset shifted by N
//     (--shift-by), or a CSV plan of TOPIC,PARTITION,OFFSET lines (--from-file); and the
//     intermediate topics' end offsets;
//  4. deletes the application's internal topics: those named "ID-..." that end in -changelog
//     or -repartition (stores, KTable suppression buffers, repartitioning) or are a foreign-key
//     join's subscription topics, or the subset --internal-topics names.
//
// Output topics are not touched. --dry-run prints the same steps and changes nothing (Java's
// removes the members even then). It resets applications of group.protocol=classic, the
// default; it refuses a streams group (group.protocol=streams, KIP-1071), whose members the
// classic group API does not show, pointing at Apache Kafka's kafka-streams-groups.sh.
// --command-config (or --config-file, deprecated as in Java) is a client properties file: bootstrap.servers,
// security.protocol, sasl.mechanism, sasl.jaas.config (OAUTHBEARER with sasl.login.callback.handler.class
// and sasl.oauthbearer.*) and the ssl.* PEM properties, as
// kstreams.ConfigFromProperties reads them. Exit code 0 when done, 1 on an error (printed as
// "ERROR: ...") or when an input topic does not exist.
package main

import (
	"os"

	"github.com/kstreams-go/kstreams/internal/resetter"
)

func main() {
	os.Exit(resetter.Run(os.Args[1:], os.Stdout, os.Stderr))
}
