package changelog

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckpointWriteFormat(t *testing.T) {
	p := filepath.Join(t.TempDir(), CheckpointFileName)
	err := WriteCheckpoint(p, map[TopicPartition]int64{
		{Topic: "app-store-changelog", Partition: 1}: 42,
		{Topic: "app-a-changelog", Partition: 1}:     OffsetUnknown,
		{Topic: "app-store-changelog", Partition: 0}: 0,
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	want := "0\n3\napp-a-changelog 1 -4\napp-store-changelog 0 0\napp-store-changelog 1 42\n"
	if string(got) != want {
		t.Fatalf("file = %q, want %q", got, want)
	}
	if _, err := os.Stat(p + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temp file left behind: %v", err)
	}
	back, err := ReadCheckpoint(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 3 || back[TopicPartition{Topic: "app-store-changelog", Partition: 1}] != 42 || back[TopicPartition{Topic: "app-a-changelog", Partition: 1}] != OffsetUnknown {
		t.Fatalf("read back %v", back)
	}
	// An empty map deletes the file, as Java's OffsetCheckpoint.write.
	if err := WriteCheckpoint(p, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file not deleted: %v", err)
	}
	if err := WriteCheckpoint(p, map[TopicPartition]int64{{Topic: "t", Partition: 0}: -1}); !errors.Is(err, ErrInvalidOffset) {
		t.Fatalf("negative offset: err = %v", err)
	}
}

func TestCheckpointRead(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) string {
		p := filepath.Join(dir, "cp")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Missing file: empty, no error.
	m, err := ReadCheckpoint(filepath.Join(dir, "missing"))
	if err != nil || len(m) != 0 {
		t.Fatalf("missing file: %v %v", m, err)
	}
	// Java splits on runs of whitespace and skips invalid (negative, not -4) offsets,
	// decrementing the expected count.
	m, err = ReadCheckpoint(write("0\n3\ntopic-a  0\t17\ntopic-b 2 -1\ntopic-c 1 -4\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[TopicPartition]int64{{Topic: "topic-a", Partition: 0}: 17, {Topic: "topic-c", Partition: 1}: -4}
	if !maps.Equal(m, want) {
		t.Fatalf("read %v, want %v", m, want)
	}
	for name, content := range map[string]string{
		"unknown version": "1\n0\n",
		"count mismatch":  "0\n2\nt 0 1\n",
		"malformed line":  "0\n1\nt 0\n",
		"bad number":      "0\n1\nt x 1\n",
		"truncated":       "0\n",
		"empty":           "",
	} {
		if _, err := ReadCheckpoint(write(content)); !errors.Is(err, ErrCorruptCheckpoint) {
			t.Errorf("%s: err = %v, want ErrCorruptCheckpoint", name, err)
		}
	}
}
