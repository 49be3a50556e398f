package storeapi

import "github.com/cockroachdb/pebble/v2"

// PebbleEnv is the Pebble environment of one application instance: the block cache and the
// memtable budget every Pebble store of every task opens with. The runtime makes one from
// the user's Config.Pebble (store.PebbleOptions) with NewPebbleEnv, hands it to the stores
// through the StateStoreContext's PebbleEnv method (internal/task's store context; package
// store looks for that method) and closes it after every store is closed. Users never hold
// one. There is no single Java counterpart: Java's RocksDB stores share a cache only through
// a rocksdb.config.setter.
type PebbleEnv interface {
	// Close releases the environment's reference to the block cache; databases still open
	// keep theirs until they close. Stores must not be opened in a closed environment.
	Close() error
	// RawOptions returns the Pebble options a store opened now would get (the shared block
	// cache, its share of the memtable budget, the file system), with the write-ahead log
	// disabled as in an at-least-once store, without counting a store as open: for benchmarks
	// that open a raw Pebble database to compare with the stores.
	RawOptions() *pebble.Options
}

// NewPebbleEnv applies defaults to opts, which must be a store.PebbleOptions (this package
// cannot import store), validates them and creates the shared block cache. Errors wrap
// store.ErrInvalidPebbleOptions. Package store sets it in its init.
var NewPebbleEnv func(opts any) (PebbleEnv, error)
