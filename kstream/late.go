package kstream

import "github.com/kstreams-go/kstreams/internal/ktable"

// Header names a windowed aggregation adds to each record it sends to its late-record topic
// (TimeWindowedKStream.LateRecordsTo and its sliding and session forms). Values are UTF-8 text.
// No Java counterpart: Java only counts and logs the records it drops.
const (
	// LateHeaderWindow names the window that rejected the record: "[start,end)" for time
	// windows, "[start,end]" for sliding and session windows (ms).
	LateHeaderWindow = ktable.LateHeaderWindow
	// LateHeaderReason says why: "window closed" with the rule that applied.
	LateHeaderReason = ktable.LateHeaderReason
	// LateHeaderStreamTime is the stream time (ms, decimal) the aggregation had observed.
	LateHeaderStreamTime = ktable.LateHeaderStreamTime
	// LateHeaderCloseTime is the window's close time (ms, decimal): the stream time from which
	// the window takes no more records (window end + grace for time windows, whose end is
	// exclusive; one more for sliding and session windows, whose ends are inclusive).
	LateHeaderCloseTime = ktable.LateHeaderCloseTime
	// LateHeaderProcessor names the aggregation processor.
	LateHeaderProcessor = ktable.LateHeaderProcessor
)
