package resetter

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// fkTopic matches the foreign-key join topics named by the processor (KTABLE-FK-JOIN-...-<n>-topic).
var fkTopic = regexp.MustCompile(`^.+-KTABLE-FK-JOIN-SUBSCRIPTION-(REGISTRATION|RESPONSE)-\d+-topic$`)

// IsInternalTopicName reports whether topic is named as Kafka Streams names the internal
// topics it creates: a -changelog (stores, KTable suppression buffers) or -repartition suffix,
// or a foreign-key join's subscription registration or response topic. Java:
// StreamsResetter.matchesInternalTopicFormat.
func IsInternalTopicName(topic string) bool {
	return strings.HasSuffix(topic, "-changelog") || strings.HasSuffix(topic, "-repartition") ||
		strings.HasSuffix(topic, "-subscription-registration-topic") ||
		strings.HasSuffix(topic, "-subscription-response-topic") || fkTopic.MatchString(topic)
}

// InternalTopics returns, sorted, the topics of all that are application appID's internal
// topics: named "<appID>-..." with an internal topic's suffix (IsInternalTopicName), and not
// given as an input or intermediate topic (a user topic may be named like one by chance,
// KAFKA-7930).
func InternalTopics(appID string, all, input, intermediate []string) []string {
	var out []string
	for _, t := range all {
		if strings.HasPrefix(t, appID+"-") && IsInternalTopicName(t) && !slices.Contains(input, t) && !slices.Contains(intermediate, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// Bounds are a partition's earliest and end offsets.
type Bounds struct{ Earliest, Latest int64 }

// clamp returns off bounded by b, and a note when it had to move it (Java prints the same).
func (b Bounds) clamp(off int64) (int64, string) {
	switch {
	case off >= b.Latest:
		if off == b.Latest {
			return off, ""
		}
		return b.Latest, fmt.Sprintf("New offset (%d) is higher than latest offset. Value will be set to %d", off, b.Latest)
	case off < b.Earliest:
		return b.Earliest, fmt.Sprintf("New offset (%d) is lower than earliest offset. Value will be set to %d", off, b.Earliest)
	}
	return off, ""
}

// Lookup is what Target needs to know about a partition: its bounds, its committed offset
// (ok false when the group has none), and for ToDatetime / ByDuration the first offset whose
// timestamp is at or after a time (ok false when no record is that late).
type Lookup struct {
	Bounds    Bounds
	Committed int64
	HasCommit bool
	AtTime    int64
	HasAtTime bool
}

// Target returns the offset mode o puts partition tp at, given what is known of it, and notes
// to print (clamping, fallbacks). For FromFile a partition the plan does not name keeps its
// committed offset (or goes to its end offset without one) with a note.
func Target(o *Options, tp TopicPartition, l Lookup) (int64, []string) {
	var notes []string
	clamp := func(off int64) int64 {
		off, n := l.Bounds.clamp(off)
		if n != "" {
			notes = append(notes, n)
		}
		return off
	}
	current := l.Bounds.Latest // where a consumer without a committed offset starts (auto.offset.reset=latest)
	if l.HasCommit {
		current = l.Committed
	}
	switch o.Mode {
	case ToLatest:
		return l.Bounds.Latest, nil
	case ToOffset:
		return clamp(o.Offset), notes
	case ShiftBy:
		return clamp(current + o.Shift), notes
	case ToDatetime, ByDuration:
		if l.HasAtTime {
			return l.AtTime, nil
		}
		return l.Bounds.Latest, []string{fmt.Sprintf("Partition %d from topic %s is empty, without a committed record. "+
			"Falling back to latest known offset.", tp.Partition, tp.Topic)}
	case FromFile:
		off, ok := o.Plan[tp]
		if !ok {
			return clamp(current), []string{fmt.Sprintf("Partition %s is not in the reset plan; it keeps offset %d", tp, clamp(current))}
		}
		return clamp(off), notes
	}
	return l.Bounds.Earliest, nil
}
