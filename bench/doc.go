// Package bench holds the benchmarks of kstreams-go (Go benchmarks, not timed tests). Each
// prints a ratio against a baseline measured in the same run:
//
//   - BenchmarkPebbleKeyValueStore: Put, Get and a 100-key Range of the Pebble key-value store (store.Stores.PersistentKeyValueStore)
//     against raw Pebble opened with the same options (storeapi.PebbleEnv.RawOptions, internal/storeapi). The metric
//     "ours/raw" is the time ratio (1.15 = 15% overhead).
//   - BenchmarkRestore: restore of a changelog of -restore.records records (default 200 000;
//     the figure is 5 000 000) into a Pebble store through changelog.TaskState and
//     changelog.SaramaReader, against reading the same topic with a bare sarama partition
//     consumer. Metrics: "rate-ratio" (ours/raw records per second), and the peak Go heap and
//     RSS growth during restore for a quarter of the records and for all of them (flat means
//     memory does not grow with the changelog). It uses the broker in KAFKA_BOOTSTRAP_SERVERS,
//     or an in-process kfake broker (whose log is then in the same process's memory).
//   - BenchmarkWindowedCountMemory: -window.records records (default 10 000 000; env
//     KSTREAMS_BENCH_WINDOW_RECORDS overrides) over 100 000 keys through a 5-minute tumbling
//     window count with 1-minute grace in the test driver. Metrics: peak Go heap over the first
//     quarter and over all records, their ratio ("peak-ratio", 1.0 = flat), the number of
//     windows closed, records per second. Flat peak heap with ten times more closed windows
//     shows that retention drops closed windows.
//
// Run: go test -run '^$' -bench . -benchtime 1x ./bench/ [-args -restore.records 5000000]
package bench
