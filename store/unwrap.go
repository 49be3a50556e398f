package store

import ()

// TimestampedBytes marks the timestamped change-logging layer (see [storeapi.TimestampedBytesStore]).
func (c *changeLoggingTimestampedKeyValueBytesStore) TimestampedBytes() {}

// TimestampedBytes marks the timestamped window change-logging layer (see [storeapi.TimestampedBytesStore]).
func (c *changeLoggingTimestampedWindowBytesStore) TimestampedBytes() {}
