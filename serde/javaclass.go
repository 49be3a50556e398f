package serde

import "errors"

// ErrUnknownClass is wrapped by the error returned for a Java class name in Java properties
// that has no Go counterpart here: a serde class in default.key.serde or default.value.serde,
// a timestamp extractor class in default.timestamp.extractor (kstreams.ConfigFromProperties and
// the test driver's properties).
var ErrUnknownClass = errors.New("unknown Java class")
