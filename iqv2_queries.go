package kstreams

import (
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math"
	"reflect"
	"strings"

	"github.com/kstreams-go/kstreams/internal/storeview"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// The queries of StateQuery (IQv2, KIP-796 and its follow-ups). Each is a value type; the
// constructors and With methods mirror Java's factory methods and return new values.

// ErrInvalidQuery is returned by StateQuery for a query that cannot be asked as built (a
// MultiVersionedKeyQuery whose FromTime is after its ToTime). Java: IllegalArgumentException.
var ErrInvalidQuery = errors.New("kstreams: invalid query")

// ResultOrder is the order a range or multi-version query returns its results in. Java:
// org.apache.kafka.streams.query.ResultOrder (KIP-805, KIP-968, KIP-985).
type ResultOrder int

const (
	// ResultOrderAny leaves the order to the store (the zero value). Our key-value stores
	// give ascending keys, as ResultOrderAscending; a versioned store gives descending
	// timestamps, as Java's.
	ResultOrderAny ResultOrder = iota
	// ResultOrderAscending asks for ascending serialized keys (range queries) or timestamps
	// (MultiVersionedKeyQuery).
	ResultOrderAscending
	// ResultOrderDescending asks for descending serialized keys or timestamps.
	ResultOrderDescending
)

// String returns Java's name of the order: ANY, ASCENDING, DESCENDING.
func (o ResultOrder) String() string {
	switch o {
	case ResultOrderAny:
		return "ANY"
	case ResultOrderAscending:
		return "ASCENDING"
	case ResultOrderDescending:
		return "DESCENDING"
	}
	return fmt.Sprintf("ResultOrder(%d)", int(o))
}

// queryStoreKind names the kind of a task's store: the DSL's untyped stores by their
// interface, Processor API stores by their methods; "" for a custom store of no known kind.
func queryStoreKind(s processor.StateStore) storeview.Kind {
	if k := storeview.KindOf(s); k != "" {
		return k
	}
	k, _, _ := storeview.Inspect(s)
	return k
}

// queryName is the query's type for messages, e.g. "TimestampedKeyQuery[string,int64]".
func queryName(q any) string {
	return strings.TrimPrefix(reflect.TypeOf(q).String(), "kstreams.")
}

// kvAccepts is how the stores answer KeyQuery and RangeQuery (Java: StoreQueryUtils answers
// them for key-value stores and refuses other stores with UNKNOWN_QUERY_TYPE once the bound
// is met; MeteredVersionedKeyValueStore throws UnsupportedOperationException).
func kvAccepts(k storeview.Kind, query string) (acceptance, error) {
	switch k {
	case storeview.KeyValue, storeview.TimestampedKeyValue, "":
		return queryRuns, nil
	case storeview.Versioned:
		return 0, fmt.Errorf("%w: versioned stores do not answer %s (use VersionedKeyQuery or MultiVersionedKeyQuery)", errors.ErrUnsupported, query)
	}
	return queryUnknown, nil
}

// timestampedAccepts is how the stores answer TimestampedKeyQuery and TimestampedRangeQuery:
// only timestamped key-value stores know them (Java: MeteredTimestampedKeyValueStore; no
// other layer has a handler, so the rest answer UNKNOWN_QUERY_TYPE whatever the bound).
func timestampedAccepts(k storeview.Kind) (acceptance, error) {
	switch k {
	case storeview.TimestampedKeyValue, "":
		return queryRuns, nil
	}
	return queryUnknownAnyBound, nil
}

// onlyAccepts is how the stores answer a query only stores of the given kinds know (Java:
// StoreQueryUtils refuses the others with UNKNOWN_QUERY_TYPE once the bound is met).
func onlyAccepts(k storeview.Kind, kinds ...storeview.Kind) acceptance {
	if k == "" {
		return queryRuns
	}
	for _, want := range kinds {
		if k == want {
			return queryRuns
		}
	}
	return queryUnknown
}

// rangeIter is the iterator of a range query over the view s with the given bounds (nil:
// open) and order.
func rangeIter[K, V any](s store.ReadOnlyKeyValueStore[K, V], lower, upper *K, order ResultOrder) store.KeyValueIterator[K, V] {
	reverse := order == ResultOrderDescending
	if lower == nil && upper == nil {
		if reverse {
			return s.ReverseAll()
		}
		return s.All()
	}
	var from, to K
	if lower != nil {
		from = *lower
	}
	if upper != nil {
		to = *upper
	}
	// A store that cannot scan (a custom one) is asked through Range, where only a nil key of
	// a nillable type leaves a side open.
	plain := func(kv store.ReadOnlyKeyValueStore[K, V]) store.KeyValueIterator[K, V] {
		if (lower == nil || upper == nil) && !nillableType[K]() {
			return store.ErrorIterator[K, V](fmt.Errorf("%w: the store (%T) cannot run a one-sided range of %s keys", errors.ErrUnsupported, kv, reflect.TypeFor[K]()))
		}
		if reverse {
			return kv.ReverseRange(from, to)
		}
		return kv.Range(from, to)
	}
	c, ok := s.(*compositeKV[K, V])
	if !ok {
		return plain(s)
	}
	return c.concat(storeapi.Scan[K]{Kind: storeapi.ScanRange, From: from, To: to, NoFrom: lower == nil, NoTo: upper == nil, Reverse: reverse}, plain)
}

func nillableType[T any]() bool {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return true
	}
	return false
}

// KeyQuery looks a key up in a key-value store; the result is the value, nil when the key has
// none. A timestamped store (the DSL's tables and aggregations) answers with the plain value
// (TimestampedKeyQuery gives the timestamp too). Window and session stores answer
// FailureUnknownQueryType; a versioned store makes StateQuery fail with errors.ErrUnsupported
// (use VersionedKeyQuery). Java: KeyQuery.withKey(key) (KIP-796).
type KeyQuery[K, V any] struct{ Key K }

func (q KeyQuery[K, V]) accepts(k storeview.Kind) (acceptance, error) {
	return kvAccepts(k, "KeyQuery")
}

func (q KeyQuery[K, V]) run(k *KafkaStreams, name string, opts []StoreQueryOption) (*V, error) {
	s, err := KeyValueStore[K, V](k, name, opts...)
	if err != nil {
		return nil, err
	}
	v, ok, err := s.Get(q.Key)
	if err != nil || !ok {
		return nil, err
	}
	return &v, nil
}

// RangeQuery scans a key-value store: the keys from Lower to Upper, both inclusive, a nil
// bound leaving its side open (both nil: every key), in Order of the serialized keys (not the
// keys' own order; ResultOrderAny is ascending here); the result is an iterator the caller
// closes. A bound of a nillable key type that is itself nil (a *K pointing to a nil key) is
// open too, as Java's null bounds. Lower above Upper gives no entries. Timestamped stores give
// plain values (TimestampedRangeQuery gives the timestamps too); window and session stores
// answer FailureUnknownQueryType; a versioned store makes StateQuery fail with
// errors.ErrUnsupported. The zero value scans every key. Java: RangeQuery (KIP-796;
// withDescendingKeys, KIP-805; withAscendingKeys, KIP-985).
type RangeQuery[K, V any] struct {
	// Lower and Upper are the inclusive bounds; nil leaves a side open.
	Lower, Upper *K
	// Order is the order of the serialized keys.
	Order ResultOrder
}

// RangeQueryWithRange scans the keys from lower to upper, both inclusive. Java:
// RangeQuery.withRange(lower, upper).
func RangeQueryWithRange[K, V any](lower, upper K) RangeQuery[K, V] {
	return RangeQuery[K, V]{Lower: &lower, Upper: &upper}
}

// RangeQueryWithLowerBound scans the keys from lower (inclusive) up. Java:
// RangeQuery.withLowerBound(lower).
func RangeQueryWithLowerBound[K, V any](lower K) RangeQuery[K, V] {
	return RangeQuery[K, V]{Lower: &lower}
}

// RangeQueryWithUpperBound scans the keys up to upper (inclusive). Java:
// RangeQuery.withUpperBound(upper).
func RangeQueryWithUpperBound[K, V any](upper K) RangeQuery[K, V] {
	return RangeQuery[K, V]{Upper: &upper}
}

// RangeQueryWithNoBounds scans every key (the zero RangeQuery). Java: RangeQuery.withNoBounds().
func RangeQueryWithNoBounds[K, V any]() RangeQuery[K, V] { return RangeQuery[K, V]{} }

// WithDescendingKeys returns q asking for descending serialized keys. Java:
// withDescendingKeys() (KIP-805).
func (q RangeQuery[K, V]) WithDescendingKeys() RangeQuery[K, V] {
	q.Order = ResultOrderDescending
	return q
}

// WithAscendingKeys returns q asking for ascending serialized keys. Java: withAscendingKeys()
// (KIP-985).
func (q RangeQuery[K, V]) WithAscendingKeys() RangeQuery[K, V] {
	q.Order = ResultOrderAscending
	return q
}

func (q RangeQuery[K, V]) accepts(k storeview.Kind) (acceptance, error) {
	return kvAccepts(k, "RangeQuery")
}

func (q RangeQuery[K, V]) run(k *KafkaStreams, name string, opts []StoreQueryOption) (store.KeyValueIterator[K, V], error) {
	s, err := KeyValueStore[K, V](k, name, opts...)
	if err != nil {
		return nil, err
	}
	return rangeIter(s, q.Lower, q.Upper, q.Order), nil
}

// TimestampedKeyQuery looks a key up in a timestamped key-value store (the DSL's tables and
// aggregations, or a Processor API store built by store.Stores.TimestampedKeyValueStoreBuilder); the
// result is the value and the timestamp (ms) of the record that last updated it, nil when the
// key has none. Other stores (plain key-value, versioned, window, session) answer
// FailureUnknownQueryType. Java: TimestampedKeyQuery.withKey(key) (KIP-992).
type TimestampedKeyQuery[K, V any] struct{ Key K }

func (q TimestampedKeyQuery[K, V]) accepts(k storeview.Kind) (acceptance, error) {
	return timestampedAccepts(k)
}

func (q TimestampedKeyQuery[K, V]) run(k *KafkaStreams, name string, opts []StoreQueryOption) (*store.ValueAndTimestamp[V], error) {
	s, err := TimestampedKeyValueStore[K, V](k, name, opts...)
	if err != nil {
		return nil, err
	}
	v, ok, err := s.Get(q.Key)
	if err != nil || !ok {
		return nil, err
	}
	return v, nil
}

// TimestampedRangeQuery is RangeQuery of a timestamped key-value store whose results carry
// the timestamps: an iterator of key -> value and timestamp (ms), the caller closes it. Other
// stores answer FailureUnknownQueryType. The zero value scans every key. Java:
// TimestampedRangeQuery (KIP-992).
type TimestampedRangeQuery[K, V any] struct {
	// Lower and Upper are the inclusive bounds; nil leaves a side open.
	Lower, Upper *K
	// Order is the order of the serialized keys.
	Order ResultOrder
}

// TimestampedRangeQueryWithRange scans the keys from lower to upper, both inclusive. Java:
// TimestampedRangeQuery.withRange(lower, upper).
func TimestampedRangeQueryWithRange[K, V any](lower, upper K) TimestampedRangeQuery[K, V] {
	return TimestampedRangeQuery[K, V]{Lower: &lower, Upper: &upper}
}

// TimestampedRangeQueryWithLowerBound scans the keys from lower (inclusive) up. Java:
// TimestampedRangeQuery.withLowerBound(lower).
func TimestampedRangeQueryWithLowerBound[K, V any](lower K) TimestampedRangeQuery[K, V] {
	return TimestampedRangeQuery[K, V]{Lower: &lower}
}

// TimestampedRangeQueryWithUpperBound scans the keys up to upper (inclusive). Java:
// TimestampedRangeQuery.withUpperBound(upper).
func TimestampedRangeQueryWithUpperBound[K, V any](upper K) TimestampedRangeQuery[K, V] {
	return TimestampedRangeQuery[K, V]{Upper: &upper}
}

// TimestampedRangeQueryWithNoBounds scans every key. Java: TimestampedRangeQuery.withNoBounds().
func TimestampedRangeQueryWithNoBounds[K, V any]() TimestampedRangeQuery[K, V] {
	return TimestampedRangeQuery[K, V]{}
}

// WithDescendingKeys returns q asking for descending serialized keys. Java: withDescendingKeys().
func (q TimestampedRangeQuery[K, V]) WithDescendingKeys() TimestampedRangeQuery[K, V] {
	q.Order = ResultOrderDescending
	return q
}

// WithAscendingKeys returns q asking for ascending serialized keys. Java: withAscendingKeys().
func (q TimestampedRangeQuery[K, V]) WithAscendingKeys() TimestampedRangeQuery[K, V] {
	q.Order = ResultOrderAscending
	return q
}

func (q TimestampedRangeQuery[K, V]) accepts(k storeview.Kind) (acceptance, error) {
	return timestampedAccepts(k)
}

func (q TimestampedRangeQuery[K, V]) run(k *KafkaStreams, name string, opts []StoreQueryOption) (store.KeyValueIterator[K, *store.ValueAndTimestamp[V]], error) {
	s, err := TimestampedKeyValueStore[K, V](k, name, opts...)
	if err != nil {
		return nil, err
	}
	return rangeIter(s, q.Lower, q.Upper, q.Order), nil
}

// WindowKeyQuery fetches a key's windows starting in [TimeFrom, TimeTo] (ms) from a window
// store; the result iterates window start -> value. Other stores answer
// FailureUnknownQueryType. Java: WindowKeyQuery.withKeyAndWindowStartRange(key, timeFrom,
// timeTo).
type WindowKeyQuery[K, V any] struct {
	Key              K
	TimeFrom, TimeTo int64
}

func (q WindowKeyQuery[K, V]) accepts(k storeview.Kind) (acceptance, error) {
	return onlyAccepts(k, storeview.Window, storeview.TimestampedWindow), nil
}

func (q WindowKeyQuery[K, V]) run(k *KafkaStreams, name string, opts []StoreQueryOption) (store.KeyValueIterator[int64, V], error) {
	s, err := WindowStore[K, V](k, name, opts...)
	if err != nil {
		return nil, err
	}
	return s.FetchTimeRange(q.Key, q.TimeFrom, q.TimeTo), nil
}

// WindowRangeQuery fetches windows: of every key starting in [TimeFrom, TimeTo] (ms) from a
// window store, or, when HasKey, every session of Key from a session store. A window store
// asked by key, or a session store by time, answers FailureUnknownQueryType, as other stores.
// Java: WindowRangeQuery.withWindowStartRange(timeFrom, timeTo) / withKey(key).
type WindowRangeQuery[K, V any] struct {
	TimeFrom, TimeTo int64
	Key              K
	HasKey           bool
}

func (q WindowRangeQuery[K, V]) accepts(k storeview.Kind) (acceptance, error) {
	switch k {
	case "":
		return queryRuns, nil
	case storeview.Window, storeview.TimestampedWindow:
		if q.HasKey {
			// Java: MeteredWindowStore refuses it before any bound check.
			return queryUnknownAnyBound, nil
		}
		return queryRuns, nil
	case storeview.Session:
		if !q.HasKey {
			return queryUnknownAnyBound, nil
		}
		return queryRuns, nil
	}
	return queryUnknown, nil
}

func (q WindowRangeQuery[K, V]) run(k *KafkaStreams, name string, opts []StoreQueryOption) (store.KeyValueIterator[serde.Windowed[K], V], error) {
	if q.HasKey {
		s, err := SessionStore[K, V](k, name, opts...)
		if err != nil {
			return nil, err
		}
		return s.Fetch(q.Key), nil
	}
	s, err := WindowStore[K, V](k, name, opts...)
	if err != nil {
		return nil, err
	}
	return s.FetchAll(q.TimeFrom, q.TimeTo), nil
}

// versionedViews returns the local versioned stores name the options select, viewed with
// keys K and values V.
func versionedViews[K, V any](k *KafkaStreams, name string, opts []StoreQueryOption) ([]taskView[storeview.VersionedReader[K, V]], error) {
	l, err := newLookup(k, name, queryOptions(opts), storeview.Versioned, reflect.TypeFor[K](), reflect.TypeFor[V]())
	if err != nil {
		return nil, err
	}
	ts, err := localViews(l, storeview.ReadOnlyVersioned[K, V])
	if err != nil {
		return nil, l.notReady(err)
	}
	return ts, nil
}

// VersionedKeyQuery looks a key up in a versioned key-value store (a table materialized with
// MaterializedAsVersioned, or a Processor API store built by store.Stores.VersionedKeyValueStoreBuilder):
// its latest version, or, with AsOfTimestamp, the version valid at that time (the one with
// the largest timestamp <= AsOfTimestamp); the result is the version (value, timestamp it is
// valid from, and the timestamp it is valid to unless it is the latest), nil when there is
// none (no version, a tombstone, or AsOfTimestamp older than the history retention while the
// latest version is newer). Other stores answer FailureUnknownQueryType. Java:
// VersionedKeyQuery.withKey(key).asOf(instant) (KIP-960).
type VersionedKeyQuery[K, V any] struct {
	Key K
	// AsOfTimestamp (ms), when not nil, asks for the version valid then; nil asks for the
	// latest version.
	AsOfTimestamp *int64
}

// VersionedKeyQueryWithKey asks for key's latest version. Java: VersionedKeyQuery.withKey(key).
func VersionedKeyQueryWithKey[K, V any](key K) VersionedKeyQuery[K, V] {
	return VersionedKeyQuery[K, V]{Key: key}
}

// AsOf returns q asking for the version valid at timestamp (ms). Java: asOf(instant).
func (q VersionedKeyQuery[K, V]) AsOf(timestamp int64) VersionedKeyQuery[K, V] {
	q.AsOfTimestamp = &timestamp
	return q
}

func (q VersionedKeyQuery[K, V]) accepts(k storeview.Kind) (acceptance, error) {
	return onlyAccepts(k, storeview.Versioned), nil
}

func (q VersionedKeyQuery[K, V]) run(k *KafkaStreams, name string, opts []StoreQueryOption) (*store.VersionedRecord[V], error) {
	ts, err := versionedViews[K, V](k, name, opts)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		var r *store.VersionedRecord[V]
		if rerr := t.read(name, func(s storeview.VersionedReader[K, V]) {
			if q.AsOfTimestamp != nil {
				r, err = s.GetAsOf(q.Key, *q.AsOfTimestamp)
			} else {
				r, err = s.Get(q.Key)
			}
		}); rerr != nil {
			return nil, rerr
		}
		if err != nil || r != nil {
			return r, err
		}
	}
	return nil, nil
}

// MultiVersionedKeyQuery lists a key's versions in a versioned key-value store: every version
// (not tombstones) valid at some time within [FromTime, ToTime] (ms, inclusive; nil: no
// bound), i.e. with timestamp <= ToTime and valid to after FromTime (the latest version is
// valid to the end of time), by timestamp in Order (ResultOrderAny: descending, as Java's
// store). When ToTime is older than the history retention only the latest version can match.
// The result is an iterator (empty when nothing matches) the caller closes; it holds the
// versions read at once, a consistent snapshot of the key. Other stores answer
// FailureUnknownQueryType; FromTime after ToTime makes StateQuery fail with ErrInvalidQuery.
// Java: MultiVersionedKeyQuery.withKey(key).fromTime(t).toTime(t) (KIP-968).
type MultiVersionedKeyQuery[K, V any] struct {
	Key K
	// From and To (ms) bound the time range; nil leaves a side open.
	From, To *int64
	// Order is the order of the versions' timestamps.
	Order ResultOrder
}

// MultiVersionedKeyQueryWithKey asks for all of key's versions. Java:
// MultiVersionedKeyQuery.withKey(key).
func MultiVersionedKeyQueryWithKey[K, V any](key K) MultiVersionedKeyQuery[K, V] {
	return MultiVersionedKeyQuery[K, V]{Key: key}
}

// FromTime returns q asking for versions still valid at or after timestamp (ms). Java:
// fromTime(instant).
func (q MultiVersionedKeyQuery[K, V]) FromTime(timestamp int64) MultiVersionedKeyQuery[K, V] {
	q.From = &timestamp
	return q
}

// ToTime returns q asking for versions with timestamps up to timestamp (ms). Java:
// toTime(instant).
func (q MultiVersionedKeyQuery[K, V]) ToTime(timestamp int64) MultiVersionedKeyQuery[K, V] {
	q.To = &timestamp
	return q
}

// WithAscendingTimestamps returns q asking for the oldest version first. Java:
// withAscendingTimestamps().
func (q MultiVersionedKeyQuery[K, V]) WithAscendingTimestamps() MultiVersionedKeyQuery[K, V] {
	q.Order = ResultOrderAscending
	return q
}

// WithDescendingTimestamps returns q asking for the newest version first. Java:
// withDescendingTimestamps().
func (q MultiVersionedKeyQuery[K, V]) WithDescendingTimestamps() MultiVersionedKeyQuery[K, V] {
	q.Order = ResultOrderDescending
	return q
}

// span is the query's time range with open sides filled in.
func (q MultiVersionedKeyQuery[K, V]) span() (int64, int64) {
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if q.From != nil {
		from = *q.From
	}
	if q.To != nil {
		to = *q.To
	}
	return from, to
}

func (q MultiVersionedKeyQuery[K, V]) accepts(k storeview.Kind) (acceptance, error) {
	acc := onlyAccepts(k, storeview.Versioned)
	if from, to := q.span(); acc == queryRuns && from > to {
		// Java: MeteredVersionedKeyValueStore throws IllegalArgumentException.
		return 0, fmt.Errorf("%w: MultiVersionedKeyQuery FromTime %d is after ToTime %d", ErrInvalidQuery, from, to)
	}
	return acc, nil
}

func (q MultiVersionedKeyQuery[K, V]) run(k *KafkaStreams, name string, opts []StoreQueryOption) (store.VersionedRecordIterator[V], error) {
	ts, err := versionedViews[K, V](k, name, opts)
	if err != nil {
		return nil, err
	}
	from, to := q.span()
	var out []store.VersionedRecord[V]
	for _, t := range ts {
		var it store.VersionedRecordIterator[V]
		if rerr := t.read(name, func(s storeview.VersionedReader[K, V]) {
			it, err = s.GetVersions(q.Key, from, to, q.Order == ResultOrderAscending)
		}); rerr != nil {
			return nil, rerr
		}
		if err != nil {
			return nil, err
		}
		recs, err := store.CollectVersions(it)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return store.VersionedRecordsIterator(out), nil
}
