//go:build kstreams_nometrics

package metrics

// recordingOff: this build records no metrics (see recording_on.go); the benchmark's baseline
// for the cost of recording.
const recordingOff = true
