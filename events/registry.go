package events

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Registry keeps the subscriptions clients created (POST
// /v1/subscriptions) by ID, for streams that name one. It is a cache, not
// state a client relies on: an ID is a digest of the subscription, so a
// client that meets ErrUnknownSubscription (another replica, a restart, an
// expiry) creates it again and gets the same ID.
type Registry struct {
	mu       sync.Mutex
	byID     map[string]*entry
	bytes    int
	maxBytes int
	ttl      time.Duration
	now      func() time.Time
}

type entry struct {
	f    *Filter
	used time.Time
}

// ErrUnknownSubscription: no subscription with that ID on this node.
var ErrUnknownSubscription = errors.New("events: unknown subscription (create it again: POST /v1/subscriptions gives the same id)")

// NewRegistry returns a Registry holding at most maxBytes of filters
// (default 256 MiB), each kept ttl (default 24 h) after its last use.
func NewRegistry(maxBytes int, ttl time.Duration) *Registry {
	if maxBytes <= 0 {
		maxBytes = 256 << 20
	}
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	return &Registry{byID: make(map[string]*entry), maxBytes: maxBytes, ttl: ttl, now: time.Now}
}

// Put keeps f, returning the copy already kept under its ID if any. When
// full after dropping the expired ones it answers ErrFull.
func (r *Registry) Put(f *Filter) (*Filter, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if e, ok := r.byID[f.ID()]; ok {
		e.used = now
		return e.f, nil
	}
	if r.bytes+f.Bytes() > r.maxBytes {
		for id, e := range r.byID {
			if now.Sub(e.used) > r.ttl {
				r.bytes -= e.f.Bytes()
				delete(r.byID, id)
			}
		}
	}
	if r.bytes+f.Bytes() > r.maxBytes {
		return nil, fmt.Errorf("%w: the subscriptions kept hold %d bytes, at most %d", ErrFull, r.bytes, r.maxBytes)
	}
	r.byID[f.ID()] = &entry{f: f, used: now}
	r.bytes += f.Bytes()
	return f, nil
}

// Get returns the subscription id.
func (r *Registry) Get(id string) (*Filter, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byID[id]
	if !ok || r.now().Sub(e.used) > r.ttl {
		return nil, ErrUnknownSubscription
	}
	e.used = r.now()
	return e.f, nil
}
