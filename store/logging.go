package store

import (
	"github.com/kstreams-go/kstreams/processor"
)

// changelogContext is implemented by the StateStoreContext of an engine that can write
// changelog records (the task engine in internal/task, used by the test driver and the
// runtime). A change-logging store layer looks for it at Init; with a context that does not
// implement it, changes are not logged.
// Java counterpart: InternalProcessorContext.logChange and recordContext().timestamp().
type changelogContext interface {
	// LogChange sends one changelog record for storeName: key and value bytes (nil value is a
	// tombstone) with timestamp in ms, to the store's changelog topic and the task's partition.
	LogChange(storeName string, key, value []byte, timestamp int64) error
	// RecordTimestamp returns the timestamp (ms) of the record being processed, or the
	// punctuation time while a punctuator runs.
	RecordTimestamp() int64
}

// changeLoggingKeyValueBytesStore writes every change of the store below it to the store's
// changelog topic, after applying it: Put and Delete log (key, value-or-nil); PutIfAbsent logs
// only when it wrote; PutAll logs each entry. The record timestamp is the one of the record
// being processed. Java counterpart: org.apache.kafka.streams.state.internals.changeLoggingKeyValueBytesStore.
type changeLoggingKeyValueBytesStore struct {
	KeyValueBytesStore
	logger changelogContext
}

// newChangeLoggingKeyValueBytesStore wraps inner with change logging.
func newChangeLoggingKeyValueBytesStore(inner KeyValueBytesStore) *changeLoggingKeyValueBytesStore {
	return &changeLoggingKeyValueBytesStore{KeyValueBytesStore: inner}
}

// Inner returns the wrapped store.
func (c *changeLoggingKeyValueBytesStore) Inner() KeyValueBytesStore { return c.KeyValueBytesStore }

// Init initialises the inner store and picks up the context's changelog writer, if any.
func (c *changeLoggingKeyValueBytesStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if l, ok := ctx.(changelogContext); ok {
		c.logger = l
	}
	if err := c.KeyValueBytesStore.Init(ctx, root); err != nil {
		return err
	}
	// An LRU engine logs a tombstone for every evicted key (Java: maybeSetEvictionListener).
	if lru, ok := c.KeyValueBytesStore.(interface {
		SetEvictionListener(func(key, value []byte) error)
	}); ok && c.logger != nil {
		lru.SetEvictionListener(func(key, _ []byte) error { return c.log(key, nil) })
	}
	return nil
}

func (c *changeLoggingKeyValueBytesStore) log(key, value []byte) error {
	if c.logger == nil {
		return nil
	}
	return storeErr(c.Name(), "log change", c.logger.LogChange(c.Name(), key, value, c.logger.RecordTimestamp()))
}

// Put writes to the inner store, then logs the change.
func (c *changeLoggingKeyValueBytesStore) Put(key, value []byte) error {
	if err := c.KeyValueBytesStore.Put(key, value); err != nil {
		return err
	}
	return c.log(key, value)
}

// PutIfAbsent writes when absent and logs only what was written.
func (c *changeLoggingKeyValueBytesStore) PutIfAbsent(key, value []byte) ([]byte, bool, error) {
	old, found, err := c.KeyValueBytesStore.PutIfAbsent(key, value)
	if err != nil {
		return nil, false, err
	}
	if !found {
		if err := c.log(key, value); err != nil {
			return nil, false, err
		}
	}
	return old, found, nil
}

// PutAll writes all entries, then logs each.
func (c *changeLoggingKeyValueBytesStore) PutAll(entries []KeyValue[[]byte, []byte]) error {
	if err := c.KeyValueBytesStore.PutAll(entries); err != nil {
		return err
	}
	for _, e := range entries {
		if err := c.log(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes key and logs a tombstone.
func (c *changeLoggingKeyValueBytesStore) Delete(key []byte) ([]byte, bool, error) {
	old, found, err := c.KeyValueBytesStore.Delete(key)
	if err != nil {
		return nil, false, err
	}
	if err := c.log(key, nil); err != nil {
		return nil, false, err
	}
	return old, found, nil
}
