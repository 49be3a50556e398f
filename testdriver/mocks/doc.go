// Package mocks holds gomock mocks of the Processor API interfaces a processor talks to
// (ProcessorContext, FixedKeyProcessorContext, ProcessingContext, StateStoreContext,
// StateStore, Cancellable), generated with mockgen v0.6.0 (go tool mockgen; see the
// generate directive in this file). Regenerate with `go generate ./testdriver/...`.
//
// For most processor unit tests the hand-written testdriver.MockProcessorContext (Java's
// MockProcessorContext) is simpler; these mocks are for strict expectation-based tests.
package mocks

//go:generate go tool mockgen -typed -destination=processor_mock.go -package=mocks github.com/kstreams-go/kstreams/processor ProcessorContext,FixedKeyProcessorContext,ProcessingContext,StateStoreContext,StateStore,Cancellable
