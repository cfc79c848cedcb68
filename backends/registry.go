package backends

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Opener opens (creating it unless opts.ReadOnly) the store kept in dir.
// Open has already checked the data directory's marker and created dir.
type Opener func(dir string, opts Options) (KV, error)

// MarkerFile is the name of the file, inside a data directory, that records
// which store created it (its content is the store's registered name and a
// newline).
const MarkerFile = "BACKEND"

// The registry is the package's only global mutable state. Stores add
// themselves from init functions.
var registry = struct {
	sync.RWMutex
	m       map[string]Opener
	missing map[string]error // stores registered as unavailable, with the reason
}{m: map[string]Opener{}, missing: map[string]error{}}

// Register makes a store available to Open under name. It is meant to be
// called from a store package's init function and panics, like
// database/sql.Register, if name is empty or already registered or open is
// nil: those are programming errors, not input.
func Register(name string, open Opener) {
	if name == "" || strings.ContainsAny(name, " \t\r\n/") || open == nil {
		panic(fmt.Sprintf("backends: Register(%q): invalid name or nil opener", name))
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[name]; dup {
		panic(fmt.Sprintf("backends: Register(%q) called twice", name))
	}
	registry.m[name] = open
}

// RegisterUnavailable records a store that this build lacks: Open and
// Available return reason (which should wrap ErrUnavailable and say how to
// get a build that has it). Like Register, it is meant for init functions.
func RegisterUnavailable(name string, reason error) {
	if reason == nil {
		panic(fmt.Sprintf("backends: RegisterUnavailable(%q): nil reason", name))
	}
	Register(name, func(string, Options) (KV, error) { return nil, reason })
	registry.Lock()
	defer registry.Unlock()
	registry.missing[name] = reason
}

// Available reports whether Open can open the store registered as name in
// this build: nil, ErrUnknownBackend, or the reason given to
// RegisterUnavailable. It touches no directory.
func Available(name string) error {
	registry.RLock()
	defer registry.RUnlock()
	if _, ok := registry.m[name]; !ok {
		names := make([]string, 0, len(registry.m))
		for n := range registry.m {
			names = append(names, n)
		}
		slices.Sort(names)
		return fmt.Errorf("%w: %q (want %s)", ErrUnknownBackend, name, strings.Join(names, ", "))
	}
	return registry.missing[name]
}

// Names returns the registered store names in sorted order (including stores
// registered as unavailable in this build, whose Open fails with
// ErrUnavailable).
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Open opens the store registered as name in the data directory dir.
//
// A data directory remembers the store that created it in dir/BACKEND.
// Opening it with another store fails with an error wrapping
// ErrWrongBackend that names both. A directory without the marker is adopted
// (the marker is written, durably, before the store creates its files, and
// removed again if the store then fails to open) unless
// opts.ReadOnly, in which case nothing is written and dir must exist.
// Unknown names give ErrUnknownBackend.
func Open(name, dir string, opts Options) (KV, error) {
	registry.RLock()
	open, ok := registry.m[name]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q (registered: %s; blank-import utxod/backends/all)",
			ErrUnknownBackend, name, strings.Join(Names(), ", "))
	}
	if dir == "" {
		return nil, fmt.Errorf("%w: empty data directory", ErrBadOptions)
	}
	marker := filepath.Join(dir, MarkerFile)
	have, err := os.ReadFile(marker)
	created := false
	switch {
	case err == nil:
		if owner := string(bytes.TrimSpace(have)); owner != name {
			return nil, fmt.Errorf("%w: %s was created by store %q, cannot open it with %q",
				ErrWrongBackend, dir, owner, name)
		}
	case errors.Is(err, fs.ErrNotExist):
		if opts.ReadOnly {
			if _, err := os.Stat(dir); err != nil {
				return nil, fmt.Errorf("backends: open %s read-only: %w", dir, err)
			}
			break
		}
		if err := writeMarker(dir, name); err != nil {
			return nil, err
		}
		created = true
	default:
		return nil, fmt.Errorf("backends: read %s: %w", marker, err)
	}
	kv, err := open(dir, opts)
	if err != nil {
		if created {
			// Do not leave a claim on the directory for a store that never
			// opened (e.g. one not compiled in).
			_ = os.Remove(marker)
		}
		return nil, fmt.Errorf("backends: open %s store in %s: %w", name, dir, err)
	}
	return kv, nil
}

// writeMarker creates dir and writes dir/BACKEND atomically and durably.
func writeMarker(dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("backends: create %s: %w", dir, err)
	}
	tmp := filepath.Join(dir, MarkerFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("backends: write marker: %w", err)
	}
	_, err = f.WriteString(name + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, MarkerFile))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("backends: write marker in %s: %w", dir, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
