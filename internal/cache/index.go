package cache

// keyIndex keeps the keys of one named cache in ascending unsigned byte order (Go's string
// order, which is Java's Bytes order), for range scans. It is a skip list with levels drawn
// from a deterministic xorshift generator.
type keyIndex struct {
	head  *indexNode
	level int
	rnd   uint64
}

const indexMaxLevel = 24

type indexNode struct {
	key  string
	next []*indexNode
}

func newKeyIndex() *keyIndex {
	return &keyIndex{head: &indexNode{next: make([]*indexNode, indexMaxLevel)}, level: 1, rnd: 0x2545F4914F6CDD1D}
}

func (x *keyIndex) randomLevel() int {
	lvl := 1
	for lvl < indexMaxLevel {
		x.rnd ^= x.rnd << 13
		x.rnd ^= x.rnd >> 7
		x.rnd ^= x.rnd << 17
		if x.rnd&3 != 0 {
			break
		}
		lvl++
	}
	return lvl
}

// seek returns the first node whose key is >= k and fills prev, when non-nil, with the last
// node before that position on every level.
func (x *keyIndex) seek(k string, prev []*indexNode) *indexNode {
	n := x.head
	for i := x.level - 1; i >= 0; i-- {
		for n.next[i] != nil && n.next[i].key < k {
			n = n.next[i]
		}
		if prev != nil {
			prev[i] = n
		}
	}
	return n.next[0]
}

// add inserts k; callers only add keys that are absent.
func (x *keyIndex) add(k string) {
	var prev [indexMaxLevel]*indexNode
	if n := x.seek(k, prev[:]); n != nil && n.key == k {
		return
	}
	lvl := x.randomLevel()
	if lvl > x.level {
		for i := x.level; i < lvl; i++ {
			prev[i] = x.head
		}
		x.level = lvl
	}
	nn := &indexNode{key: k, next: make([]*indexNode, lvl)}
	for i := range lvl {
		nn.next[i] = prev[i].next[i]
		prev[i].next[i] = nn
	}
}

// remove deletes k if present.
func (x *keyIndex) remove(k string) {
	var prev [indexMaxLevel]*indexNode
	n := x.seek(k, prev[:])
	if n == nil || n.key != k {
		return
	}
	for i := range n.next {
		if prev[i].next[i] == n {
			prev[i].next[i] = n.next[i]
		}
	}
	for x.level > 1 && x.head.next[x.level-1] == nil {
		x.level--
	}
}

// between returns, ascending, the keys k with from <= k and k <= to (k < to when
// !toInclusive); a nil bound is unbounded.
func (x *keyIndex) between(from, to *string, toInclusive bool) []string {
	var n *indexNode
	if from == nil {
		n = x.head.next[0]
	} else {
		n = x.seek(*from, nil)
	}
	var out []string
	for ; n != nil; n = n.next[0] {
		if to != nil && (n.key > *to || (n.key == *to && !toInclusive)) {
			break
		}
		out = append(out, n.key)
	}
	return out
}

// clear drops every key.
func (x *keyIndex) clear() {
	*x = *newKeyIndex()
}

// page returns, in the iteration's order, up to n keys of the range between from and to (as
// in between; descending when reverse) that lie strictly beyond after (above it ascending,
// below it descending; nil: from the range's start).
func (x *keyIndex) page(from, to *string, toInclusive bool, after *string, reverse bool, n int) []string {
	out := make([]string, 0, min(n, 64))
	if !reverse {
		var nd *indexNode
		switch {
		case after != nil && (from == nil || *after >= *from):
			if nd = x.seek(*after, nil); nd != nil && nd.key == *after {
				nd = nd.next[0]
			}
		case from != nil:
			nd = x.seek(*from, nil)
		default:
			nd = x.head.next[0]
		}
		for ; nd != nil && len(out) < n; nd = nd.next[0] {
			if to != nil && (nd.key > *to || (nd.key == *to && !toInclusive)) {
				break
			}
			out = append(out, nd.key)
		}
		return out
	}
	hi, incl := to, toInclusive
	if after != nil && (hi == nil || *after <= *hi) {
		hi, incl = after, false
	}
	for nd := x.last(hi, incl); nd != nil && len(out) < n; nd = x.last(&nd.key, false) {
		if from != nil && nd.key < *from {
			break
		}
		out = append(out, nd.key)
	}
	return out
}

// last returns the node with the greatest key below bound (at most bound when inclusive; nil
// bound: the greatest key), or nil when there is none.
func (x *keyIndex) last(bound *string, inclusive bool) *indexNode {
	n := x.head
	for i := x.level - 1; i >= 0; i-- {
		for nx := n.next[i]; nx != nil && (bound == nil || nx.key < *bound || (inclusive && nx.key == *bound)); nx = n.next[i] {
			n = nx
		}
	}
	if n == x.head {
		return nil
	}
	return n
}
