package store

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kstreams-go/kstreams/internal/storeapi"
)

// Defaults of [PebbleOptions].
const (
	// DefaultBlockCacheBytes is the default size of the block cache shared by all Pebble stores
	// of an application instance: 64 MiB.
	DefaultBlockCacheBytes int64 = 64 << 20
	// DefaultMemTableBudgetBytes is the default total memtable budget of an application
	// instance: 64 MiB, divided among the open Pebble stores.
	DefaultMemTableBudgetBytes int64 = 64 << 20
	// DefaultMaxMemTableBytes is the default upper bound of one store's memtable: 16 MiB.
	DefaultMaxMemTableBytes int64 = 16 << 20
	// MinMemTableBytes is the smallest memtable a store is given, whatever the budget: 1 MiB.
	MinMemTableBytes int64 = 1 << 20
)

// ErrInvalidPebbleOptions is returned (wrapped) by [PebbleOptions.Validate], and by the
// application instance's start (kstreams.New) for an invalid Config.Pebble.
var ErrInvalidPebbleOptions = errors.New("store: invalid pebble options")

// PebbleOptions configures the Pebble engine of an application instance. The zero value is
// usable: [PebbleOptions.EnsureDefaults] fills every unset field. There is no single Java
// counterpart: Java gives each RocksDB store its own block cache and write buffers unless a
// rocksdb.config.setter shares them (the "bounded memory" recipe); here sharing is the default.
type PebbleOptions struct {
	// BlockCacheBytes is the size of the one block cache shared by every Pebble store of the
	// instance, in bytes. Default [DefaultBlockCacheBytes]. Must be >= 0 after defaults (0 is
	// replaced by the default).
	BlockCacheBytes int64
	// MemTableBudgetBytes sizes the stores' memtables, in bytes: a store opened while n stores
	// are open (itself included) gets a memtable of budget/n bytes, clamped to
	// [MinMemTableBytes, MaxMemTableBytes], and keeps that size until it closes. It is a sizing
	// rule, not a hard limit (Pebble has no memory manager shared by databases, as RocksDB's
	// WriteBufferManager is): stores opened earlier keep their larger share, so the memtables in
	// use can add up to more than the budget, and a store's memtables (the one being written and
	// those waiting to be flushed) can reach four times its size before its writes wait for a
	// flush.
	// Default [DefaultMemTableBudgetBytes].
	MemTableBudgetBytes int64
	// MaxMemTableBytes caps the memtable of one store, in bytes. Default [DefaultMaxMemTableBytes].
	MaxMemTableBytes int64
	// SyncWrites makes every exactly-once transaction commit and restore batch wait for the
	// write-ahead log to reach the disk (surviving power loss, not only a process crash).
	// Default false. Under at-least-once the stores run without a write-ahead log, as Java's
	// RocksDB stores do, and Flush (before each checkpoint) flushes the memtables instead.
	SyncWrites bool
	// FS is the file system the stores live in; nil means the operating system's. Stores whose
	// task has no state directory always use an in-memory file system.
	FS vfs.FS
	// Logger receives store events (wipes, segment drops); nil means slog.Default().
	Logger *slog.Logger
}

// EnsureDefaults fills unset (zero) fields with their defaults and returns o.
func (o *PebbleOptions) EnsureDefaults() *PebbleOptions {
	if o.BlockCacheBytes == 0 {
		o.BlockCacheBytes = DefaultBlockCacheBytes
	}
	if o.MemTableBudgetBytes == 0 {
		o.MemTableBudgetBytes = DefaultMemTableBudgetBytes
	}
	if o.MaxMemTableBytes == 0 {
		o.MaxMemTableBytes = DefaultMaxMemTableBytes
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports negative sizes or a per-store cap below [MinMemTableBytes], wrapping
// [ErrInvalidPebbleOptions]. Call it after EnsureDefaults.
func (o *PebbleOptions) Validate() error {
	switch {
	case o.BlockCacheBytes < 0:
		return fmt.Errorf("%w: BlockCacheBytes %d < 0", ErrInvalidPebbleOptions, o.BlockCacheBytes)
	case o.MemTableBudgetBytes < 0:
		return fmt.Errorf("%w: MemTableBudgetBytes %d < 0", ErrInvalidPebbleOptions, o.MemTableBudgetBytes)
	case o.MaxMemTableBytes < MinMemTableBytes:
		return fmt.Errorf("%w: MaxMemTableBytes %d < %d", ErrInvalidPebbleOptions, o.MaxMemTableBytes, MinMemTableBytes)
	case o.MaxMemTableBytes > 1<<30:
		return fmt.Errorf("%w: MaxMemTableBytes %d > 1 GiB", ErrInvalidPebbleOptions, o.MaxMemTableBytes)
	}
	return nil
}

// pebbleEnv is the Pebble environment of one application instance (storeapi.PebbleEnv): the
// shared block cache and memtable budget every Pebble store of every task opens with. The
// runtime creates one with storeapi.NewPebbleEnv (newPebbleEnv), hands it to the stores
// through a StateStoreContext with a method PebbleEnv() storeapi.PebbleEnv, and closes it
// after every store is closed. It is safe for concurrent use. Besides the sizes of
// [PebbleOptions], stores open with fixed choices closer to Java's RocksDB stores than
// Pebble's defaults: no block compression, bloom filters of 10 bits per key, writes stopping
// at 36 level-0 files, and level-0 compactions starting at a read amplification of 8
// (favouring write throughput).
type pebbleEnv struct {
	opts   PebbleOptions
	cache  *pebble.Cache
	mu     sync.Mutex
	open   int
	closed bool
}

// pebbleEnvProvider is implemented by a StateStoreContext that hands Pebble stores the
// instance's shared environment (the engine's, in internal/task). Without it, stores use
// defaultPebbleEnv.
type pebbleEnvProvider interface {
	// PebbleEnv returns the environment of the application instance (a *pebbleEnv), or nil.
	PebbleEnv() storeapi.PebbleEnv
}

func init() {
	storeapi.NewPebbleEnv = func(opts any) (storeapi.PebbleEnv, error) {
		env, err := newPebbleEnv(opts.(PebbleOptions))
		if err != nil {
			return nil, err
		}
		return env, nil
	}
}

// newPebbleEnv applies defaults to opts, validates them and creates the shared block cache.
// Errors: [ErrInvalidPebbleOptions].
func newPebbleEnv(opts PebbleOptions) (*pebbleEnv, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	c := pebble.NewCache(opts.BlockCacheBytes)
	return &pebbleEnv{opts: opts, cache: c}, nil
}

var (
	defaultEnvOnce sync.Once
	defaultEnv     *pebbleEnv
)

// defaultPebbleEnv returns the process-wide environment with default options, used by stores
// whose context does not provide one. It is never closed.
func defaultPebbleEnv() *pebbleEnv {
	defaultEnvOnce.Do(func() {
		defaultEnv, _ = newPebbleEnv(PebbleOptions{})
	})
	return defaultEnv
}

// Options returns the effective options (defaults applied).
func (e *pebbleEnv) Options() PebbleOptions { return e.opts }

// openStores returns the number of Pebble databases currently open in this environment.
func (e *pebbleEnv) openStores() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.open
}

// Close releases the environment's reference to the block cache; databases still open keep
// theirs until they close. Stores must not be opened in a closed environment.
func (e *pebbleEnv) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.cache.Unref()
		e.closed = true
	}
	return nil
}

// RawOptions returns the Pebble options a store opened now would get (the shared block cache,
// its share of the memtable budget, the file system) without counting a store as open. It is
// for benchmarks and tools that open a raw Pebble database to compare with the stores.
// The write-ahead log is disabled, as in an at-least-once store.
func (e *pebbleEnv) RawOptions() *pebble.Options {
	e.mu.Lock()
	n := int64(e.open) + 1
	e.mu.Unlock()
	o := e.optionsFor(e.opts.FS, n)
	o.DisableWAL = true
	return o
}

// pebbleOptions returns the Pebble options of one more database in fs and counts it as open.
func (e *pebbleEnv) pebbleOptions(fs vfs.FS) *pebble.Options {
	e.mu.Lock()
	e.open++
	n := int64(e.open)
	e.mu.Unlock()
	return e.optionsFor(fs, n)
}

func (e *pebbleEnv) optionsFor(fs vfs.FS, n int64) *pebble.Options {
	mem := e.opts.MemTableBudgetBytes / n
	mem = max(MinMemTableBytes, min(mem, e.opts.MaxMemTableBytes))
	if _, inMem := fs.(*vfs.MemFS); !inMem {
		fs = bufferedTableFS{fs} // table files are written in 256 KiB writes, not 4 KiB ones
	}
	o := &pebble.Options{
		Cache:                       e.cache,
		MemTableSize:                uint64(mem),
		MemTableStopWritesThreshold: 4,
		FS:                          fs,
		Logger:                      quietPebbleLogger{},
	}
	// As Java's RocksDB stores: no block compression (Kafka Streams' RocksDBStore sets
	// NO_COMPRESSION), and writes stop at 36 level-0 files (RocksDB's
	// level0_stop_writes_trigger default; Pebble's own default is 12). Both cut the CPU that
	// flushes and compactions take while a store is written fast, as during restore: about
	// 10-15% of the restore CPU in bench's BenchmarkRestore (2 million records).
	// Level-0 compactions start at a read amplification of 8 instead of Pebble's 4: fewer,
	// larger compactions, trading some read amplification for write amplification as Kafka
	// Streams' universal-compaction RocksDB stores do; the restore of 5 million records with
	// overwrites took 5.6 CPU s instead of 7.6 (BenchmarkRestore, load ~15).
	o.L0StopWritesThreshold = 36
	o.L0CompactionThreshold = 8
	for i := range o.Levels {
		o.Levels[i].Compression = noCompression
		// As RocksDBStore's BloomFilter (10 bits per key): a point read skips every table file
		// that does not hold its key without reading its blocks.
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	o.EnsureDefaults()
	return o
}

func noCompression() *sstable.CompressionProfile { return sstable.NoCompression }

func (e *pebbleEnv) release() {
	e.mu.Lock()
	e.open--
	e.mu.Unlock()
}

// quietPebbleLogger drops Pebble's informational output, reports its errors (for example a
// background flush that keeps failing because the state directory is gone) through the default
// slog logger, and keeps fatal errors as panics, which pebble requires of a Logger.
type quietPebbleLogger struct{}

func (quietPebbleLogger) Infof(string, ...any) {}
func (quietPebbleLogger) Errorf(format string, args ...any) {
	slog.Error("pebble: " + fmt.Sprintf(format, args...))
}
func (quietPebbleLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}
