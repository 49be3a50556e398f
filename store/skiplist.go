package store

import "bytes"

// skiplist is an ordered map from byte-string keys to byte-string values, ordered by unsigned
// lexicographic byte order (bytes.Compare, as Java's Bytes comparator). It is not safe for
// concurrent use; the in-memory store guards it with a mutex.
type skiplist struct {
	head  *slNode
	level int
	size  int
	rnd   uint64
}

const slMaxLevel = 24

type slNode struct {
	key   []byte
	value []byte
	next  []*slNode
}

func newSkiplist() *skiplist {
	return &skiplist{head: &slNode{next: make([]*slNode, slMaxLevel)}, level: 1, rnd: 0x9E3779B97F4A7C15}
}

// randomLevel draws a level with p = 1/4 from a xorshift generator (deterministic per list).
func (s *skiplist) randomLevel() int {
	lvl := 1
	for lvl < slMaxLevel {
		s.rnd ^= s.rnd << 13
		s.rnd ^= s.rnd >> 7
		s.rnd ^= s.rnd << 17
		if s.rnd&3 != 0 {
			break
		}
		lvl++
	}
	return lvl
}

// findGE returns the first node with key >= k (nil if none) and fills prev (if non-nil) with
// the rightmost node before that position at each level.
func (s *skiplist) findGE(k []byte, prev []*slNode) *slNode {
	x := s.head
	for i := s.level - 1; i >= 0; i-- {
		for x.next[i] != nil && bytes.Compare(x.next[i].key, k) < 0 {
			x = x.next[i]
		}
		if prev != nil {
			prev[i] = x
		}
	}
	return x.next[0]
}

func (s *skiplist) get(k []byte) ([]byte, bool) {
	n := s.findGE(k, nil)
	if n != nil && bytes.Equal(n.key, k) {
		return n.value, true
	}
	return nil, false
}

// put stores a copy-free reference to key and value (callers pass copies).
func (s *skiplist) put(k, v []byte) {
	var prev [slMaxLevel]*slNode
	n := s.findGE(k, prev[:])
	if n != nil && bytes.Equal(n.key, k) {
		n.value = v
		return
	}
	lvl := s.randomLevel()
	if lvl > s.level {
		for i := s.level; i < lvl; i++ {
			prev[i] = s.head
		}
		s.level = lvl
	}
	nn := &slNode{key: k, value: v, next: make([]*slNode, lvl)}
	for i := 0; i < lvl; i++ {
		nn.next[i] = prev[i].next[i]
		prev[i].next[i] = nn
	}
	s.size++
}

// remove deletes k and returns its old value.
func (s *skiplist) remove(k []byte) ([]byte, bool) {
	var prev [slMaxLevel]*slNode
	n := s.findGE(k, prev[:])
	if n == nil || !bytes.Equal(n.key, k) {
		return nil, false
	}
	for i := 0; i < len(n.next); i++ {
		if prev[i].next[i] == n {
			prev[i].next[i] = n.next[i]
		}
	}
	for s.level > 1 && s.head.next[s.level-1] == nil {
		s.level--
	}
	s.size--
	return n.value, true
}

// keysIn returns the keys in [from, to] (nil bound = unbounded; toExclusive makes the upper
// bound exclusive) in ascending order.
func (s *skiplist) keysIn(from, to []byte, toExclusive bool) [][]byte {
	var n *slNode
	if from == nil {
		n = s.head.next[0]
	} else {
		n = s.findGE(from, nil)
	}
	var out [][]byte
	for ; n != nil; n = n.next[0] {
		if to != nil {
			c := bytes.Compare(n.key, to)
			if c > 0 || (c == 0 && toExclusive) {
				break
			}
		}
		out = append(out, n.key)
	}
	return out
}

// keysWithPrefix returns the keys starting with prefix, ascending.
func (s *skiplist) keysWithPrefix(prefix []byte) [][]byte {
	var out [][]byte
	for n := s.findGE(prefix, nil); n != nil && bytes.HasPrefix(n.key, prefix); n = n.next[0] {
		out = append(out, n.key)
	}
	return out
}

// keysPage returns, in the iteration's order, up to n keys of [from, to] (nil bound =
// unbounded; descending when reverse) that lie strictly beyond after (above it ascending,
// below it descending; nil: from the range's start).
func (s *skiplist) keysPage(from, to, after []byte, reverse bool, n int) [][]byte {
	out := make([][]byte, 0, min(n, 64))
	if !reverse {
		var nd *slNode
		switch {
		case after != nil && (from == nil || bytes.Compare(after, from) >= 0):
			if nd = s.findGE(after, nil); nd != nil && bytes.Equal(nd.key, after) {
				nd = nd.next[0]
			}
		case from != nil:
			nd = s.findGE(from, nil)
		default:
			nd = s.head.next[0]
		}
		for ; nd != nil && len(out) < n; nd = nd.next[0] {
			if to != nil && bytes.Compare(nd.key, to) > 0 {
				break
			}
			out = append(out, nd.key)
		}
		return out
	}
	hi, incl := to, true
	if after != nil && (hi == nil || bytes.Compare(after, hi) <= 0) {
		hi, incl = after, false
	}
	for nd := s.last(hi, incl); nd != nil && len(out) < n; nd = s.last(nd.key, false) {
		if from != nil && bytes.Compare(nd.key, from) < 0 {
			break
		}
		out = append(out, nd.key)
	}
	return out
}

// last returns the node with the greatest key below bound (at most bound when inclusive; nil
// bound: the greatest key), or nil when there is none.
func (s *skiplist) last(bound []byte, inclusive bool) *slNode {
	x := s.head
	for i := s.level - 1; i >= 0; i-- {
		for nx := x.next[i]; nx != nil; nx = x.next[i] {
			if bound != nil {
				if c := bytes.Compare(nx.key, bound); c > 0 || (c == 0 && !inclusive) {
					break
				}
			}
			x = nx
		}
	}
	if x == s.head {
		return nil
	}
	return x
}
