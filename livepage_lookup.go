package kstreams

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kstreams-go/kstreams/internal/runtime"
	"github.com/kstreams-go/kstreams/internal/storeview"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
)

// The live page's store list and key lookup: the stores of the topology, and a key looked up
// in one of them through StateQuery (a KeyQuery by string key) on the local active tasks.

// liveStore is one store of the topology as the page lists it.
type liveStore struct {
	Name string
	// Kind is what a local task's store is ("timestamped key-value store", "window store",
	// ...), "" while no local task has it.
	Kind string `json:",omitempty"`
	// KeyType and ValueType are the Go types it holds, when known.
	KeyType   string `json:",omitempty"`
	ValueType string `json:",omitempty"`
	// Global stores are not looked up by the page.
	Global bool `json:",omitempty"`
	// Tasks are the local tasks holding it: running, restoring, standby.
	Tasks []liveStoreTask `json:",omitempty"`
}

type liveStoreTask struct {
	Task, State string
}

// liveStores lists the topology's stores in the order they were added, with what the local
// tasks say of them.
func (k *KafkaStreams) liveStores() []liveStore {
	var out []liveStore
	rt := k.runtime()
	for _, st := range topology.Of(k.topology).Stores() {
		s := liveStore{Name: st.Builder.Name(), Global: st.Global, KeyType: typeName(st.KeyType), ValueType: typeName(st.ValueType)}
		if rt != nil && !st.Global {
			for i, set := range []struct {
				state  string
				stores func(string) map[processor.TaskID]runtime.QueryableStore
			}{{"running", rt.Stores}, {"restoring", rt.RestoringStores}, {"standby", rt.StandbyStores}} {
				for id, qs := range set.stores(s.Name) {
					s.Tasks = append(s.Tasks, liveStoreTask{Task: id.String(), State: set.state})
					if s.Kind == "" || i == 0 {
						kind, key, value := storeview.Inspect(qs.Store)
						if dk := storeview.KindOf(qs.Store); dk != "" {
							kind = dk
						}
						s.Kind = string(kind)
						if s.KeyType == "" {
							s.KeyType, s.ValueType = typeName(key), typeName(value)
						}
					}
				}
			}
			slices.SortFunc(s.Tasks, func(a, b liveStoreTask) int { return strings.Compare(a.Task, b.Task) })
		}
		out = append(out, s)
	}
	return out
}

func typeName(t reflect.Type) string {
	if t == nil {
		return ""
	}
	return strings.ReplaceAll(t.String(), "interface {}", "any")
}

// liveLookup is the answer of lookup.json: the key's value in each local active task of the
// store (the key lives in one partition; the others answer that they do not have it).
type liveLookup struct {
	Store, Key string
	Answers    []liveAnswer `json:",omitempty"`
	// Error says why there is no answer; the HTTP status says what kind of failure it is.
	Error string `json:",omitempty"`
}

// liveAnswer is one task's answer.
type liveAnswer struct {
	Task      string
	Partition int32
	Found     bool
	// Type is the value's Go type; JSON is the value when it is JSON (a JSON document held as
	// bytes or a string, or a Go value that marshals), Text when it is not.
	Type string          `json:",omitempty"`
	JSON json.RawMessage `json:",omitempty"`
	Text string          `json:",omitempty"`
	// Failure is why the task did not answer (it restores, or the store failed).
	Failure string `json:",omitempty"`
}

// liveValueCap bounds a value's rendering, so that one huge value cannot swamp the page.
const liveValueCap = 64 << 10

// lookupKey asks store name for key. The status is 200 with the answers, or: 400 for a
// request without store or key, a global store, a store of other than string keys, a store
// that is not a key-value store; 404 for a store the topology does not have; 503 when no
// local active task can answer (the instance is not running, no local task has the store,
// they all restore).
func (k *KafkaStreams) lookupKey(name, key string, haveKey bool) (liveLookup, int) {
	res := liveLookup{Store: name, Key: key}
	fail := func(status int, format string, args ...any) (liveLookup, int) {
		res.Error = fmt.Sprintf(format, args...)
		return res, status
	}
	if name == "" || !haveKey {
		return fail(http.StatusBadRequest, "give the store and the key: lookup.json?store=NAME&key=KEY")
	}
	st := topology.Of(k.topology).Store(name)
	if st == nil {
		return fail(http.StatusNotFound, "unknown store %q: the topology has no store of that name", name)
	}
	if st.Global {
		return fail(http.StatusBadRequest, "store %q is a global store: the page looks up the stores of tasks", name)
	}
	if st.KeyType != nil && st.KeyType != reflect.TypeFor[string]() && st.KeyType.Kind() != reflect.Interface {
		return fail(http.StatusBadRequest, "store %q has keys of type %s: the page looks up string keys", name, typeName(st.KeyType))
	}
	r, err := StateQuery(k, InStore(name).WithQuery(KeyQuery[string, any]{Key: key}).WithRequireActive())
	switch {
	case errors.Is(err, ErrStoreNotAvailable):
		return fail(http.StatusServiceUnavailable, "%v", err)
	case errors.Is(err, errors.ErrUnsupported):
		return fail(http.StatusBadRequest, "store %q is not a key-value store: %v", name, err)
	case err != nil:
		return fail(http.StatusInternalServerError, "%v", err)
	}
	if len(r.PartitionResults) == 0 {
		return fail(http.StatusServiceUnavailable, "no local task has store %q (the instance runs none of its tasks)", name)
	}
	active := 0
	for _, p := range slices.Sorted(maps.Keys(r.PartitionResults)) {
		pr := r.PartitionResults[p]
		a := liveAnswer{Task: processor.TaskID{Subtopology: mustSub(k, name), Partition: int(p)}.String(), Partition: p}
		switch pr.Failure {
		case "":
			active++
			if pr.Result != nil {
				a.Found = true
				a.Type = typeName(reflect.TypeOf(*pr.Result))
				a.JSON, a.Text = renderValue(*pr.Result)
			}
		case FailureUnknownQueryType:
			return fail(http.StatusBadRequest, "store %q is not a key-value store: %s", name, pr.FailureMessage)
		default:
			a.Failure = pr.FailureMessage
			if pr.Failure != FailureNotActive {
				active++
			}
		}
		res.Answers = append(res.Answers, a)
	}
	if active == 0 {
		res.Error = fmt.Sprintf("no local active task of store %q runs yet: they restore (or are standbys)", name)
		return res, http.StatusServiceUnavailable
	}
	return res, http.StatusOK
}

// mustSub is the sub-topology of the store's tasks.
func mustSub(k *KafkaStreams, name string) int {
	sub, _ := k.storeSubtopology(name)
	return sub
}

// renderValue renders a store value: bytes or a string holding a JSON document as that JSON,
// other bytes or strings as text (bytes that are not UTF-8 in hex), any other Go value as its
// JSON encoding, or as %+v when it has none. Both are cut at liveValueCap.
func renderValue(v any) (json.RawMessage, string) {
	text := func(s string) (json.RawMessage, string) {
		if len(s) > liveValueCap {
			s = s[:liveValueCap] + "… (cut)"
		}
		return nil, s
	}
	asJSON := func(b []byte) (json.RawMessage, string, bool) {
		if len(b) > liveValueCap || !json.Valid(b) {
			return nil, "", false
		}
		return json.RawMessage(b), "", true
	}
	switch x := v.(type) {
	case []byte:
		if j, t, ok := asJSON(x); ok {
			return j, t
		}
		if utf8.Valid(x) {
			return text(string(x))
		}
		return text("0x" + hex.EncodeToString(x))
	case string:
		if j, t, ok := asJSON([]byte(x)); ok {
			return j, t
		}
		return text(x)
	}
	b, err := json.Marshal(v)
	if err == nil {
		if j, t, ok := asJSON(b); ok {
			return j, t
		}
	}
	return text(fmt.Sprintf("%+v", v))
}
