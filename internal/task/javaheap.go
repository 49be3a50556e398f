package task

// javaHeap is a binary min-heap with exactly the sift rules of java.util.PriorityQueue, so
// that elements comparing equal come out in the same order as in Java (Kafka Streams keeps
// its partition queues and punctuation schedules in PriorityQueues ordered by timestamp only).
type javaHeap[T any] struct {
	q   []T
	cmp func(a, b T) int
}

func (h *javaHeap[T]) len() int { return len(h.q) }

// offer adds x (PriorityQueue.offer / siftUpUsingComparator).
func (h *javaHeap[T]) offer(x T) {
	k := len(h.q)
	h.q = append(h.q, x)
	for k > 0 {
		parent := (k - 1) >> 1
		e := h.q[parent]
		if h.cmp(x, e) >= 0 {
			break
		}
		h.q[k] = e
		k = parent
	}
	h.q[k] = x
}

// peek returns the head without removing it.
func (h *javaHeap[T]) peek() (T, bool) {
	var zero T
	if len(h.q) == 0 {
		return zero, false
	}
	return h.q[0], true
}

// poll removes and returns the head (PriorityQueue.poll / siftDownUsingComparator).
func (h *javaHeap[T]) poll() (T, bool) {
	var zero T
	if len(h.q) == 0 {
		return zero, false
	}
	result := h.q[0]
	n := len(h.q) - 1
	x := h.q[n]
	h.q[n] = zero
	h.q = h.q[:n]
	if n > 0 {
		k := 0
		half := n >> 1
		for k < half {
			child := 2*k + 1
			c := h.q[child]
			if right := child + 1; right < n && h.cmp(c, h.q[right]) > 0 {
				child = right
				c = h.q[child]
			}
			if h.cmp(x, c) <= 0 {
				break
			}
			h.q[k] = c
			k = child
		}
		h.q[k] = x
	}
	return result, true
}

func (h *javaHeap[T]) clear() { h.q = nil }

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
