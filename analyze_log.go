package kstreams

import (
	"context"
	"log/slog"

	"github.com/kstreams-go/kstreams/processor"
)

// logTopologyWarnings logs each of Topology.Analyze's warnings when the instance starts, so
// that a user sees them without calling Analyze: at WARN, except
// processor.WarningNotCopartitioned at INFO. That one is advice about every join of two user
// topics, right or wrong: Start itself fails with ErrCopartition on different partition counts,
// and what is left (both topics partitioned by the join key the same way) is true of a correct
// application, which should not warn at every start (Java logs nothing there).
func (k *KafkaStreams) logTopologyWarnings() {
	for _, w := range k.topology.Analyze() {
		level := slog.LevelWarn
		if w.Kind == processor.WarningNotCopartitioned {
			level = slog.LevelInfo
		}
		k.log.Log(context.Background(), level, "kstreams: topology warning: "+w.Message, "kind", w.Kind, "node", w.Node)
	}
}
