// Package guard holds the close protocol the stores share: a Guard refuses
// new operations once closed, waits for operations in flight, and releases
// the iterators and snapshots still alive before the underlying engine is
// closed (RocksDB aborts, pebble panics and bbolt hangs when closed under
// live readers). Iter adapts an engine cursor to backends.Iterator on top of
// it.
package guard

import (
	"fmt"
	"sync"

	"utxod/backends"
)

// Resource is something that must be released before its owner closes.
// Release must be idempotent and safe to call concurrently with the
// resource's own methods.
type Resource interface{ Release() }

// Guard tracks the open/closed state of a store or snapshot. The zero value
// is an open guard.
type Guard struct {
	mu     sync.RWMutex // read-held by operations in flight, write-held by Close
	closed bool

	liveMu sync.Mutex
	live   map[Resource]struct{}
}

// Enter starts an operation. It returns false when the guard is closed;
// otherwise the caller must call Exit when the operation is done. Operations
// must not nest Enter calls on the same guard.
func (g *Guard) Enter() bool {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return false
	}
	return true
}

// Exit ends an operation started by a successful Enter.
func (g *Guard) Exit() { g.mu.RUnlock() }

// Track registers r for release by Close. Call it between Enter and Exit.
func (g *Guard) Track(r Resource) {
	g.liveMu.Lock()
	if g.live == nil {
		g.live = make(map[Resource]struct{})
	}
	g.live[r] = struct{}{}
	g.liveMu.Unlock()
}

// Untrack forgets r (after the resource was closed by its user).
func (g *Guard) Untrack(r Resource) {
	g.liveMu.Lock()
	delete(g.live, r)
	g.liveMu.Unlock()
}

// Live returns the number of tracked resources.
func (g *Guard) Live() int {
	g.liveMu.Lock()
	defer g.liveMu.Unlock()
	return len(g.live)
}

// Close marks the guard closed, waits for operations in flight, releases
// every tracked resource and then calls release (which closes the engine
// object). Only the first call does this and returns release's error; later
// calls return nil.
func (g *Guard) Close(release func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	g.liveMu.Lock()
	live := g.live
	g.live = nil
	g.liveMu.Unlock()
	for r := range live {
		r.Release()
	}
	if release == nil {
		return nil
	}
	return release()
}

// Closed returns an error wrapping backends.ErrClosed that names what was
// closed.
func Closed(what string) error { return fmt.Errorf("%s: %w", what, backends.ErrClosed) }
