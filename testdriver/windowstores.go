package testdriver

import (
	"fmt"

	"github.com/kstreams-go/kstreams/store"
)

// WindowStore returns the window store name (plain values). Errors wrap ErrNoStore when there
// is no such store or it is not a store.WindowStore[K, V]. Java: getWindowStore(name) (which
// returns null there).
func WindowStore[K, V any](d *TopologyTestDriver, name string) (store.WindowStore[K, V], error) {
	return storeAs[store.WindowStore[K, V]](d, name, "store.WindowStore")
}

// SessionStore returns the session store name. Errors wrap ErrNoStore when there is no such
// store or it is not a store.SessionStore[K, V]. Java: getSessionStore(name).
func SessionStore[K, V any](d *TopologyTestDriver, name string) (store.SessionStore[K, V], error) {
	return storeAs[store.SessionStore[K, V]](d, name, "store.SessionStore")
}

// storeAs returns the store name converted to S.
func storeAs[S any](d *TopologyTestDriver, name, what string) (S, error) {
	var zero S
	s, err := d.StateStore(name)
	if err != nil {
		return zero, err
	}
	typed, ok := s.(S)
	if !ok {
		return zero, fmt.Errorf("%w: %q is a %T, not a %s of these types", ErrNoStore, name, s, what)
	}
	return typed, nil
}
