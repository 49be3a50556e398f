package topology

import (
	"slices"
	"unicode/utf16"
)

// This file reproduces the iteration orders of the Java collections the topology description
// goes through (java.util.HashSet/HashMap as of Java 17, and TreeSet), so that Describe prints
// sets in the same order as Java's TopologyDescription.toString().

// javaStringHash is java.lang.String.hashCode: s[0]*31^(n-1) + ... over UTF-16 code units,
// with int32 overflow.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// javaBucket is the HashMap bucket index of key s in a table of capacity c (a power of 2):
// (h ^ (h >>> 16)) & (c - 1).
func javaBucket(s string, c int) int {
	h := uint32(javaStringHash(s))
	return int((h ^ (h >> 16)) & uint32(c-1))
}

// seqCapacity is the table capacity of a default HashSet/HashMap after n insertions: 16,
// doubled whenever the size exceeds 0.75 of the capacity.
func seqCapacity(n int) int {
	c := 16
	for n > c*3/4 {
		c <<= 1
	}
	return c
}

// copyCapacity is the table capacity of new HashSet<>(collection of n elements) in Java 17:
// tableSizeFor(max((int)(n / .75f) + 1, 16)), grown further if n exceeds its threshold.
func copyCapacity(n int) int {
	want := max(int(float32(n)/float32(0.75))+1, 16)
	c := 1
	for c < want {
		c <<= 1
	}
	for n > c*3/4 {
		c <<= 1
	}
	return c
}

// hashOrder returns the iteration order of a Java HashSet of capacity c into which items
// (distinct) were inserted in the given order: by bucket, and within a bucket by insertion
// order (resizes keep the relative order of a bucket's entries).
func hashOrder(items []string, c int) []string {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b string) int { return javaBucket(a, c) - javaBucket(b, c) })
	return out
}

// seqHashOrder is the iteration order of a default HashSet filled with items in order.
func seqHashOrder(items []string) []string { return hashOrder(items, seqCapacity(len(items))) }

// copyHashOrder is the iteration order of new HashSet<>(c) where c iterates as items.
func copyHashOrder(items []string) []string { return hashOrder(items, copyCapacity(len(items))) }

// compareJavaStrings is java.lang.String.compareTo: lexicographic by UTF-16 code unit.
func compareJavaStrings(a, b string) int {
	if isASCII(a) && isASCII(b) {
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// treeSet is java.util.TreeSet (a red-black tree, as java.util.TreeMap) with a comparator
// evaluated at insertion time. Java's description code inserts nodes into TreeSets ordered
// by sub-tree size while those sizes still grow, so the final order depends on the tree's
// shape; reproducing the tree reproduces that order.
type treeSet[T any] struct {
	root *rbEntry[T]
	cmp  func(a, b T) int
	n    int
}

type rbEntry[T any] struct {
	key                 T
	left, right, parent *rbEntry[T]
	black               bool
}

func newTreeSet[T any](cmp func(a, b T) int) *treeSet[T] { return &treeSet[T]{cmp: cmp} }

// add inserts key unless an element compares equal to it (TreeMap.put).
func (t *treeSet[T]) add(key T) {
	if t.root == nil {
		t.root = &rbEntry[T]{key: key, black: true}
		t.n = 1
		return
	}
	p := t.root
	var c int
	for {
		c = t.cmp(key, p.key)
		switch {
		case c < 0:
			if p.left == nil {
				p.left = &rbEntry[T]{key: key, parent: p}
				t.fixAfterInsertion(p.left)
				t.n++
				return
			}
			p = p.left
		case c > 0:
			if p.right == nil {
				p.right = &rbEntry[T]{key: key, parent: p}
				t.fixAfterInsertion(p.right)
				t.n++
				return
			}
			p = p.right
		default:
			return
		}
	}
}

// items returns the elements in order (an in-order walk).
func (t *treeSet[T]) items() []T {
	out := make([]T, 0, t.n)
	var walk func(e *rbEntry[T])
	walk = func(e *rbEntry[T]) {
		if e == nil {
			return
		}
		walk(e.left)
		out = append(out, e.key)
		walk(e.right)
	}
	walk(t.root)
	return out
}

func isBlack[T any](e *rbEntry[T]) bool { return e == nil || e.black }

func parentOf[T any](e *rbEntry[T]) *rbEntry[T] {
	if e == nil {
		return nil
	}
	return e.parent
}

func leftOf[T any](e *rbEntry[T]) *rbEntry[T] {
	if e == nil {
		return nil
	}
	return e.left
}

func rightOf[T any](e *rbEntry[T]) *rbEntry[T] {
	if e == nil {
		return nil
	}
	return e.right
}

func setBlack[T any](e *rbEntry[T], black bool) {
	if e != nil {
		e.black = black
	}
}

func (t *treeSet[T]) rotateLeft(p *rbEntry[T]) {
	if p == nil {
		return
	}
	r := p.right
	p.right = r.left
	if r.left != nil {
		r.left.parent = p
	}
	r.parent = p.parent
	switch {
	case p.parent == nil:
		t.root = r
	case p.parent.left == p:
		p.parent.left = r
	default:
		p.parent.right = r
	}
	r.left = p
	p.parent = r
}

func (t *treeSet[T]) rotateRight(p *rbEntry[T]) {
	if p == nil {
		return
	}
	l := p.left
	p.left = l.right
	if l.right != nil {
		l.right.parent = p
	}
	l.parent = p.parent
	switch {
	case p.parent == nil:
		t.root = l
	case p.parent.right == p:
		p.parent.right = l
	default:
		p.parent.left = l
	}
	l.right = p
	p.parent = l
}

func (t *treeSet[T]) fixAfterInsertion(x *rbEntry[T]) {
	x.black = false
	for x != nil && x != t.root && !x.parent.black {
		if parentOf(x) == leftOf(parentOf(parentOf(x))) {
			y := rightOf(parentOf(parentOf(x)))
			if !isBlack(y) {
				setBlack(parentOf(x), true)
				setBlack(y, true)
				setBlack(parentOf(parentOf(x)), false)
				x = parentOf(parentOf(x))
			} else {
				if x == rightOf(parentOf(x)) {
					x = parentOf(x)
					t.rotateLeft(x)
				}
				setBlack(parentOf(x), true)
				setBlack(parentOf(parentOf(x)), false)
				t.rotateRight(parentOf(parentOf(x)))
			}
		} else {
			y := leftOf(parentOf(parentOf(x)))
			if !isBlack(y) {
				setBlack(parentOf(x), true)
				setBlack(y, true)
				setBlack(parentOf(parentOf(x)), false)
				x = parentOf(parentOf(x))
			} else {
				if x == leftOf(parentOf(x)) {
					x = parentOf(x)
					t.rotateRight(x)
				}
				setBlack(parentOf(x), true)
				setBlack(parentOf(parentOf(x)), false)
				t.rotateLeft(parentOf(parentOf(x)))
			}
		}
	}
	t.root.black = true
}
