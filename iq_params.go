package kstreams

import (
	"fmt"

	"github.com/kstreams-go/kstreams/internal/runtime"
	"github.com/kstreams-go/kstreams/processor"
)

// StoreQueryOption refines which local stores a store view (KeyValueStore,
// TimestampedKeyValueStore, WindowStore, TimestampedWindowStore, SessionStore) reads. Java:
// StoreQueryParameters.
type StoreQueryOption func(*storeQuery)

type storeQuery struct {
	stale        bool
	partition    int
	hasPartition bool
}

// EnableStaleStores lets the view read the stores of this instance's standby tasks and of its
// active tasks still restoring, as well as those of its running active tasks (KIP-535): a
// standby answers while its active is gone (an instance failed and the group has not moved the
// task yet) or on another instance, with data that may lag the active's by the standby's
// changelog lag (Java updates standbys all the time; here a thread applies what is new every
// 200 ms); a restoring task answers with what its restore has applied so far (reads wait for
// the restore batch being written, at most 1000 records). Java:
// StoreQueryParameters.enableStaleStores().
func EnableStaleStores() StoreQueryOption { return func(q *storeQuery) { q.stale = true } }

// WithPartition restricts the view to the local task of input partition p (the partition
// QueryMetadataForKey returns for a key); with no such local task the view is
// ErrStoreNotAvailable. Java: StoreQueryParameters.withPartition(p).
func WithPartition(p int) StoreQueryOption {
	return func(q *storeQuery) { q.partition, q.hasPartition = p, true }
}

func queryOptions(opts []StoreQueryOption) storeQuery {
	var q storeQuery
	for _, o := range opts {
		if o != nil {
			o(&q)
		}
	}
	return q
}

// queryStores returns the local stores named name a view with options q reads, by task.
func (k *KafkaStreams) queryStores(name string, q storeQuery) map[processor.TaskID]runtime.QueryableStore {
	out := k.runtime().Stores(name)
	if q.stale {
		// A task moving between two threads of the instance may show in two of these at once:
		// the running one answers first, then the restoring active, then the standby.
		for _, more := range []map[processor.TaskID]runtime.QueryableStore{k.runtime().RestoringStores(name), k.runtime().StandbyStores(name)} {
			for id, s := range more {
				if _, ok := out[id]; !ok {
					out[id] = s
				}
			}
		}
	}
	if q.hasPartition {
		for id := range out {
			if id.Partition != q.partition {
				delete(out, id)
			}
		}
	}
	return out
}

// noLocalTask is the error of a view no local task serves.
func noLocalTask(name string, q storeQuery) error {
	what := "no local task has it"
	if q.hasPartition {
		what = fmt.Sprintf("no local task of partition %d has it", q.partition)
	}
	if !q.stale {
		what += " (standbys answer only with EnableStaleStores)"
	}
	return fmt.Errorf("%w: %q: %s", ErrStoreNotAvailable, name, what)
}
