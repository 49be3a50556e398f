package assignment

import "encoding/binary"

// Java's assignor breaks some ties by the iteration order of a java.util.HashSet or the array
// order of a java.util.PriorityQueue, so the same inputs give the same assignment whichever
// member (Go or Java) leads the group. These two types reproduce those orders: the algorithms
// are the textbook ones Java documents (a binary heap; a power-of-two hash table that doubles
// when three quarters full), written here from their specifications.

// javaPQ is a binary min-heap with java.util.PriorityQueue's layout: offer sifts up, poll moves
// the last element to the root and sifts down, remove(o) takes out the first element equal to
// o in array order, and iteration is array order. cmp is evaluated live on every comparison,
// as Java's comparator is (weights may change while an element is in the queue).
type javaPQ[T comparable] struct {
	es  []T
	cmp func(a, b T) int
}

// newJavaPQ returns a queue holding items. sorted says the items come from a SortedSet (Java
// then copies them as they are); otherwise they are heapified, as PriorityQueue(Collection)
// does.
func newJavaPQ[T comparable](items []T, cmp func(a, b T) int, sorted bool) *javaPQ[T] {
	q := &javaPQ[T]{es: append([]T(nil), items...), cmp: cmp}
	if !sorted {
		for i := len(q.es)/2 - 1; i >= 0; i-- {
			q.siftDown(i, q.es[i])
		}
	}
	return q
}

func (q *javaPQ[T]) len() int { return len(q.es) }

func (q *javaPQ[T]) offer(x T) {
	q.es = append(q.es, x)
	q.siftUp(len(q.es)-1, x)
}

// poll removes and returns the head; ok is false when the queue is empty.
func (q *javaPQ[T]) poll() (x T, ok bool) {
	if len(q.es) == 0 {
		return x, false
	}
	x = q.es[0]
	n := len(q.es) - 1
	last := q.es[n]
	q.es = q.es[:n]
	if n > 0 {
		q.siftDown(0, last)
	}
	return x, true
}

func (q *javaPQ[T]) indexOf(x T) int {
	for i, e := range q.es {
		if e == x {
			return i
		}
	}
	return -1
}

func (q *javaPQ[T]) contains(x T) bool { return q.indexOf(x) >= 0 }

// remove takes out the first element equal to x (array order) and reports whether there was one.
func (q *javaPQ[T]) remove(x T) bool {
	i := q.indexOf(x)
	if i < 0 {
		return false
	}
	q.removeAt(i)
	return true
}

func (q *javaPQ[T]) removeAt(i int) {
	s := len(q.es) - 1
	if s == i {
		q.es = q.es[:s]
		return
	}
	moved := q.es[s]
	q.es = q.es[:s]
	q.siftDown(i, moved)
	if q.es[i] == moved {
		q.siftUp(i, moved)
	}
}

func (q *javaPQ[T]) siftUp(k int, x T) {
	for k > 0 {
		parent := (k - 1) >> 1
		e := q.es[parent]
		if q.cmp(x, e) >= 0 {
			break
		}
		q.es[k] = e
		k = parent
	}
	q.es[k] = x
}

func (q *javaPQ[T]) siftDown(k int, x T) {
	n := len(q.es)
	half := n >> 1
	for k < half {
		child := 2*k + 1
		c := q.es[child]
		if right := child + 1; right < n && q.cmp(c, q.es[right]) > 0 {
			child = right
			c = q.es[child]
		}
		if q.cmp(x, c) <= 0 {
			break
		}
		q.es[k] = c
		k = child
	}
	q.es[k] = x
}

// items returns the elements in array (iteration) order.
func (q *javaPQ[T]) items() []T { return append([]T(nil), q.es...) }

// javaHashOrder returns the distinct items in the order a java.util.HashSet created with the
// default capacity (16, load factor 0.75) iterates them after they were added in the given
// order; hash is the element's Java hashCode.
func javaHashOrder[T comparable](items []T, hash func(T) int32) []T {
	type entry struct {
		v T
		h uint32
	}
	capacity := 16
	table := make([][]entry, capacity)
	seen := make(map[T]bool, len(items))
	size := 0
	for _, v := range items {
		if seen[v] {
			continue
		}
		seen[v] = true
		h := uint32(hash(v))
		h ^= h >> 16
		i := int(h) & (capacity - 1)
		table[i] = append(table[i], entry{v, h})
		size++
		if size > capacity*3/4 {
			next := make([][]entry, 2*capacity)
			for j, bucket := range table {
				for _, e := range bucket {
					if int(e.h)&capacity == 0 {
						next[j] = append(next[j], e)
					} else {
						next[j+capacity] = append(next[j+capacity], e)
					}
				}
			}
			table, capacity = next, 2*capacity
		}
	}
	out := make([]T, 0, size)
	for _, bucket := range table {
		for _, e := range bucket {
			out = append(out, e.v)
		}
	}
	return out
}

// javaStringHash is Java's String.hashCode over the UTF-16 code units of s.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r > 0xffff {
			r -= 0x10000
			h = 31*h + int32(0xd800+(r>>10))
			h = 31*h + int32(0xdc00+(r&0x3ff))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// hashTask is Java's TaskId.hashCode: Objects.hash(subtopology, partition, topologyName).
func hashTask(t TaskID) int32 {
	h := int32(1)
	h = 31*h + t.Subtopology
	h = 31*h + t.Partition
	var th int32
	if t.Topology != "" {
		th = javaStringHash(t.Topology)
	}
	return 31*h + th
}

// hashUUID is Java's UUID.hashCode (and so ProcessId.hashCode).
func hashUUID(u UUID) int32 {
	hilo := binary.BigEndian.Uint64(u[:8]) ^ binary.BigEndian.Uint64(u[8:])
	return int32(hilo>>32) ^ int32(hilo)
}
