package validate

import (
	"log/slog"
	"runtime"
	"sync"

	"utxod/merkle"
	"utxod/params"
	"utxod/script"
	"utxod/utxo"
	"utxod/wire"
)

// Validator applies the consensus rules of one network. It holds no chain
// state: the block index and coin view are passed in, so one Validator can
// serve any number of chainstates. Safe for concurrent use.
type Validator struct {
	Params *params.Params
	// Engine verifies input scripts.
	Engine script.Engine
	// Workers is the number of goroutines verifying scripts (default
	// NumCPU): Workers-1 in the background plus the one waiting for a
	// block's verdict.
	Workers int
	// Merkle computes merkle roots (default merkle.Root).
	Merkle func(leaves []wire.Hash) (wire.Hash, bool)
	Log    *slog.Logger

	poolOnce sync.Once
	pool     chan struct{} // Workers-1 slots shared by every ScriptCheck
	overlays sync.Pool     // *overlayMaps (connect.go)
}

// New returns a Validator for p using engine for scripts.
func New(p *params.Params, engine script.Engine, log *slog.Logger) *Validator {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Validator{Params: p, Engine: engine, Workers: runtime.NumCPU(), Log: log}
}

func (v *Validator) merkleRoot(leaves []wire.Hash) (wire.Hash, bool) {
	if v.Merkle != nil {
		return v.Merkle(leaves)
	}
	return merkle.Root(leaves)
}

// ValidateAndConnect runs every check Core runs on a block whose parent is
// prev (CheckBlock, ContextualCheckBlockHeader, ContextualCheckBlock,
// ConnectBlock) against view, the coin set as of prev. It returns the
// block's delta; view is never modified. adjustedTime is the node's clock
// (Unix seconds) for the two-hour future limit.
func (v *Validator) ValidateAndConnect(b *wire.Block, prev *BlockNode, view utxo.View, adjustedTime int64) (*utxo.Delta, error) {
	if err := v.CheckBlock(b); err != nil {
		return nil, err
	}
	if err := ContextualCheckBlockHeader(&b.Header, prev, adjustedTime, v.Params); err != nil {
		return nil, err
	}
	if err := v.ContextualCheckBlock(b, prev); err != nil {
		return nil, err
	}
	return v.ConnectBlock(b, prev, view)
}
