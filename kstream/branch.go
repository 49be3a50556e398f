package kstream

import (
	"github.com/kstreams-go/kstreams/processor"
)

// BranchedKStream splits a stream into branches: each record goes to the first branch whose
// predicate it passes, else to the default branch (if any), else nowhere. Branch processors are
// named "<split name><branch name>" or "<split name><index>" (index from 1 in order of Branch
// calls, 0 for the default branch), where the split name is the Split's Named or
// "KSTREAM-BRANCH-<n>"; the map returned by DefaultBranch/NoDefaultBranch is keyed by those
// names. Java counterpart: BranchedKStream.
type BranchedKStream[K, V any] struct {
	src      KStream[K, V]
	name     string
	node     *graphNode
	preds    []func(K, V) bool
	children []string
	out      map[string]KStream[K, V]
}

// Split starts branching the stream. Java: split([named]).
func (s KStream[K, V]) Split(named ...Named) *BranchedKStream[K, V] {
	name := s.impl().b.orElseGenerate(lastNamed(named), branchName)
	bs := &BranchedKStream[K, V]{src: s, name: name, out: map[string]KStream[K, V]{}}
	vNil := nillable[V]()
	bs.node = s.stateless(name, func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		// A tombstone of a non-nillable value type is not given to the predicates: it goes to
		// the default branch, if any.
		if !tombstoneFor(vNil, r.Value) {
			k, v, err := cast2[K, V](r.Key, r.Value)
			if err != nil {
				return err
			}
			for i, p := range bs.preds {
				if p(k, v) {
					return ctx.ForwardTo(r, bs.children[i])
				}
			}
		}
		if len(bs.children) > len(bs.preds) {
			return ctx.ForwardTo(r, bs.children[len(bs.preds)])
		}
		return nil
	})
	return bs
}

// Branch adds a branch for the records passing pred (and failing every earlier predicate).
// Java: branch(predicate[, branched]).
func (bs *BranchedKStream[K, V]) Branch(pred func(K, V) bool, branched ...Branched[K, V]) *BranchedKStream[K, V] {
	if pred == nil {
		bs.src.s.b.fail(dslErr(bs.name, nil, "%s: branch predicate must not be nil", bs.name))
		pred = func(K, V) bool { return false }
	}
	bs.preds = append(bs.preds, pred)
	bs.create(branched, len(bs.preds))
	return bs
}

// DefaultBranch adds the branch of the records no predicate took and returns the branches.
// Java: defaultBranch([branched]).
func (bs *BranchedKStream[K, V]) DefaultBranch(branched ...Branched[K, V]) map[string]KStream[K, V] {
	bs.create(branched, 0)
	return bs.out
}

// NoDefaultBranch returns the branches; records no predicate took are dropped. Java:
// noDefaultBranch().
func (bs *BranchedKStream[K, V]) NoDefaultBranch() map[string]KStream[K, V] { return bs.out }

func (bs *BranchedKStream[K, V]) create(branched []Branched[K, V], index int) {
	var br Branched[K, V]
	if len(branched) > 0 {
		br = branched[len(branched)-1]
	}
	b := bs.src.s.b
	child := bs.name + itoa(index)
	if br.name != "" {
		child = bs.name + br.name
		b.checkName(child)
	}
	bs.children = append(bs.children, child)
	b.newProcessorName(child)
	n := b.addNode(processorNode(child, funcSupplier{f: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		return ctx.Forward(r)
	}}, nil, nil), bs.node)
	s := bs.src.s
	branch := KStream[K, V]{s: &streamImpl{b: b, name: child, node: n, keySerde: s.keySerde, valueSerde: s.valueSerde, repartitionRequired: s.repartitionRequired,
		sourceNodes: s.sourceNodes}}
	switch {
	case br.function != nil:
		if r := br.function(branch); r.s != nil {
			bs.out[child] = r
		}
	case br.consumer != nil:
		br.consumer(branch)
	default:
		bs.out[child] = branch
	}
}
