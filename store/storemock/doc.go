// Package storemock holds gomock mocks of the store interfaces (KeyValueStore,
// ReadOnlyKeyValueStore, KeyValueIterator, KeyValueBytesStoreSupplier), generated with mockgen
// v0.6.0 (go tool mockgen; see the go:generate line). Regenerate with `go generate ./store/...`.
package storemock

//go:generate go tool mockgen -typed -destination=store_mock.go -package=storemock github.com/kstreams-go/kstreams/store KeyValueStore,ReadOnlyKeyValueStore,KeyValueIterator,KeyValueBytesStoreSupplier
