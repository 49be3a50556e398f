package store

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Table files gather small writes and show every byte to Stat, ReadAt and after Sync/Close;
// other files are the wrapped file system's own.
func TestBufferedTableFS(t *testing.T) {
	dir := t.TempDir()
	fs := bufferedTableFS{vfs.Default}
	f, err := fs.Create(filepath.Join(dir, "000001.sst"), vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	bf, ok := f.(*bufferedFile)
	if !ok {
		t.Fatalf("table file is a %T", f)
	}
	var want []byte
	block := bytes.Repeat([]byte("0123456789abcdef"), 256) // 4 KiB
	for i := range 100 {
		block[0] = byte(i)
		if _, err := f.Write(block); err != nil {
			t.Fatal(err)
		}
		want = append(want, block...)
	}
	big := bytes.Repeat([]byte{7}, sstWriteBufferBytes+1) // larger than the buffer: written through
	if _, err := f.Write(big); err != nil {
		t.Fatal(err)
	}
	want = append(want, big...)
	if _, err := f.Write(block[:10]); err != nil {
		t.Fatal(err)
	}
	want = append(want, block[:10]...)
	if bf.written >= int64(len(want)) || len(bf.buf) == 0 {
		t.Fatalf("nothing buffered: %d of %d bytes written through", bf.written, len(want))
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(want)) {
		t.Fatalf("Stat size = %v %v, want %d", fi, err, len(want))
	}
	got := make([]byte, 10)
	if _, err := f.ReadAt(got, int64(len(want)-10)); err != nil || !bytes.Equal(got, block[:10]) {
		t.Fatalf("ReadAt tail = %q %v", got, err)
	}
	if _, err := f.Write(block); err != nil {
		t.Fatal(err)
	}
	want = append(want, block...)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := vfs.Default.Open(filepath.Join(dir, "000001.sst"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	all := make([]byte, len(want)+1)
	n, _ := r.ReadAt(all, 0)
	if n != len(want) || !bytes.Equal(all[:n], want) {
		t.Fatalf("file holds %d bytes, want %d (equal prefix: %v)", n, len(want), bytes.Equal(all[:min(n, len(want))], want[:min(n, len(want))]))
	}

	wal, err := fs.Create(filepath.Join(dir, "000002.log"), vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	defer wal.Close()
	if _, ok := wal.(*bufferedFile); ok {
		t.Fatal("write-ahead log is buffered")
	}
}
