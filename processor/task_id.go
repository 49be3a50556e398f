package processor

import (
	"fmt"
	"strconv"
	"strings"
)

// TaskID identifies a task: the sub-topology it runs and the input partition it owns.
// Counterpart of Java's org.apache.kafka.streams.processor.TaskId (without named topologies).
type TaskID struct {
	// Subtopology is the sub-topology number, as in [TopologyDescription]. Java: subtopology().
	Subtopology int
	// Partition is the partition number of the sub-topology's input topics. Java: partition().
	Partition int
}

// String returns "<subtopology>_<partition>", e.g. "0_1", as Java's TaskId.toString.
func (id TaskID) String() string {
	return strconv.Itoa(id.Subtopology) + "_" + strconv.Itoa(id.Partition)
}

// ParseTaskID parses the "<subtopology>_<partition>" form of [TaskID.String]. Errors wrap
// [ErrInvalidTaskID]. Java: TaskId.parse.
func ParseTaskID(s string) (TaskID, error) {
	i := strings.IndexByte(s, '_')
	if i < 0 {
		return TaskID{}, fmt.Errorf("%w: %q has no '_'", ErrInvalidTaskID, s)
	}
	sub, err1 := strconv.Atoi(s[:i])
	part, err2 := strconv.Atoi(s[i+1:])
	if err1 != nil || err2 != nil || sub < 0 || part < 0 {
		return TaskID{}, fmt.Errorf("%w: %q is not <subtopology>_<partition>", ErrInvalidTaskID, s)
	}
	return TaskID{Subtopology: sub, Partition: part}, nil
}

// Compare orders task ids by sub-topology, then partition (Java: TaskId.compareTo); it
// returns -1, 0 or +1.
func (id TaskID) Compare(o TaskID) int {
	switch {
	case id.Subtopology != o.Subtopology:
		if id.Subtopology < o.Subtopology {
			return -1
		}
		return 1
	case id.Partition < o.Partition:
		return -1
	case id.Partition > o.Partition:
		return 1
	}
	return 0
}
