//go:build !kstreams_nometrics

package metrics

// recordingOff is false in every normal build. Built with -tags kstreams_nometrics (the
// benchmark's "plain" word count, bench/run.sh), nothing is recorded, so that the cost of
// recording at INFO and DEBUG can be measured against a build that records nothing. The
// checks on it are constant-folded away here.
const recordingOff = false
