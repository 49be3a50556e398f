package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
)

// Errors of the internal topic manager.
var (
	// ErrMissingSourceTopics is wrapped by *MissingSourceTopicsError.
	ErrMissingSourceTopics = errors.New("missing source topics")
	// ErrWrongPartitionCount is wrapped by *PartitionCountError.
	ErrWrongPartitionCount = errors.New("internal topic has the wrong number of partitions")
	// ErrCopartition is wrapped by *CopartitionError.
	ErrCopartition = errors.New("co-partitioned topics have different numbers of partitions")
)

// MissingSourceTopicsError says which source topics do not exist. Java: MissingSourceTopicException.
type MissingSourceTopicsError struct {
	// Topics are the missing topics, sorted.
	Topics []string
}

// Error implements error.
func (e *MissingSourceTopicsError) Error() string {
	return fmt.Sprintf("source topics %s are missing; create them before starting the application", strings.Join(e.Topics, ", "))
}

// Unwrap returns ErrMissingSourceTopics.
func (e *MissingSourceTopicsError) Unwrap() error { return ErrMissingSourceTopics }

// PartitionCountError is an existing internal topic whose partition count differs from the one
// the topology needs. Java: the StreamsException "Existing internal topic ... has invalid
// partitions: expected: ...; actual: ...".
type PartitionCountError struct {
	// Topic is the internal topic.
	Topic string
	// Expected and Actual are the partition counts.
	Expected, Actual int32
}

// Error implements error.
func (e *PartitionCountError) Error() string {
	return fmt.Sprintf("existing internal topic %s has invalid partitions: expected: %d; actual: %d. "+
		"Use 'kafka-streams-application-reset' to reset the application and delete the topic",
		e.Topic, e.Expected, e.Actual)
}

// Unwrap returns ErrWrongPartitionCount.
func (e *PartitionCountError) Unwrap() error { return ErrWrongPartitionCount }

// CopartitionError says that topics which must be co-partitioned (joined) have different
// partition counts. Java: TopologyException "Topics not co-partitioned: [...]".
type CopartitionError struct {
	// Topics are the co-partitioned topics with their partition counts.
	Topics map[string]int32
}

// Error implements error.
func (e *CopartitionError) Error() string {
	names := slices.Sorted(maps.Keys(e.Topics))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%d", n, e.Topics[n])
	}
	return "topics not co-partitioned: [" + strings.Join(parts, ", ") + "]"
}

// Unwrap returns ErrCopartition.
func (e *CopartitionError) Unwrap() error { return ErrCopartition }

// InternalTopic is an internal topic the application needs.
type InternalTopic struct {
	// Name is the topic name.
	Name string
	// Partitions is the number of partitions.
	Partitions int32
	// Configs are the topic configs set on creation.
	Configs map[string]string
	// Changelog is true for a store changelog, false for a repartition topic.
	Changelog bool
}

// Layout is what the application's topics look like at run time: partition counts of every
// source topic, tasks per sub-topology, and the internal topics.
type Layout struct {
	// Partitions are the partition counts of all source and internal topics.
	Partitions map[string]int32
	// Tasks is the number of tasks of each sub-topology.
	Tasks map[int]int32
	// Internal are the internal topics, sorted by name.
	Internal []InternalTopic
	// Subtopologies lists the source topics of every sub-topology.
	Subtopologies []subtopologySources
}

// RepartitionTopicDefaults are the configs Java sets on repartition topics
// (RepartitionTopicConfig): delete policy, infinite retention (records are purged after
// commit), 50 MiB segments, CreateTime timestamps.
var RepartitionTopicDefaults = map[string]string{
	"cleanup.policy":         "delete",
	"retention.ms":           "-1",
	"segment.bytes":          "52428800",
	"message.timestamp.type": "CreateTime",
}

// ChangelogTopicDefaults are the configs Java sets on key-value store changelogs
// (UnwindowedUnversionedChangelogTopicConfig): compaction and CreateTime timestamps.
var ChangelogTopicDefaults = map[string]string{
	"cleanup.policy":         "compact",
	"message.timestamp.type": "CreateTime",
}

// WindowedChangelogAdditionalRetentionMs is windowstore.changelog.additional.retention.ms's
// default (24 h), added to a window store's retention for its changelog's retention.ms.
const WindowedChangelogAdditionalRetentionMs = 24 * 60 * 60 * 1000

// VersionedChangelogAdditionalCompactionLagMs is what Java adds to a versioned store's history
// retention for its changelog's min.compaction.lag.ms (24 h, fixed; not
// windowstore.changelog.additional.retention.ms).
const VersionedChangelogAdditionalCompactionLagMs = 24 * 60 * 60 * 1000

// windowedRetentionMs is retention + additional, saturating at the largest int64 (Java adds
// exactly and uses Long.MAX_VALUE on overflow).
func windowedRetentionMs(retention, additional int64) int64 {
	if additional > 0 && retention > math.MaxInt64-additional {
		return math.MaxInt64
	}
	return retention + additional
}

// ComputeLayout works out partition counts: user source topics from the cluster
// (existing), repartition topics from their upstream sub-topologies (or their fixed count),
// co-partition groups made equal, tasks per sub-topology, and changelog partition counts.
// Errors: *MissingSourceTopicsError, *CopartitionError.
func ComputeLayout(b *topology.Builder, appID string, existing map[string]int32) (*Layout, error) {
	return computeLayout(b, appID, existing, WindowedChangelogAdditionalRetentionMs)
}

// computeLayout is ComputeLayout with windowstore.changelog.additional.retention.ms.
func computeLayout(b *topology.Builder, appID string, existing map[string]int32, additionalRetentionMs int64) (*Layout, error) {
	groups := b.TopicGroups(appID)
	l := &Layout{Partitions: map[string]int32{}, Tasks: map[int]int32{}}
	repart := map[string]topology.InternalTopicProperties{}
	var missing []string
	for _, g := range groups {
		st := subtopologySources{ID: g.Subtopology, Topics: slices.Clone(g.SourceTopics)}
		for topic := range g.ChangelogTopics {
			st.Changelogs = append(st.Changelogs, topic)
			if slices.Contains(g.SourceTopics, topic) {
				st.SourceChangelogs = append(st.SourceChangelogs, topic)
			}
		}
		slices.Sort(st.Changelogs)
		slices.Sort(st.SourceChangelogs)
		l.Subtopologies = append(l.Subtopologies, st)
		for _, t := range g.SourceTopics {
			if p, ok := g.RepartitionSourceTopics[t]; ok {
				repart[t] = p
				if p.NumberOfPartitions > 0 {
					l.Partitions[t] = p.NumberOfPartitions
				}
				continue
			}
			n, ok := existing[t]
			if !ok {
				if !slices.Contains(missing, t) {
					missing = append(missing, t)
				}
				continue
			}
			l.Partitions[t] = n
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, &MissingSourceTopicsError{Topics: missing}
	}
	// Repartition topics take the largest partition count among the source topics of the
	// sub-topologies writing to them (Java: setRepartitionTopicMetadataNumberOfPartitions).
	for changed := true; changed; {
		changed = false
		for t := range repart {
			if _, ok := l.Partitions[t]; ok {
				continue
			}
			var n int32
			for _, g := range groups {
				if !slices.Contains(g.SinkTopics, t) {
					continue
				}
				for _, s := range g.SourceTopics {
					n = max(n, l.Partitions[s])
				}
			}
			if n > 0 {
				l.Partitions[t] = n
				changed = true
			}
		}
	}
	for t := range repart {
		if _, ok := l.Partitions[t]; !ok {
			return nil, fmt.Errorf("cannot determine the number of partitions of repartition topic %s", t)
		}
	}
	// Co-partition groups: user topics must agree; repartition topics follow them.
	for _, cg := range b.CopartitionGroups(appID) {
		var want int32
		counts := map[string]int32{}
		for _, t := range cg {
			counts[t] = l.Partitions[t]
			if _, internal := repart[t]; !internal || repart[t].NumberOfPartitions > 0 {
				if want != 0 && l.Partitions[t] != want {
					return nil, &CopartitionError{Topics: counts}
				}
				want = l.Partitions[t]
			}
		}
		if want == 0 {
			for _, t := range cg {
				want = max(want, l.Partitions[t])
			}
		}
		for _, t := range cg {
			if _, internal := repart[t]; internal && repart[t].NumberOfPartitions == 0 {
				l.Partitions[t] = want
			}
		}
		for _, t := range cg {
			counts[t] = l.Partitions[t]
			if counts[t] != want {
				return nil, &CopartitionError{Topics: counts}
			}
		}
	}
	for _, g := range groups {
		var n int32
		for _, t := range g.SourceTopics {
			n = max(n, l.Partitions[t])
		}
		l.Tasks[g.Subtopology] = n
		for topic, storeName := range g.ChangelogTopics {
			if slices.Contains(g.SourceTopics, topic) || b.Store(storeName) == nil {
				continue
			}
			cfg := maps.Clone(ChangelogTopicDefaults)
			sb, _ := b.Store(storeName).Builder.(processor.StoreBuilder)
			// Window and session stores: Java's WindowedChangelogTopicConfig; versioned stores:
			// its VersionedChangelogTopicConfig. Only the library's builders are recognized, as
			// Java's StoreBuilderWrapper recognizes only its own.
			info, _ := storeapi.DescribeBuilder(sb)
			if info.Windowed {
				cfg["cleanup.policy"] = "compact,delete"
				cfg["retention.ms"] = fmt.Sprint(windowedRetentionMs(info.RetentionMs, additionalRetentionMs))
			}
			if sb != nil {
				maps.Copy(cfg, sb.LogConfig())
			}
			if info.Versioned {
				if _, set := sb.LogConfig()["min.compaction.lag.ms"]; !set {
					cfg["min.compaction.lag.ms"] = fmt.Sprint(windowedRetentionMs(info.HistoryRetentionMs, VersionedChangelogAdditionalCompactionLagMs))
				}
			}
			l.Internal = append(l.Internal, InternalTopic{Name: topic, Partitions: n, Configs: cfg, Changelog: true})
			l.Partitions[topic] = n
		}
	}
	for t := range repart {
		l.Internal = append(l.Internal, InternalTopic{Name: t, Partitions: l.Partitions[t], Configs: maps.Clone(RepartitionTopicDefaults)})
	}
	sort.Slice(l.Internal, func(i, j int) bool { return l.Internal[i].Name < l.Internal[j].Name })
	return l, nil
}

// sourceTopicGrace is how long PrepareTopics keeps looking for source topics that the
// cluster's metadata does not list yet before it reports them missing.
const sourceTopicGrace = 5 * time.Second

// PrepareTopics reads the cluster's topics, computes the layout, creates missing internal
// topics (replication factor rf; -1 is the broker default) when create is set and checks
// existing ones. It waits (until ctx ends) for created topics to appear in the client's
// metadata. On the streams protocol (KIP-1071) create is false: the group coordinator creates
// the internal topics the members describe, as for Java 4.4, whose client creates none there. Source topics absent
// from the metadata are looked for again for up to 5 s (a topic created just before may not be
// listed yet) before the *MissingSourceTopicsError.
// Errors: *MissingSourceTopicsError, *PartitionCountError, *CopartitionError, admin errors.
func PrepareTopics(ctx context.Context, admin sarama.ClusterAdmin, client sarama.Client, b *topology.Builder, appID string, rf int16, additionalRetentionMs int64, create bool) (*Layout, error) {
	existing, err := listTopics(admin)
	if err != nil {
		return nil, err
	}
	l, err := computeLayout(b, appID, existing, additionalRetentionMs)
	if me := new(MissingSourceTopicsError); errors.As(err, &me) {
		// The topic list leaves out the topics the principal may not describe: such a
		// source topic is unauthorized, not missing (and waiting would not change that).
		if aerr := unauthorizedTopics(admin, me.Topics); aerr != nil {
			return nil, aerr
		}
	}
	// A topic created just before Start may not be in the broker's metadata yet (creation is
	// committed by the controller first): look again for a short while before calling a
	// source topic missing.
	deadline := time.Now().Add(sourceTopicGrace)
	for err != nil && errors.As(err, new(*MissingSourceTopicsError)) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(100 * time.Millisecond): // poll interval; the grace bounds the wait
		}
		if existing, err = listTopics(admin); err != nil {
			return nil, err
		}
		l, err = computeLayout(b, appID, existing, additionalRetentionMs)
	}
	if err != nil {
		return nil, err
	}
	var created []string
	for _, it := range l.Internal {
		if n, ok := existing[it.Name]; ok {
			if n != it.Partitions {
				return nil, &PartitionCountError{Topic: it.Name, Expected: it.Partitions, Actual: n}
			}
			continue
		}
		if !create {
			continue
		}
		entries := map[string]*string{}
		for k, v := range it.Configs {
			entries[k] = &v
		}
		err := admin.CreateTopic(it.Name, &sarama.TopicDetail{NumPartitions: it.Partitions, ReplicationFactor: rf, ConfigEntries: entries}, false)
		if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
			var te *sarama.TopicError
			if !errors.As(err, &te) || te.Err != sarama.ErrTopicAlreadyExists {
				return nil, fmt.Errorf("create internal topic %s: %w", it.Name, err)
			}
		}
		created = append(created, it.Name)
	}
	// Wait until the created topics (or ones another instance created concurrently) are
	// visible, and check their partition counts.
	for len(created) > 0 {
		_ = client.RefreshMetadata(created...)
		var pending []string
		for _, t := range created {
			ps, err := client.Partitions(t)
			switch {
			case err != nil || len(ps) == 0:
				pending = append(pending, t)
			case int32(len(ps)) != l.Partitions[t]:
				return nil, &PartitionCountError{Topic: t, Expected: l.Partitions[t], Actual: int32(len(ps))}
			}
		}
		created = pending
		if len(created) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for internal topics %v: %w", created, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return l, nil
}

// unauthorizedTopics returns an error naming those of topics the principal is not authorized
// to describe (wrapping sarama.ErrTopicAuthorizationFailed), or nil. Java: the consumer's
// TopicAuthorizationException "Not authorized to access topics: [...]".
func unauthorizedTopics(admin sarama.ClusterAdmin, topics []string) error {
	md, err := admin.DescribeTopics(topics)
	if err != nil {
		return nil // the topics are reported missing, as before
	}
	var denied []string
	for _, m := range md {
		if m.Err == sarama.ErrTopicAuthorizationFailed {
			denied = append(denied, m.Name)
		}
	}
	if len(denied) == 0 {
		return nil
	}
	sort.Strings(denied)
	return fmt.Errorf("source topics %s: not authorized to access them (the principal needs READ on every input topic): %w",
		strings.Join(denied, ", "), sarama.ErrTopicAuthorizationFailed)
}

func listTopics(admin sarama.ClusterAdmin) (map[string]int32, error) {
	ts, err := admin.ListTopics()
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	out := make(map[string]int32, len(ts))
	for n, d := range ts {
		out[n] = d.NumPartitions
	}
	return out, nil
}
