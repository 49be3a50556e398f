package processor

// PunctuationType says which clock drives a scheduled [Punctuator]. Counterpart of Java's
// org.apache.kafka.streams.processor.PunctuationType.
type PunctuationType int

const (
	// StreamTime punctuations fire as stream time (the largest record timestamp seen by the
	// task) advances; they never fire while no records arrive, and fire once per elapsed
	// interval boundary even when stream time jumps over several. Java: STREAM_TIME.
	StreamTime PunctuationType = iota
	// WallClockTime punctuations fire as the system (wall-clock) time advances, checked
	// between records. Java: WALL_CLOCK_TIME.
	WallClockTime
)

// String returns Java's enum name: "STREAM_TIME" or "WALL_CLOCK_TIME".
func (t PunctuationType) String() string {
	switch t {
	case StreamTime:
		return "STREAM_TIME"
	case WallClockTime:
		return "WALL_CLOCK_TIME"
	}
	return "PunctuationType(" + itoa(int(t)) + ")"
}

// Punctuator is called by the engine at the scheduled times with timestamp = the stream time
// (for [StreamTime]) or the wall-clock time (for [WallClockTime]) in ms at which it fires. A
// non-nil error is a processing failure, as one from Processor.Process. Counterpart of Java's
// org.apache.kafka.streams.processor.Punctuator.punctuate(long).
type Punctuator func(timestamp int64) error

// Cancellable cancels a scheduled punctuation; Cancel may be called several times and from
// within the punctuator itself. Counterpart of Java's org.apache.kafka.streams.processor.Cancellable.
type Cancellable interface {
	// Cancel stops further punctuations of the schedule. Java: cancel().
	Cancel()
}
