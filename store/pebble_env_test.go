package store

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/kstreams-go/kstreams/internal/props"
	"github.com/kstreams-go/kstreams/processor"
)

func TestPebbleOptionsDefaultsAndValidate(t *testing.T) {
	var o PebbleOptions
	o.EnsureDefaults()
	if o.BlockCacheBytes != DefaultBlockCacheBytes || o.MemTableBudgetBytes != DefaultMemTableBudgetBytes ||
		o.MaxMemTableBytes != DefaultMaxMemTableBytes || o.FS == nil || o.Logger == nil {
		t.Fatalf("defaults = %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]PebbleOptions{
		"negative cache":  {BlockCacheBytes: -1},
		"negative budget": {MemTableBudgetBytes: -1},
		"tiny memtable":   {MaxMemTableBytes: 1024},
	} {
		bad.EnsureDefaults()
		if err := bad.Validate(); !errors.Is(err, ErrInvalidPebbleOptions) {
			t.Errorf("%s: err = %v", name, err)
		}
		if _, err := newPebbleEnv(bad); !errors.Is(err, ErrInvalidPebbleOptions) {
			t.Errorf("%s: NewPebbleEnv err = %v", name, err)
		}
	}
}

func TestPebbleEnvSharesBudget(t *testing.T) {
	env, err := newPebbleEnv(PebbleOptions{MemTableBudgetBytes: 8 << 20, MaxMemTableBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	// The first store gets the cap, later ones a smaller share of the budget, never below the minimum.
	var sizes []uint64
	for i := 0; i < 4; i++ {
		o := env.pebbleOptions(nil)
		if o.Cache == nil {
			t.Fatal("no shared cache")
		}
		sizes = append(sizes, o.MemTableSize)
	}
	want := []uint64{4 << 20, 4 << 20, (8 << 20) / 3, 2 << 20}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("memtable sizes = %v, want %v", sizes, want)
		}
	}
	if env.openStores() != 4 {
		t.Fatalf("openStores = %d", env.openStores())
	}
	for i := 0; i < 4; i++ {
		env.release()
	}
	if env.RawOptions().MemTableSize != 4<<20 || !env.RawOptions().DisableWAL {
		t.Fatal("RawOptions")
	}
}

func TestPebbleTransactions(t *testing.T) {
	s := newPebbleKeyValueStore("tx")
	ctx := &eosCtx{}
	if err := s.Init(ctx, s); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Transactional() {
		t.Fatal("not transactional under exactly_once_v2")
	}
	_ = s.Put([]byte("a"), []byte("1"))
	if v, ok, _ := s.Get([]byte("a")); !ok || string(v) != "1" {
		t.Fatal("open transaction not readable")
	}
	if _, found, _ := s.CommittedOffset(); found {
		t.Fatal("offset before any commit")
	}
	if err := s.CommitTransaction(7); err != nil {
		t.Fatal(err)
	}
	_ = s.Put([]byte("b"), []byte("2"))
	if err := s.AbortTransaction(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get([]byte("b")); ok {
		t.Fatal("aborted write visible")
	}
	if off, found, err := s.CommittedOffset(); err != nil || !found || off != 7 {
		t.Fatalf("CommittedOffset = %d %v %v", off, found, err)
	}
	if got := keysOf(t, s.All()); len(got) != 1 || got[0] != "a=1" {
		t.Fatalf("All = %q", got)
	}
}

// eosCtx is a StateStoreContext of an exactly-once application without a state directory.
type eosCtx struct{ fakeContext }

func (e *eosCtx) AppConfigs() map[string]string {
	return map[string]string{props.ProcessingGuaranteeConfig: "exactly_once_v2"}
}

// Under exactly-once an iterator opened before a commit reads what it saw, after the commit
// reused the transaction batch and new writes went to it.
func TestPebbleTransactionIteratorAcrossCommit(t *testing.T) {
	s := newPebbleKeyValueStore("tx")
	if err := s.Init(&eosCtx{}, s); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range []string{"a", "b", "c"} {
		mustPut(t, s, k, k+"1")
	}
	it := s.All()
	defer it.Close()
	if err := s.CommitTransaction(1); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		mustPut(t, s, k, k+"2")
	}
	var got []string
	for it.Next() {
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	if !slices.Equal(got, []string{"a=a1", "b=b1", "c=c1"}) {
		t.Fatalf("iteration across the commit = %q", got)
	}
	if got, want := keysOf(t, s.All()), []string{"a=a2", "b=b2", "c=c2", "d=d2"}; !slices.Equal(got, want) {
		t.Fatalf("All after the commit = %q, want %q", got, want)
	}
}

// Under exactly-once the open transaction's writes sit in a plain batch with the store's own
// index until an iterator needs them merged with the database; from then on, until the
// transaction ends, Pebble indexes them. Reads see every write of the transaction either way,
// before and after the switch, and a commit or an abort ends it the same way.
func TestPebbleTransactionIndexedOnFirstIterator(t *testing.T) {
	s := newPebbleKeyValueStore("tx")
	if err := s.Init(&eosCtx{}, s); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustPut(t, s, "a", "a0")
	mustPut(t, s, "z", "z0")
	if err := s.CommitTransaction(1); err != nil {
		t.Fatal(err)
	}
	get := func(k string) string {
		t.Helper()
		v, ok, err := s.Get([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return "-"
		}
		return string(v)
	}
	// Plain batch: point reads only.
	mustPut(t, s, "a", "a1")
	mustPut(t, s, "b", "b1")
	if err := s.Put([]byte("z"), nil); err != nil {
		t.Fatal(err)
	}
	if s.db.indexed {
		t.Fatal("indexed before any iterator")
	}
	if got := get("a") + get("b") + get("z"); got != "a1b1-" {
		t.Fatalf("point reads of the plain batch = %q", got)
	}
	// The first iterator indexes the batch, and reads it merged with the database.
	if got, want := keysOf(t, s.All()), []string{"a=a1", "b=b1"}; !slices.Equal(got, want) {
		t.Fatalf("All = %q, want %q", got, want)
	}
	if !s.db.indexed {
		t.Fatal("not indexed after an iterator")
	}
	mustPut(t, s, "c", "c1")
	if got := get("a") + get("c") + get("z"); got != "a1c1-" {
		t.Fatalf("point reads of the indexed batch = %q", got)
	}
	if got, want := keysOf(t, s.All()), []string{"a=a1", "b=b1", "c=c1"}; !slices.Equal(got, want) {
		t.Fatalf("All = %q, want %q", got, want)
	}
	// An abort drops the writes of both phases and starts a plain batch again.
	if err := s.AbortTransaction(); err != nil {
		t.Fatal(err)
	}
	if s.db.indexed {
		t.Fatal("indexed after the abort")
	}
	if got, want := keysOf(t, s.All()), []string{"a=a0", "z=z0"}; !slices.Equal(got, want) {
		t.Fatalf("All after the abort = %q, want %q", got, want)
	}
	mustPut(t, s, "d", "d2")
	if got, want := keysOf(t, s.All()), []string{"a=a0", "d=d2", "z=z0"}; !slices.Equal(got, want) {
		t.Fatalf("All in the next transaction = %q, want %q", got, want)
	}
	mustPut(t, s, "e", "e2")
	if err := s.CommitTransaction(2); err != nil {
		t.Fatal(err)
	}
	if s.db.indexed {
		t.Fatal("indexed after the commit")
	}
	if got, want := keysOf(t, s.All()), []string{"a=a0", "d=d2", "e=e2", "z=z0"}; !slices.Equal(got, want) {
		t.Fatalf("All after the commit = %q, want %q", got, want)
	}
	if off, found, err := s.CommittedOffset(); err != nil || !found || off != 2 {
		t.Fatalf("CommittedOffset = %d %v %v", off, found, err)
	}
}

// Under exactly-once a range deletion of old segments indexes the open transaction's batch:
// point reads after it see the segments gone, also writes made before it in the same
// transaction, and a commit makes it durable.
func TestPebbleSegmentsDropBelowInTransaction(t *testing.T) {
	p := newPebbleSegments()
	if err := p.open(&eosCtx{}, "segs"); err != nil {
		t.Fatal(err)
	}
	defer p.close()
	for id := int64(1); id <= 3; id++ {
		if err := p.segment(id, true).put([]byte("k"), []byte{byte('0' + id)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.db.commitTransaction(1); err != nil {
		t.Fatal(err)
	}
	if err := p.segment(2, false).put([]byte("j"), []byte("x")); err != nil { // pending, plain batch
		t.Fatal(err)
	}
	if err := p.dropBelow(3); err != nil {
		t.Fatal(err)
	}
	if !p.db.indexed {
		t.Fatal("the range deletion did not index the transaction")
	}
	read := func(id int64, k string) string {
		t.Helper()
		v, ok, err := space{p: p.db, prefix: segPrefix(id)}.get([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return "-"
		}
		return string(v)
	}
	if got := read(1, "k") + read(2, "k") + read(2, "j") + read(3, "k"); got != "---3" {
		t.Fatalf("reads after dropBelow(3) = %q, want ---3", got)
	}
	if err := p.db.commitTransaction(2); err != nil {
		t.Fatal(err)
	}
	if got := read(1, "k") + read(2, "j") + read(3, "k"); got != "--3" {
		t.Fatalf("reads after the commit = %q, want --3", got)
	}
}

// Reads of a write still pending in the plain batch run under the store's read lock, side by
// side (interactive queries beside the stream thread): under both guarantees they read what was
// written without writing anything themselves (run under -race).
func TestPebblePendingReadsConcurrent(t *testing.T) {
	for _, eos := range []bool{false, true} {
		s := newPebbleKeyValueStore("conc")
		var ctx processor.StateStoreContext = &fakeContext{}
		if eos {
			ctx = &eosCtx{}
		}
		if err := s.Init(ctx, s); err != nil {
			t.Fatal(err)
		}
		mustPut(t, s, "k", "v1")
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 200 {
					if v, ok, err := s.Get([]byte("k")); err != nil || !ok || string(v) != "v1" {
						errs <- fmt.Errorf("eos %v: Get = %q %v %v", eos, v, ok, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		_ = s.Close()
	}
}
