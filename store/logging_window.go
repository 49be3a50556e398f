package store

import (
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// changeLoggingWindowBytesStore writes every put of the window store below it to the store's
// changelog: key = key ‖ int64 windowStart ‖ int32 seqnum (the window store key), value = the
// raw value (nil: tombstone), timestamp = the timestamp of the record being processed. With
// retainDuplicates the seqnum advances on every put, as Java's layer does (also for a null
// value, which the engine ignores). Java counterpart: changeLoggingWindowBytesStore.
type changeLoggingWindowBytesStore struct {
	WindowBytesStore
	retainDuplicates bool
	seqnum           int32
	logger           changelogContext
}

// newChangeLoggingWindowBytesStore wraps inner with change logging.
func newChangeLoggingWindowBytesStore(inner WindowBytesStore, retainDuplicates bool) *changeLoggingWindowBytesStore {
	return &changeLoggingWindowBytesStore{WindowBytesStore: inner, retainDuplicates: retainDuplicates}
}

// Inner returns the wrapped store.
func (c *changeLoggingWindowBytesStore) Inner() WindowBytesStore { return c.WindowBytesStore }

// Init initialises the inner store and picks up the context's changelog writer, if any.
func (c *changeLoggingWindowBytesStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if l, ok := ctx.(changelogContext); ok {
		c.logger = l
	}
	return c.WindowBytesStore.Init(ctx, root)
}

// Put writes to the inner store, then logs the change.
func (c *changeLoggingWindowBytesStore) Put(key, value []byte, windowStart int64) error {
	if err := c.WindowBytesStore.Put(key, value, windowStart); err != nil {
		return err
	}
	if c.retainDuplicates {
		c.seqnum = (c.seqnum + 1) & math.MaxInt32
	}
	if c.logger == nil {
		return nil
	}
	return storeErr(c.Name(), "log change", c.logger.LogChange(c.Name(), storeapi.WindowStoreKey(key, windowStart, c.seqnum), value, c.logger.RecordTimestamp()))
}

// changeLoggingSessionBytesStore writes every put and remove of the session store below it to
// the store's changelog: key = key ‖ int64 end ‖ int64 start, value = the raw aggregate (nil:
// tombstone), timestamp = the timestamp of the record being processed.
// Java counterpart: changeLoggingSessionBytesStore.
type changeLoggingSessionBytesStore struct {
	SessionBytesStore
	logger changelogContext
}

// newChangeLoggingSessionBytesStore wraps inner with change logging.
func newChangeLoggingSessionBytesStore(inner SessionBytesStore) *changeLoggingSessionBytesStore {
	return &changeLoggingSessionBytesStore{SessionBytesStore: inner}
}

// Inner returns the wrapped store.
func (c *changeLoggingSessionBytesStore) Inner() SessionBytesStore { return c.SessionBytesStore }

// Init initialises the inner store and picks up the context's changelog writer, if any.
func (c *changeLoggingSessionBytesStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if l, ok := ctx.(changelogContext); ok {
		c.logger = l
	}
	return c.SessionBytesStore.Init(ctx, root)
}

func (c *changeLoggingSessionBytesStore) log(s serde.Windowed[[]byte], value []byte) error {
	if c.logger == nil {
		return nil
	}
	return storeErr(c.Name(), "log change", c.logger.LogChange(c.Name(), storeapi.SessionStoreKey(s.Key, s.Window.Start, s.Window.End), value, c.logger.RecordTimestamp()))
}

// Put writes to the inner store, then logs the change.
func (c *changeLoggingSessionBytesStore) Put(session serde.Windowed[[]byte], value []byte) error {
	if err := c.SessionBytesStore.Put(session, value); err != nil {
		return err
	}
	return c.log(session, value)
}

// Remove deletes the session below, then logs a tombstone.
func (c *changeLoggingSessionBytesStore) Remove(session serde.Windowed[[]byte]) error {
	if err := c.SessionBytesStore.Remove(session); err != nil {
		return err
	}
	return c.log(session, nil)
}
