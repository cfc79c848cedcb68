package guard

import (
	"sync"

	"utxod/backends"
)

// Cursor is the engine side of an iterator. The engine applies the bounds.
// Iter serialises all calls to a Cursor and never calls it after Close.
type Cursor interface {
	// First positions on the first key of the range; false when none or on
	// error.
	First() bool
	// Next advances; false at the end or on error.
	Next() bool
	// Entry returns the current key and value (valid until the next First,
	// Next or Close) or the error met reading them.
	Entry() (key, value []byte, err error)
	// Err returns the error that made First or Next return false, if any.
	Err() error
	// Close releases the engine iterator.
	Close() error
}

// Iter implements backends.Iterator over a Cursor and registers itself with
// the owning Guard so the owner's Close can release it.
type Iter struct {
	mu      sync.Mutex
	cur     Cursor // nil for an empty range
	owner   *Guard
	started bool
	valid   bool
	closed  bool
	err     error

	// key and val are written by Next and Close only, i.e. by the goroutine
	// that uses the iterator; Release never touches them.
	key, val []byte
}

var _ backends.Iterator = (*Iter)(nil)

// NewIter wraps cur (nil for an empty range) and tracks the iterator in
// owner. Call it between owner.Enter and owner.Exit.
func NewIter(owner *Guard, cur Cursor) *Iter {
	it := &Iter{cur: cur, owner: owner}
	owner.Track(it)
	return it
}

// Next implements backends.Iterator.
func (it *Iter) Next() bool {
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.closed || it.err != nil || it.cur == nil || (it.started && !it.valid) {
		it.valid, it.key, it.val = false, nil, nil
		return false
	}
	if !it.started {
		it.started = true
		it.valid = it.cur.First()
	} else {
		it.valid = it.cur.Next()
	}
	if !it.valid {
		it.err = it.cur.Err()
		it.key, it.val = nil, nil
		return false
	}
	k, v, err := it.cur.Entry()
	if err != nil {
		it.err, it.valid, it.key, it.val = err, false, nil, nil
		return false
	}
	if v == nil {
		v = []byte{}
	}
	if k == nil {
		k = []byte{}
	}
	it.key, it.val = k, v
	return true
}

// Key implements backends.Iterator.
func (it *Iter) Key() []byte { return it.key }

// Value implements backends.Iterator.
func (it *Iter) Value() []byte { return it.val }

// Err implements backends.Iterator.
func (it *Iter) Err() error {
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.err != nil {
		return it.err
	}
	if it.closed {
		return Closed("iterator")
	}
	return nil
}

// Close implements backends.Iterator.
func (it *Iter) Close() error {
	it.mu.Lock()
	it.key, it.val, it.valid = nil, nil, false
	if it.closed {
		it.mu.Unlock()
		return nil
	}
	it.closed = true
	var err error
	if it.cur != nil {
		err = it.cur.Close()
	}
	it.mu.Unlock()
	it.owner.Untrack(it)
	return err
}

// Release implements Resource: the owner is closing.
func (it *Iter) Release() {
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.closed {
		return
	}
	it.closed, it.valid = true, false
	if it.cur != nil {
		_ = it.cur.Close()
	}
}
