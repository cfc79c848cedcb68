package utxo

import (
	"errors"
	"math/rand/v2"
	"testing"

	"utxod/wire"
)

// coinSet is a model coin set: what the lazy record reads added coins back
// from.
type coinSet map[Outpoint]Coin

func (s coinSet) Coin(op Outpoint) (Coin, bool, error) {
	c, ok := s[op]
	return c, ok, nil
}

// randomChanges returns n changes to set, applied to it as they are made,
// in the set's order: a removal removes the coin the set holds, and an
// insertion at an outpoint in use removes its coin first (a BIP30
// overwrite). Coins come from a small domain, so removed coins are often
// added back identical (a reorg) and sometimes with other bytes. As in a
// block's Delta, an outpoint added is not touched again in the same
// call (its removals, which are recorded first, came first).
func randomChanges(rng *rand.Rand, set coinSet, pool []Outpoint, n int) (removed, added []Entry) {
	fresh := map[Outpoint]bool{}
	for ; n > 0; n-- {
		op := pool[rng.IntN(len(pool))]
		if fresh[op] {
			continue
		}
		old, in := set[op]
		if in && rng.IntN(3) > 0 {
			removed = append(removed, Entry{Outpoint: op, Coin: old})
			delete(set, op)
			continue
		}
		c := Coin{Value: int64(rng.IntN(3)), Height: uint32(rng.IntN(2)), Script: []byte{0x51}}
		if in {
			removed = append(removed, Entry{Outpoint: op, Coin: old})
		}
		set[op] = c
		fresh[op] = true
		added = append(added, Entry{Outpoint: op, Coin: c})
	}
	return removed, added
}

// TestLazyMuHashMatchesDirect replays random insertions and removals —
// cancelling pairs, coins added back identical or with other bytes,
// overwrites — through the lazy record and directly through MuHash3072,
// materialising at random points, and requires the same digest.
func TestLazyMuHashMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	pool := randomOutpoints(rng, 128)
	for round := 0; round < 20; round++ {
		lazy := NewLazyMuHash()
		set := coinSet{}
		var direct, got MuHash3072
		for n := 0; n < 2000; n++ {
			// One change at a time, recorded after the set applied it.
			removed, added := randomChanges(rng, set, pool, 1)
			for _, e := range removed {
				lazy.remove(e.Outpoint, e.Coin)
				direct.RemoveCoin(e.Outpoint, e.Coin)
			}
			for _, e := range added {
				lazy.insert(e.Outpoint, e.Coin)
				direct.InsertCoin(e.Outpoint, e.Coin)
			}
			if rng.IntN(500) == 0 {
				if err := lazy.Materialize(&got, set); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := lazy.Materialize(&got, set); err != nil {
			t.Fatal(err)
		}
		checkDigest(t, round, &got, &direct, set)
	}
}

// checkDigest requires the lazy record's digest to equal the changes applied
// directly and the final set's own digest.
func checkDigest(t *testing.T, round int, got, direct *MuHash3072, set coinSet) {
	t.Helper()
	if got.Finalize() != direct.Finalize() {
		t.Fatalf("round %d: lazy %x, direct %x", round, got.Finalize(), direct.Finalize())
	}
	var whole MuHash3072
	for op, c := range set {
		whole.InsertCoin(op, c)
	}
	if got.Finalize() != whole.Finalize() {
		t.Fatalf("round %d: lazy %x, the set's %x", round, got.Finalize(), whole.Finalize())
	}
}

// TestLazyMuHashMissingCoin: an added coin the set no longer holds (a store
// that lost it) fails the materialisation and leaves digest and record as
// they were, so a later read fails too instead of reporting a wrong digest.
func TestLazyMuHashMissingCoin(t *testing.T) {
	lazy := NewLazyMuHash()
	ops := randomOutpoints(rand.New(rand.NewPCG(4, 4)), 2)
	c := Coin{Value: 5, Script: []byte{0x51}}
	lazy.insert(ops[0], c)
	lazy.insert(ops[1], c)
	var m MuHash3072
	before := m.Finalize()
	set := coinSet{ops[0]: c}
	for range 2 {
		if err := lazy.Materialize(&m, set); !errors.Is(err, ErrStats) {
			t.Fatalf("materialize without the coin: %v, want ErrStats", err)
		}
		if m.Finalize() != before || lazy.pending() != 2 {
			t.Fatalf("a failed materialisation changed the digest or the record (pending %d)", lazy.pending())
		}
	}
	set[ops[1]] = c
	if err := lazy.Materialize(&m, set); err != nil {
		t.Fatal(err)
	}
	var direct MuHash3072
	direct.InsertCoin(ops[0], c)
	direct.InsertCoin(ops[1], c)
	if m.Finalize() != direct.Finalize() {
		t.Fatal("digest after the coin came back differs")
	}
}

// chainBlock is one block's delta in TestLazyMuHashWindowsMatchDirect.
type chainBlock struct{ spent, overwritten, created []Entry }

// txOutputs is the number of outputs of the model transaction txid (1–3).
func txOutputs(txid wire.Hash) uint32 { return 1 + uint32(txid[0])%3 }

// randomBlock makes a block at height that spends coins of set and makes
// transactions of pool — new ones, ones made again once every earlier
// output is spent, and now and then over unspent outputs (a BIP30
// exception, which overwrites them) — and applies it to set. Like a
// Delta, spent and overwritten coins were in the set before the block,
// a transaction is made at most once per block, and its outputs are
// consecutive and in index order.
func randomBlock(rng *rand.Rand, set coinSet, pool []wire.Hash, height uint32) chainBlock {
	var b chainBlock
	for n := rng.IntN(30); n > 0; n-- {
		txid := pool[rng.IntN(len(pool))]
		op := Outpoint{Hash: txid, Index: uint32(rng.IntN(int(txOutputs(txid))))}
		if c, ok := set[op]; ok {
			b.spent = append(b.spent, Entry{Outpoint: op, Coin: c})
			delete(set, op)
		}
	}
	made := map[wire.Hash]bool{}
	for n := rng.IntN(12); n > 0; n-- {
		txid := pool[rng.IntN(len(pool))]
		if made[txid] {
			continue
		}
		var live []Entry
		for i := range txOutputs(txid) {
			op := Outpoint{Hash: txid, Index: i}
			if c, ok := set[op]; ok {
				live = append(live, Entry{Outpoint: op, Coin: c})
			}
		}
		if len(live) > 0 && rng.IntN(8) > 0 {
			continue // BIP30
		}
		made[txid] = true
		b.overwritten = append(b.overwritten, live...)
		for i := range txOutputs(txid) {
			op := Outpoint{Hash: txid, Index: i}
			c := Coin{Value: int64(rng.IntN(1000)), Height: height, Coinbase: rng.IntN(5) == 0, Script: []byte{0x51, byte(rng.IntN(4))}}
			set[op] = c
			b.created = append(b.created, Entry{Outpoint: op, Coin: c})
		}
	}
	return b
}

// txCoinSet is a coinSet that also answers TxCoinsView.
type txCoinSet struct{ coinSet }

func (s txCoinSet) AppendTxCoins(dst []IndexedCoin, txid wire.Hash) ([]IndexedCoin, error) {
	for i := range txOutputs(txid) {
		if c, ok := s.coinSet[Outpoint{Hash: txid, Index: i}]; ok {
			dst = append(dst, IndexedCoin{Index: i, Coin: c})
		}
	}
	return dst, nil
}

// concurrentTxCoinSet is a txCoinSet that also answers
// ConcurrentTxCoinsView (a map read by several goroutines at once).
type concurrentTxCoinSet struct{ txCoinSet }

func (s concurrentTxCoinSet) AppendTxCoinsArena(dst []IndexedCoin, arena []byte, txid wire.Hash) ([]IndexedCoin, []byte, error) {
	for i := range txOutputs(txid) {
		if c, ok := s.coinSet[Outpoint{Hash: txid, Index: i}]; ok {
			start := len(arena)
			arena = append(arena, c.Script...)
			c.Script = arena[start:len(arena):len(arena)]
			dst = append(dst, IndexedCoin{Index: i, Coin: c})
		}
	}
	return dst, arena, nil
}

// TestLazyMuHashWindowsMatchDirect runs random chains — spends,
// transactions of one to three outputs, overwrites, txids made again, reorgs of up to three blocks — through
// the chainstate's recording protocol (windows kept by height for connects,
// in maps for disconnects, materialised around them), on the recording
// goroutine or in place at random, materialising at random points, and
// requires the digest of the same changes applied directly, and the set's
// own digest.
func TestLazyMuHashWindowsMatchDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var pool []wire.Hash
	for _, op := range randomOutpoints(rng, 150) {
		pool = append(pool, op.Hash)
	}
	for round := 0; round < 12; round++ {
		lazy := NewLazyMuHash()
		set := coinSet{}
		// A third of the rounds read transactions back through
		// TxCoinsView, a third through ConcurrentTxCoinsView on
		// three goroutines.
		var view View = set
		switch round % 3 {
		case 1:
			view = txCoinSet{set}
		case 2:
			view = concurrentTxCoinSet{txCoinSet{set}}
			lazy.workers = 3
		}
		var direct, got MuHash3072
		var chain []chainBlock
		record := lazy.RecordNow
		materialize := func() {
			if err := lazy.Materialize(&got, view); err != nil {
				t.Fatal(err)
			}
		}
		for blk := 0; blk < 400; blk++ {
			if len(chain) > 0 && rng.IntN(12) == 0 {
				materialize()
				for k := 1 + rng.IntN(min(3, len(chain))); k > 0; k-- {
					b := chain[len(chain)-1]
					chain = chain[:len(chain)-1]
					// A coin a later block overwrote is gone (Core's
					// DisconnectBlock calls that unclean and goes on).
					var created []Entry
					for _, e := range b.created {
						if c, ok := set[e.Outpoint]; ok && c.Height == e.Height && c.Value == e.Value {
							created = append(created, e)
							delete(set, e.Outpoint)
							direct.RemoveCoin(e.Outpoint, e.Coin)
						}
					}
					for _, e := range b.spent {
						set[e.Outpoint] = e.Coin
						direct.InsertCoin(e.Outpoint, e.Coin)
					}
					w, err := lazy.DisconnectWindow()
					if err != nil {
						t.Fatal(err)
					}
					record(w, [][]Entry{created}, [][]Entry{b.spent})
				}
				materialize()
			}
			parent := uint32(len(chain))
			b := randomBlock(rng, set, pool, parent+1)
			chain = append(chain, b)
			for _, e := range b.spent {
				direct.RemoveCoin(e.Outpoint, e.Coin)
			}
			for _, e := range b.overwritten {
				direct.RemoveCoin(e.Outpoint, e.Coin)
			}
			for _, e := range b.created {
				direct.InsertCoin(e.Outpoint, e.Coin)
			}
			record(lazy.ConnectWindow(parent), [][]Entry{b.spent, b.overwritten}, [][]Entry{b.created})
			if rng.IntN(40) == 0 {
				materialize()
			}
		}
		materialize()
		checkDigest(t, round, &got, &direct, set)
	}
}

// TestLazyMuHashDisconnectNeedsOwnWindow: a disconnect is refused in a
// window kept by height (its coins of any height would be mistaken for
// ones that were there before).
func TestLazyMuHashDisconnectNeedsOwnWindow(t *testing.T) {
	lazy := NewLazyMuHash()
	lazy.ConnectWindow(5)
	if _, err := lazy.DisconnectWindow(); !errors.Is(err, ErrStats) {
		t.Fatalf("disconnect in a Window by height: %v, want ErrStats", err)
	}
	var m MuHash3072
	if err := lazy.Materialize(&m, coinSet{}); err != nil {
		t.Fatal(err)
	}
	if _, err := lazy.DisconnectWindow(); err != nil {
		t.Fatalf("disconnect after the materialisation: %v", err)
	}
}

// randomOutpoints returns n outpoints with random txids and indexes 0–2.
func randomOutpoints(rng *rand.Rand, n int) []Outpoint {
	pool := make([]Outpoint, n)
	for i := range pool {
		for j := range pool[i].Hash {
			pool[i].Hash[j] = byte(rng.Uint32())
		}
		pool[i].Index = uint32(rng.IntN(3))
	}
	return pool
}

// TestLazyMuHashBoundCountsRecordNow: changes recorded count toward the
// bound that triggers a materialisation between flushes (without it the
// record grows until the next flush).
func TestLazyMuHashBoundCountsRecordNow(t *testing.T) {
	lazy := NewLazyMuHash()
	ops := randomOutpoints(rand.New(rand.NewPCG(1, 2)), 3)
	var added []Entry
	for _, op := range ops {
		added = append(added, Entry{Outpoint: op, Coin: Coin{Value: 1, Height: 1, Script: []byte{0x51}}})
	}
	lazy.RecordNow(lazy.ConnectWindow(0), nil, [][]Entry{added})
	if lazy.pending() != 3 {
		t.Fatalf("pending %d after recording 3 coins", lazy.pending())
	}
	var m MuHash3072
	if err := lazy.Materialize(&m, coinSet{ops[0]: added[0].Coin, ops[1]: added[1].Coin, ops[2]: added[2].Coin}); err != nil {
		t.Fatal(err)
	}
	if lazy.pending() != 0 {
		t.Fatal("the bound survived the materialisation")
	}
}
