package events

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"utxod/address"
	"utxod/descriptor"
	"utxod/params"
	"utxod/scripthash"
	"utxod/utxo"
	"utxod/wire"
)

// Spec is a subscription as a client writes it: any mix of addresses (of
// the node's network), scripthashes (64 hex digits, Esplora's), output
// descriptors (ranged ones over their range, as POST /v1/scan takes them),
// outpoints ("txid:vout"), Blocks (every block_connected and
// block_disconnected, not only those of blocks with other events) and
// Tweaks (a tweaks event per connected block: its BIP352 tweak data).
type Spec struct {
	Addresses    []string
	Scripthashes []string
	Descriptors  []descriptor.ScanObject
	Outpoints    []string
	Blocks       bool
	Tweaks       bool
}

// Limits bound one subscription.
type Limits struct {
	// Scripts bounds the scripts of one subscription, descriptors
	// expanded (default 100,000, /v1/scan's).
	Scripts int
	// Outpoints bounds its outpoints (default 10,000).
	Outpoints int
	// Descriptors bounds its descriptors (default 1,000).
	Descriptors int
}

func (l Limits) withDefaults() Limits {
	if l.Scripts <= 0 {
		l.Scripts = 100_000
	}
	if l.Outpoints <= 0 {
		l.Outpoints = 10_000
	}
	if l.Descriptors <= 0 {
		l.Descriptors = 1_000
	}
	return l
}

// ErrBadSpec wraps a subscription that is malformed: an address of another
// network, a scripthash or outpoint that does not parse, an empty
// subscription. Descriptor errors are descriptor.Error values.
var ErrBadSpec = errors.New("events: bad subscription")

// ErrTooLarge wraps a subscription over its Limits.
var ErrTooLarge = errors.New("events: subscription too large")

// Filter is a validated subscription. It never changes once built; streams
// share it.
type Filter struct {
	// Scripts are the watched scripthashes, sorted, without duplicates.
	Scripts []scripthash.Hash
	// Outpoints are the watched outpoints, sorted, without duplicates.
	Outpoints []utxo.Outpoint
	Blocks    bool
	// Tweaks asks for a tweaks event per connected block.
	Tweaks bool
	id     string
}

// ID is the subscription's identifier: a digest of its content, the same
// on every replica for the same scripts, outpoints and Blocks.
func (f *Filter) ID() string { return f.id }

// Empty reports a filter with nothing to watch and no blocks.
func (f *Filter) Empty() bool {
	return len(f.Scripts) == 0 && len(f.Outpoints) == 0 && !f.Blocks && !f.Tweaks
}

func (f *Filter) hasScript(h scripthash.Hash) bool {
	_, ok := slices.BinarySearchFunc(f.Scripts, h, func(a, b scripthash.Hash) int { return bytes.Compare(a[:], b[:]) })
	return ok
}

func (f *Filter) hasOutpoint(op utxo.Outpoint) bool {
	_, ok := slices.BinarySearchFunc(f.Outpoints, op, compareOutpoints)
	return ok
}

func compareOutpoints(a, b utxo.Outpoint) int {
	if c := bytes.Compare(a.Hash[:], b.Hash[:]); c != 0 {
		return c
	}
	return int(a.Index) - int(b.Index)
}

// Bytes estimates the memory the filter holds.
func (f *Filter) Bytes() int { return len(f.Scripts)*32 + len(f.Outpoints)*36 + 64 }

// Compile validates spec for the network p and builds its Filter. Errors
// wrap ErrBadSpec, ErrTooLarge, or are descriptor errors (as /v1/scan's);
// ctx cancels a long descriptor expansion.
func Compile(ctx context.Context, spec Spec, p *params.Params, lim Limits) (*Filter, error) {
	lim = lim.withDefaults()
	if len(spec.Descriptors) > lim.Descriptors {
		return nil, fmt.Errorf("%w: %d descriptors; at most %d", ErrTooLarge, len(spec.Descriptors), lim.Descriptors)
	}
	if n := len(spec.Addresses) + len(spec.Scripthashes); n > lim.Scripts {
		return nil, fmt.Errorf("%w: %d addresses and scripthashes; at most %d scripts", ErrTooLarge, n, lim.Scripts)
	}
	if len(spec.Outpoints) > lim.Outpoints {
		return nil, fmt.Errorf("%w: %d outpoints; at most %d", ErrTooLarge, len(spec.Outpoints), lim.Outpoints)
	}
	f := &Filter{Blocks: spec.Blocks, Tweaks: spec.Tweaks}
	for _, a := range spec.Addresses {
		script, err := address.Decode(a, p)
		if err != nil {
			return nil, fmt.Errorf("%w: address %q: %v (this node is on %s)", ErrBadSpec, a, err, p.Name)
		}
		f.Scripts = append(f.Scripts, scripthash.Of(script))
	}
	for _, s := range spec.Scripthashes {
		h, err := scripthash.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("%w: scripthash %q: %v", ErrBadSpec, s, err)
		}
		f.Scripts = append(f.Scripts, h)
	}
	if len(spec.Descriptors) > 0 {
		budget := lim.Scripts - len(f.Scripts)
		if budget <= 0 {
			return nil, fmt.Errorf("%w: more than %d scripts", ErrTooLarge, lim.Scripts)
		}
		needles, err := descriptor.Expand(ctx, spec.Descriptors, p, budget)
		if err != nil {
			if errors.Is(err, descriptor.ErrTooManyScripts) {
				return nil, fmt.Errorf("%w: more than %d scripts (descriptors expanded): %w", ErrTooLarge, lim.Scripts, err)
			}
			return nil, err
		}
		for _, n := range needles {
			f.Scripts = append(f.Scripts, scripthash.Of(n.Script))
		}
	}
	for _, s := range spec.Outpoints {
		op, err := ParseOutpoint(s)
		if err != nil {
			return nil, err
		}
		f.Outpoints = append(f.Outpoints, op)
	}
	slices.SortFunc(f.Scripts, func(a, b scripthash.Hash) int { return bytes.Compare(a[:], b[:]) })
	f.Scripts = slices.Compact(f.Scripts)
	if len(f.Scripts) > lim.Scripts {
		return nil, fmt.Errorf("%w: %d scripts; at most %d", ErrTooLarge, len(f.Scripts), lim.Scripts)
	}
	slices.SortFunc(f.Outpoints, compareOutpoints)
	f.Outpoints = slices.Compact(f.Outpoints)
	if f.Empty() {
		return nil, fmt.Errorf("%w: nothing to watch: name addresses, scripthashes, descriptors or outpoints, or ask for blocks or tweaks", ErrBadSpec)
	}
	f.id = f.digest()
	return f, nil
}

// digest is the ID: SHA-256 over the sorted content, 32 hex digits.
func (f *Filter) digest() string {
	h := sha256.New()
	var n [4]byte
	for _, s := range f.Scripts {
		h.Write(s[:])
	}
	h.Write([]byte{0xff})
	for _, op := range f.Outpoints {
		h.Write(op.Hash[:])
		binary.LittleEndian.PutUint32(n[:], op.Index)
		h.Write(n[:])
	}
	if f.Blocks {
		h.Write([]byte{1})
	}
	if f.Tweaks {
		h.Write([]byte{2})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// ParseOutpoint reads "txid:vout" (txid in the usual reversed hex).
func ParseOutpoint(s string) (utxo.Outpoint, error) {
	ts, vs, ok := strings.Cut(s, ":")
	if !ok {
		return utxo.Outpoint{}, fmt.Errorf("%w: outpoint %q: want txid:vout", ErrBadSpec, s)
	}
	txid, err := wire.ParseHash(ts)
	if err != nil {
		return utxo.Outpoint{}, fmt.Errorf("%w: outpoint %q: %v", ErrBadSpec, s, err)
	}
	v, err := strconv.ParseUint(vs, 10, 32)
	if err != nil {
		return utxo.Outpoint{}, fmt.Errorf("%w: outpoint %q: bad vout", ErrBadSpec, s)
	}
	return utxo.Outpoint{Hash: txid, Index: uint32(v)}, nil
}

func outpointString(op utxo.Outpoint) string {
	return op.Hash.String() + ":" + strconv.FormatUint(uint64(op.Index), 10)
}
