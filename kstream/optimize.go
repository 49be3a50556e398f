package kstream

import (
	"slices"
	"strings"
)

// Values of topology.optimization (Java: StreamsConfig.OPTIMIZE / NO_OPTIMIZATION and the
// individual optimizations of KIP-295).
const (
	// OptimizeNone disables all optimizations (the default). Java: StreamsConfig.NO_OPTIMIZATION.
	OptimizeNone = "none"
	// OptimizeAll enables every optimization. Java: StreamsConfig.OPTIMIZE.
	OptimizeAll = "all"
	// ReuseKTableSourceTopics makes a materialized source table restore from its source topic
	// instead of a "-changelog" topic. Java: StreamsConfig.REUSE_KTABLE_SOURCE_TOPICS.
	ReuseKTableSourceTopics = "reuse.ktable.source.topics"
	// MergeRepartitionTopics gives all the repartitions that follow one key-changing operation
	// a single repartition topic, placed right after that operation. Java:
	// StreamsConfig.MERGE_REPARTITION_TOPICS.
	MergeRepartitionTopics = "merge.repartition.topics"
	// SingleStoreSelfJoin rewrites a stream-stream join of a stream with itself (s.JoinStream(s,
	// ...), also the left and outer forms) to one window store and one join processor named as
	// the merge processor (KIP-862). As in Java, the rewritten join emits what an inner
	// self-join emits: a left or outer self-join loses its records with a null key and its
	// late records. Java: StreamsConfig.SINGLE_STORE_SELF_JOIN.
	SingleStoreSelfJoin = "single.store.self.join"
)

// parseOptimizations reads topology.optimization as Java's verifyTopologyOptimizationConfigs:
// "" or "none" -> none; "all" -> all three; else a comma-separated list of the individual
// names. Errors: a *processor.TopologyError for an unknown name or "none"/"all" inside a list.
func parseOptimizations(v string) (map[string]bool, error) {
	out := map[string]bool{}
	switch strings.TrimSpace(v) {
	case "", OptimizeNone:
		return out, nil
	case OptimizeAll:
		out[ReuseKTableSourceTopics], out[MergeRepartitionTopics], out[SingleStoreSelfJoin] = true, true, true
		return out, nil
	}
	for _, o := range strings.Split(v, ",") {
		o = strings.TrimSpace(o)
		switch o {
		case ReuseKTableSourceTopics, MergeRepartitionTopics, SingleStoreSelfJoin:
			out[o] = true
		default:
			return nil, dslErr("", nil, "%s=%q: %q is not a valid optimization; use %q, %q, or a comma-separated list of %q, %q, %q",
				TopologyOptimizationConfig, v, o, OptimizeNone, OptimizeAll, ReuseKTableSourceTopics, MergeRepartitionTopics, SingleStoreSelfJoin)
		}
	}
	return out, nil
}

// findParentMatching returns start if it matches, else the first matching parent of start, else
// the result of searching from the last parent (Java's findParentNodeMatching, quirks included).
func findParentMatching(start *graphNode, match func(*graphNode) bool) *graphNode {
	if match(start) {
		return start
	}
	var found *graphNode
	for _, p := range start.parents {
		if match(p) {
			return p
		}
		found = findParentMatching(p, match)
	}
	return found
}

// keyChangingParent returns the key-changing operation a repartition follows, or nil when a
// value-changing operation comes first. Java: getKeyChangingParentNode.
func keyChangingParent(n *graphNode) *graphNode {
	either := findParentMatching(n, func(g *graphNode) bool { return g.keyChanging || g.valueChanging })
	kc := findParentMatching(n, func(g *graphNode) bool { return g.keyChanging })
	if either != nil && either == kc {
		return kc
	}
	return nil
}

// mergeRepartitionTopics replaces, per key-changing operation, its optimizable repartitions
// by one repartition named after the first one's topic ("<topic>-sink/-filter/-source"),
// placed right after the operation; operators between the key change and a repartition move
// below the new repartition. Java: InternalStreamsBuilder.mergeRepartitionTopics.
func (b *StreamsBuilder) mergeRepartitionTopics() error {
	b.updateKeyChangersForMerges()
	for _, kc := range slices.Clone(b.keyChangerOrder) {
		reps, ok := b.keyChangers[kc]
		if !ok || len(reps) == 0 {
			continue
		}
		first := reps[0].optimizable
		keySerde, valueSerde := first.keySerde, first.valueSerde
		for _, r := range reps {
			if keySerde == nil {
				keySerde = r.optimizable.keySerde
			}
			if valueSerde == nil {
				valueSerde = r.optimizable.valueSerde
			}
		}
		rp := b.newRepartition(first.topic, keySerde, valueSerde, nil)
		rp.topic = first.topic
		opt := rp.node()
		opt.priority = kc.priority
		b.nodes = append(b.nodes, opt)
		for _, old := range reps {
			child := findParentMatching(old, func(g *graphNode) bool { return slices.Contains(g.parents, kc) })
			if child == nil {
				return dslErr(old.name, nil, "found a null keyChangingChild node for %s", old.name)
			}
			opt.addChild(child)
			kc.removeChild(child)
			oldParents := slices.Clone(old.parents)
			for _, oc := range slices.Clone(old.children) {
				for _, p := range oldParents {
					p.addChild(oc)
				}
			}
			for _, p := range oldParents {
				p.removeChild(old)
			}
			for _, oc := range slices.Clone(old.children) {
				old.removeChild(oc)
			}
			old.removed = true
			for _, g := range b.copartitions {
				for i, n := range g {
					if n == old.name {
						g[i] = opt.name
					}
				}
			}
		}
		kc.addChild(opt)
		delete(b.keyChangers, kc)
	}
	return nil
}

// updateKeyChangersForMerges moves the repartitions of key-changing operations that reach them
// through a merge node under that merge node. Java: maybeUpdateKeyChangingRepartitionNodeMap.
func (b *StreamsBuilder) updateKeyChangersForMerges() {
	var remove []*graphNode
	for _, m := range b.mergeNodes {
		var kcs []*graphNode
		for _, kc := range b.keyChangerOrder {
			reps, ok := b.keyChangers[kc]
			if !ok {
				continue
			}
			all := true
			for _, r := range reps {
				all = all && findParentMatching(r, func(g *graphNode) bool { return slices.Contains(g.parents, m) }) != nil
			}
			if all && findParentMatching(m, func(g *graphNode) bool { return slices.Contains(g.parents, kc) }) != nil {
				kcs = append(kcs, kc)
			}
		}
		var reps []*graphNode
		for _, kc := range kcs {
			for _, r := range b.keyChangers[kc] {
				if !slices.Contains(reps, r) {
					reps = append(reps, r)
				}
			}
			remove = append(remove, kc)
		}
		if _, ok := b.keyChangers[m]; !ok {
			b.keyChangerOrder = append(b.keyChangerOrder, m)
		}
		b.keyChangers[m] = reps
	}
	for _, kc := range remove {
		delete(b.keyChangers, kc)
	}
}

// nodeQueue is a binary min-heap by build priority with java.util.PriorityQueue's sift rules
// (ties keep heap order, as Java's).
type nodeQueue struct{ h []*graphNode }

func (q *nodeQueue) len() int { return len(q.h) }

func (q *nodeQueue) push(n *graphNode) {
	q.h = append(q.h, n)
	k := len(q.h) - 1
	for k > 0 {
		parent := (k - 1) / 2
		if q.h[k].priority >= q.h[parent].priority {
			break
		}
		q.h[k], q.h[parent] = q.h[parent], q.h[k]
		k = parent
	}
}

func (q *nodeQueue) pop() *graphNode {
	top := q.h[0]
	last := q.h[len(q.h)-1]
	q.h = q.h[:len(q.h)-1]
	if len(q.h) > 0 {
		k, x, n := 0, last, len(q.h)
		for k < n/2 {
			c := 2*k + 1
			if r := c + 1; r < n && q.h[c].priority > q.h[r].priority {
				c = r
			}
			if x.priority <= q.h[c].priority {
				break
			}
			q.h[k] = q.h[c]
			k = c
		}
		q.h[k] = x
	}
	return top
}
