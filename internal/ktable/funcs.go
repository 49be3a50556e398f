package ktable

// Untyped user-function shapes the table processors call; package kstream adapts the typed
// functions users pass (casting nil to the zero value of non-nillable types and turning
// results back into untyped values, nil for null). Errors returned abort processing of the
// record (the engine's processing exception handler decides what happens next).

// Predicate tests a key and a (non-null) value. Java: Predicate.
type Predicate func(key, value any) (bool, error)

// ValueMapper maps a key and a (non-null) value to a new value (nil for null). Java:
// ValueMapperWithKey.
type ValueMapper func(key, value any) (any, error)

// KeyValueMapper maps a key and a (non-null) value to a new key and value. Java:
// KeyValueMapper returning a KeyValue.
type KeyValueMapper func(key, value any) (newKey, newValue any, err error)

// Initializer returns the initial aggregate. Java: Initializer.
type Initializer func() (any, error)

// Aggregator folds a (non-null) value into an aggregate. Java: Aggregator.
type Aggregator func(key, value, aggregate any) (any, error)

// Reducer combines the aggregate and a (non-null) value. Java: Reducer.
type Reducer func(aggregate, value any) (any, error)
