package store

import (
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// sstWriteBufferBytes is the write buffer of a table file being built. Pebble hands a table
// writer's file one block (about 4 KiB) per Write, and each reaches the operating system as
// one write system call; on the benchmark machine 800 MiB written 4 KiB at a time cost 0.72 s
// of CPU, 256 KiB at a time 0.20 s. Flushes and compactions, most of a restore's CPU, write
// every table this way.
const sstWriteBufferBytes = 256 << 10

// bufferedTableFS wraps the file system of the Pebble stores so that table files (".sst")
// created for writing gather their writes in a [sstWriteBufferBytes] buffer. Every other file
// (write-ahead log, manifest, options) is the wrapped file system's own: a write-ahead log
// write must reach the operating system when Pebble's Write returns, or a process crash could
// lose a committed exactly-once transaction. A table file is only read once Pebble finished
// it (Sync and Close, which flush the buffer), and every method that could observe the file's
// contents or size flushes first.
type bufferedTableFS struct {
	vfs.FS
}

// Create implements vfs.FS.
func (fs bufferedTableFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil || !strings.HasSuffix(name, ".sst") {
		return f, err
	}
	return &bufferedFile{File: f}, nil
}

// bufferedFile buffers sequential writes of one file; not safe for concurrent use (Pebble
// writes a table from one goroutine).
type bufferedFile struct {
	vfs.File
	buf []byte
	// written counts the bytes handed to the wrapped file by Write and flush.
	written int64
}

func (f *bufferedFile) flush() error {
	if len(f.buf) == 0 {
		return nil
	}
	n, err := f.File.Write(f.buf)
	f.written += int64(n)
	f.buf = f.buf[:0]
	return err
}

// Write implements io.Writer: p is copied into the buffer, which is written out when full;
// a write at least as large as the buffer goes straight through after the buffer.
func (f *bufferedFile) Write(p []byte) (int, error) {
	if len(f.buf)+len(p) > sstWriteBufferBytes {
		if err := f.flush(); err != nil {
			return 0, err
		}
	}
	if len(p) >= sstWriteBufferBytes {
		n, err := f.File.Write(p)
		f.written += int64(n)
		return n, err
	}
	if f.buf == nil {
		f.buf = make([]byte, 0, sstWriteBufferBytes)
	}
	f.buf = append(f.buf, p...)
	return len(p), nil
}

// WriteAt implements io.WriterAt (after writing the buffered bytes).
func (f *bufferedFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

// Read implements io.Reader (after writing the buffered bytes).
func (f *bufferedFile) Read(p []byte) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

// ReadAt implements io.ReaderAt (after writing the buffered bytes).
func (f *bufferedFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

// Stat implements vfs.File (after writing the buffered bytes, so the size is right).
func (f *bufferedFile) Stat() (vfs.FileInfo, error) {
	if err := f.flush(); err != nil {
		return nil, err
	}
	return f.File.Stat()
}

// Sync implements vfs.File: the buffered bytes are written, then the file synced.
func (f *bufferedFile) Sync() error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.File.Sync()
}

// SyncData implements vfs.File: the buffered bytes are written, then the data synced.
func (f *bufferedFile) SyncData() error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.File.SyncData()
}

// SyncTo implements vfs.File: the prefix is synced, after writing the buffered bytes when the
// prefix reaches into them (Pebble's periodic syncs stay 1 MiB behind the end, so they rarely
// do). It reports a full sync only when nothing stays buffered.
func (f *bufferedFile) SyncTo(length int64) (bool, error) {
	if length > f.written {
		if err := f.flush(); err != nil {
			return false, err
		}
	}
	full, err := f.File.SyncTo(length)
	return full && len(f.buf) == 0, err
}

// Close implements io.Closer: the buffered bytes are written, then the file closed.
func (f *bufferedFile) Close() error {
	err := f.flush()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	f.buf = nil
	return err
}
