package store

import (
	"errors"
	"github.com/kstreams-go/kstreams/internal/props"
	"slices"
	"testing"
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
