package changelog

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/changelog"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CheckpointFileName is the name of a task's checkpoint file in its state directory,
// <state.dir>/<application.id>/<task>/.kstreams-go.checkpoint, in Java's OffsetCheckpoint
// format. It is deliberately not Java's name: Java Kafka Streams, started on the same state
// directory, reads <task>/.checkpoint (and .checkpoint_<store>) as the offsets of its own
// RocksDB stores, so our offsets there would make it skip the restore of stores it has not
// got; it never reads this file.
const CheckpointFileName = ".kstreams-go.checkpoint"

// JavaCheckpointFileName is the name of Java Kafka Streams' task checkpoint file, where
// versions of this library before the state directory was shared with Java kept theirs.
// Restore reads such a file once as ours (see [TaskState.Restore]) unless Java's stores are in
// the task directory. Java: StateManagerUtil.CHECKPOINT_FILE_NAME.
const JavaCheckpointFileName = ".checkpoint"

// OffsetUnknown is the sentinel offset written for a logged persistent store whose changelog
// offset is not known. Java: OffsetCheckpoint.OFFSET_UNKNOWN.
const OffsetUnknown int64 = -4

// ErrCorruptCheckpoint is returned (wrapped with the file and the reason) when a checkpoint
// file cannot be parsed. Java throws IOException / IllegalArgumentException / NumberFormatException.
var ErrCorruptCheckpoint = errors.New("changelog: corrupt checkpoint file")

// ErrInvalidOffset is returned by WriteCheckpoint for an offset that is negative and not
// OffsetUnknown. Java: IllegalStateException "Attempted to write a negative offset to the checkpoint file".
var ErrInvalidOffset = errors.New("changelog: attempted to write a negative offset to the checkpoint file")

// TopicPartition is the public topic-partition pair ([changelog.TopicPartition]).
type TopicPartition = changelog.TopicPartition

func validOffset(o int64) bool { return o >= 0 || o == OffsetUnknown }

// ReadCheckpoint reads a checkpoint file in Java's OffsetCheckpoint format (version 0):
//
//	0
//	<number of entries>
//	<topic> <partition> <offset>     (one line per entry, fields separated by whitespace)
//
// The offset is the one of the last changelog record the store holds (restore resumes at
// offset+1), or OffsetUnknown. A missing file gives an empty map and no error. Entries with an
// invalid (negative, not OffsetUnknown) offset are skipped and not counted, as Java does.
// Errors: ErrCorruptCheckpoint (wrapped) for an unknown version, malformed line, or an entry
// count that does not match; file system errors.
func ReadCheckpoint(path string) (map[TopicPartition]int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	readInt := func() (int, error) {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return 0, err
			}
			return 0, fmt.Errorf("%w: %s: file ended prematurely", ErrCorruptCheckpoint, path)
		}
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			return 0, fmt.Errorf("%w: %s: %v", ErrCorruptCheckpoint, path, err)
		}
		return n, nil
	}
	version, err := readInt()
	if err != nil {
		return nil, err
	}
	if version != 0 {
		return nil, fmt.Errorf("%w: %s: unknown offset checkpoint version: %d", ErrCorruptCheckpoint, path, version)
	}
	expected, err := readInt()
	if err != nil {
		return nil, err
	}
	out := map[TopicPartition]int64{}
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) != 3 {
			return nil, fmt.Errorf("%w: %s: malformed line in offset checkpoint file: '%s'", ErrCorruptCheckpoint, path, line)
		}
		p, err := strconv.ParseInt(fields[1], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorruptCheckpoint, path, err)
		}
		off, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorruptCheckpoint, path, err)
		}
		if validOffset(off) {
			out[TopicPartition{Topic: fields[0], Partition: int32(p)}] = off
		} else {
			expected--
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) != expected {
		return nil, fmt.Errorf("%w: %s: expected %d entries but found only %d", ErrCorruptCheckpoint, path, expected, len(out))
	}
	return out, nil
}

// WriteCheckpoint writes offsets to path as Java's OffsetCheckpoint.write does: an empty map
// deletes the file; otherwise the content goes to "<path>.tmp", which is synced and then renamed
// over path. Lines end with "\n" (Java's BufferedWriter.newLine on Linux). Entries are written
// sorted by topic and partition (Java writes HashMap order; readers do not depend on order).
// Errors: ErrInvalidOffset, file system errors.
func WriteCheckpoint(path string, offsets map[TopicPartition]int64) error {
	if len(offsets) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	tps := make([]TopicPartition, 0, len(offsets))
	for tp, off := range offsets {
		if !validOffset(off) {
			return fmt.Errorf("%w: offset=%d for %s", ErrInvalidOffset, off, tp)
		}
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	var sb strings.Builder
	sb.WriteString("0\n")
	sb.WriteString(strconv.Itoa(len(tps)))
	sb.WriteByte('\n')
	for _, tp := range tps {
		fmt.Fprintf(&sb, "%s %d %d\n", tp.Topic, tp.Partition, offsets[tp])
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(sb.String()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
