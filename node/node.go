package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"utxod/backends"
	"utxod/chainstate"
	"utxod/merkle"
	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/store/kvstore/shindex"
	"utxod/store/kvstore/spindex"
	"utxod/validate"
)

// Options say which node to open. The zero value of every field but Params
// means the default or off.
type Options struct {
	// Params is the network (required).
	Params *params.Params
	// Datadir is the data directory; empty keeps the chainstate in memory.
	Datadir string
	// Backend is the key-value store of the datadir (backends' registry
	// name); empty: DefaultBackend.
	Backend string
	// CacheBytes is the coins cache budget; the backend gets a block cache
	// of a quarter of it (BackendOptions). 0: kvstore.DefaultCacheBytes.
	CacheBytes int64
	// MinFreeBytes is the free space every flush leaves on the datadir's
	// filesystem (kvstore.Options.MinFreeBytes): 0 the default, negative
	// no pre-flush check.
	MinFreeBytes int64
	// Index asks for secondary indexes in a new datadir, by name
	// separated by commas: "" none, shindex.Name (the scripthash index),
	// spindex.Name (the silent-payments tweak index). A datadir that keeps
	// an index opens it whatever Index says; an index asked for on an
	// existing datadir without it is refused with the command that builds
	// it.
	Index string
	// AssumeValid is the assume-valid setting (AssumeValidFor reads the
	// network's default and the user's overrides); the zero value verifies
	// every script.
	AssumeValid validate.AssumeValid
	// MerkleKernel names the merkle root kernel (merkle.New); empty:
	// merkle.DefaultKernel.
	MerkleKernel string
	// SigCacheLookupOnly: the script engine never stores into its
	// signature cache (an import meets each signature once).
	SigCacheLookupOnly bool
	// KeepBlocks and MaxOrphanBytes are chainstate.Config's (0: its
	// defaults).
	KeepBlocks     int32
	MaxOrphanBytes int
	// Log receives the node's log lines. Nil discards them.
	Log *slog.Logger
}

// DefaultBackend is the store of a datadir when Options.Backend is empty.
const DefaultBackend = "pebble"

// Node is an open chainstate with its store, index and key-value store.
type Node struct {
	params *params.Params
	chain  *chainstate.Chainstate
	index  *shindex.Index // nil without one
	sp     *spindex.Index // nil without one
	store  store.Store
	kv     backends.KV // nil in memory
	closed bool
	err    error // of the first Close
}

// Chain is the node's chainstate.
func (n *Node) Chain() *chainstate.Chainstate { return n.chain }

// Index is the datadir's scripthash index, nil when it keeps none (then
// lookups scan the coin set).
func (n *Node) Index() *shindex.Index { return n.index }

// SilentPayments is the datadir's silent-payments tweak index, nil when it
// keeps none.
func (n *Node) SilentPayments() *spindex.Index { return n.sp }

// Params is the node's network.
func (n *Node) Params() *params.Params { return n.params }

// Store is the store the chainstate keeps its coins, undo data and blocks
// in.
func (n *Node) Store() store.Store { return n.store }

// Open opens the node opts describe: the validator, then the store (and
// with a datadir its backend and index), then the chainstate over them.
func Open(ctx context.Context, opts Options) (*Node, error) {
	if opts.Params == nil {
		return nil, errors.New("node: no network (Options.Params)")
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Backend == "" {
		opts.Backend = DefaultBackend
	}
	if err := CheckIndex(opts.Index, opts.Datadir); err != nil {
		return nil, err
	}
	v, err := newValidator(opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := &Node{params: opts.Params, store: store.NewMem()}
	if opts.Datadir != "" {
		if err := n.openStore(opts); err != nil {
			return nil, err
		}
	}
	n.chain, err = chainstate.New(chainstate.Config{Params: opts.Params, Validator: v, Store: n.store, Log: opts.Log,
		AssumeValid: opts.AssumeValid, KeepBlocks: opts.KeepBlocks, MaxOrphanBytes: opts.MaxOrphanBytes})
	if err != nil {
		return nil, errors.Join(err, n.closeStore())
	}
	return n, nil
}

// CheckIndex refuses an index name this package does not know, a name
// given twice, or an index asked for without a datadir. names is
// Options.Index: names separated by commas.
func CheckIndex(names, datadir string) error {
	seen := map[string]bool{}
	for _, name := range indexNames(names) {
		switch {
		case name != shindex.Name && name != spindex.Name:
			return fmt.Errorf("--index: want %s or %s (or both, separated by a comma), got %q", shindex.Name, spindex.Name, name)
		case seen[name]:
			return fmt.Errorf("--index: %s given twice", name)
		case datadir == "":
			return fmt.Errorf("--index %s needs --datadir (an index lives in the datadir's store)", name)
		}
		seen[name] = true
	}
	return nil
}

// indexNames splits Options.Index at its commas, dropping empty names.
func indexNames(names string) []string {
	var out []string
	for n := range strings.SplitSeq(names, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// wants reports whether Options.Index names the index name.
func wants(names, name string) bool { return slices.Contains(indexNames(names), name) }

// newValidator builds the consensus validator: the script engine and the
// merkle kernel of opts.
func newValidator(opts Options) (*validate.Validator, error) {
	h, err := merkle.New(opts.MerkleKernel, opts.Log)
	if err != nil {
		return nil, fmt.Errorf("merkle kernel: %w", err)
	}
	engine := script.NewEngine(script.WithSigCacheStore(!opts.SigCacheLookupOnly))
	v := validate.New(opts.Params, engine, opts.Log)
	v.Merkle = h.Root
	return v, nil
}

// AssumeValidFor is the assume-valid setting on p: the network's default
// unless block (a hash in display order, or 0 to verify every script) or
// work (the minimum chain work in hex) override it; empty strings keep the
// default.
func AssumeValidFor(p *params.Params, block, work string) (validate.AssumeValid, error) {
	av := validate.DefaultAssumeValid(p)
	if block != "" {
		h, err := validate.ParseUserHash(block)
		if err != nil {
			return av, fmt.Errorf("--assume-valid: %w (or 0 to verify every script)", err)
		}
		av.Block = h
	}
	if work != "" {
		w, err := validate.ParseUserWork(work)
		if err != nil {
			return av, fmt.Errorf("--min-chain-work: %w", err)
		}
		av.MinimumChainWork = w
	}
	return av, nil
}

// Close flushes the chainstate, then closes the index, the store and the
// backend, in that order, and returns their errors joined. Later calls
// return the first call's result.
func (n *Node) Close() error {
	if n.closed {
		return n.err
	}
	n.closed = true
	n.err = errors.Join(n.chain.Flush(), n.closeStore())
	return n.err
}

// closeStore closes the index, the store and the backend.
func (n *Node) closeStore() error {
	if n.index != nil {
		n.index.Close()
	}
	err := n.store.Close()
	if n.kv != nil {
		err = errors.Join(err, n.kv.Close())
	}
	return err
}
