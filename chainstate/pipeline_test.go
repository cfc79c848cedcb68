package chainstate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/params"
	"utxod/script"
	"utxod/store"
	"utxod/testkit/blockgen"
	"utxod/testkit/chaingen"
	"utxod/validate"
	"utxod/wire"
)

// streamAll feeds raws through ProcessStream and returns every outcome.
func streamAll(t testing.TB, cs *Chainstate, cfg StreamConfig, raws [][]byte) []Outcome {
	t.Helper()
	i := 0
	var outs []Outcome
	err := cs.ProcessStream(cfg, func() ([]byte, int64, error) {
		if i == len(raws) {
			return nil, 0, io.EOF
		}
		i++
		return raws[i-1], int64(i - 1), nil
	}, func(o Outcome) bool {
		outs = append(outs, o)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

// verdict is what a caller learns about one block.
func verdict(res Result, err error) string {
	if err != nil {
		return fmt.Sprintf("%s height %d rejected %s", res.Hash, res.Height, validate.Reason(err))
	}
	return fmt.Sprintf("%s height %d %s", res.Hash, res.Height, res.Status)
}

// TestStreamMatchesProcessBlock: a pipelined stream (any depth, on memory
// and on every persistent store with a tiny cache so flushes interleave,
// with reorg branches) gives every block the verdict ProcessBlock gives it
// and ends at the same chainstate.
func TestStreamMatchesProcessBlock(t *testing.T) {
	for _, profile := range []string{chaingen.ProfileEarly, chaingen.ProfileModern} {
		raws := generated(t, profile, 160, 3)
		ref := newRegtest(t, store.NewMem())
		var want []string
		for _, raw := range raws {
			res, err := ref.ProcessBlock(raw)
			want = append(want, verdict(res, err))
		}
		wantInfo := infoJSON(t, ref)
		check := func(t *testing.T, cs *Chainstate, depth int, prefetch ...int) {
			cfg := StreamConfig{Depth: depth, StopHeight: -1}
			if len(prefetch) > 0 {
				cfg.Prefetch = prefetch[0]
			}
			outs := streamAll(t, cs, cfg, raws)
			if len(outs) != len(raws) {
				t.Fatalf("%d outcomes for %d blocks", len(outs), len(raws))
			}
			for i, o := range outs {
				if o.Tag != int64(i) {
					t.Fatalf("outcome %d has tag %d", i, o.Tag)
				}
				if got := verdict(o.Result, o.Err); got != want[i] {
					t.Fatalf("block %d: stream says %q, ProcessBlock %q", i, got, want[i])
				}
			}
			if got := infoJSON(t, cs); got != wantInfo {
				t.Fatalf("stream:\n%s\nProcessBlock:\n%s", got, wantInfo)
			}
		}
		for _, depth := range []int{0, 1, 8} {
			t.Run(fmt.Sprintf("%s/memory/depth%d", profile, depth), func(t *testing.T) {
				check(t, newRegtest(t, store.NewMem()), depth)
			})
		}
		for _, depth := range []int{0, 8} {
			t.Run(fmt.Sprintf("%s/memory/depth%d/prefetch3", profile, depth), func(t *testing.T) {
				check(t, newRegtest(t, store.NewMem()), depth, 3)
			})
		}
		for _, name := range storeNames {
			t.Run(fmt.Sprintf("%s/%s/depth8", profile, name), func(t *testing.T) {
				kv := openKV(t, name, filepath.Join(t.TempDir(), name))
				defer kv.Close()
				check(t, newRegtest(t, openKVStore(t, kv, 64<<10)), 8)
			})
			t.Run(fmt.Sprintf("%s/%s/prefetch2", profile, name), func(t *testing.T) {
				kv := openKV(t, name, filepath.Join(t.TempDir(), name))
				defer kv.Close()
				check(t, newRegtest(t, openKVStore(t, kv, 64<<10)), 0, 2)
			})
		}
	}
}

// slowEngine delays each input of one transaction in its verification
// (not in Prepare, which runs on the connecting goroutine as the check is
// filled) so the blocks after it connect while its scripts are pending.
type slowEngine struct {
	script.Engine
	slow wire.Hash
}

func (e slowEngine) Prepare(tx *wire.Tx, prevouts []wire.TxOut) (script.TxVerifier, error) {
	v, err := e.Engine.Prepare(tx, prevouts)
	if err == nil && tx.TxID == e.slow {
		v = slowVerifier{v}
	}
	return v, err
}

type slowVerifier struct{ script.TxVerifier }

func (v slowVerifier) VerifyInput(i int, flags script.Flags) error {
	time.Sleep(200 * time.Millisecond)
	return v.TxVerifier.VerifyInput(i, flags)
}

// witnessSpend finds the first transaction of b with a witness signature.
func witnessSpend(b *btcwire.MsgBlock) (tx, in int) {
	for i, tx := range b.Transactions[1:] {
		for j, in := range tx.TxIn {
			if len(in.Witness) > 0 && len(in.Witness[0]) > 20 {
				return i + 1, j
			}
		}
	}
	return -1, -1
}

// corruptChain returns raws with one witness signature of block k broken
// (so txids, and the later blocks' spends, stay valid); k gets a new
// witness commitment and merkle root, and k and every later block are
// re-mined on top of each other. It also returns the broken transaction's
// txid.
func corruptChain(t *testing.T, raws [][]byte, k int) ([][]byte, wire.Hash) {
	t.Helper()
	out := append([][]byte(nil), raws[:k]...)
	var prev btcwire.BlockHeader
	var bad wire.Hash
	for i := k; i < len(raws); i++ {
		var b btcwire.MsgBlock
		if err := b.Deserialize(bytes.NewReader(raws[i])); err != nil {
			t.Fatal(err)
		}
		if i == k {
			ti, ii := witnessSpend(&b)
			if ti < 0 {
				t.Fatalf("block %d has no witness signature", k)
			}
			b.Transactions[ti].TxIn[ii].Witness[0][10] ^= 0x01 // inside the DER signature's r
			bad = blockgen.TxID(b.Transactions[ti])
			blockgen.AddWitnessCommitment(&b)
		} else {
			b.Header.PrevBlock = prev.BlockHash()
		}
		blockgen.UpdateMerkleRoot(&b)
		if err := blockgen.Solve(&b.Header); err != nil {
			t.Fatal(err)
		}
		prev = b.Header
		out = append(out, blockgen.Serialize(&b))
	}
	return out, bad
}

// brokenChain is a generated chain and a copy whose block k has one bad
// witness signature (in transaction badTx), the blocks after it re-mined
// on top of it.
func brokenChain(t *testing.T) (raws, broken [][]byte, k int, badTx wire.Hash) {
	t.Helper()
	raws = generated(t, chaingen.ProfileModern, 140, 0)
	k = len(raws) - 12
	for ; k > 0; k-- {
		var b btcwire.MsgBlock
		if err := b.Deserialize(bytes.NewReader(raws[k])); err != nil {
			t.Fatal(err)
		}
		if ti, _ := witnessSpend(&b); ti > 0 {
			break
		}
	}
	broken, badTx = corruptChain(t, raws, k)
	return raws, broken, k, badTx
}

// TestStreamDepthZeroIsSynchronous: Depth 0 means no cross-block
// pipelining, even with a block whose scripts are slow and fail: the block
// is undone alone (no later block was connected on it, none is rolled
// back) and every verdict is ProcessBlock's, the descendants' included.
func TestStreamDepthZeroIsSynchronous(t *testing.T) {
	_, broken, _, badTx := brokenChain(t)
	p := params.RegTest()
	ref := newRegtest(t, store.NewMem())
	var want []string
	for _, raw := range broken {
		res, err := ref.ProcessBlock(raw)
		want = append(want, verdict(res, err))
	}
	v := validate.New(p, slowEngine{Engine: script.NewEngine(), slow: badTx}, nil)
	v.Workers = 2
	cs, err := New(Config{Params: p, Validator: v, Store: store.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	outs := streamAll(t, cs, StreamConfig{StopHeight: -1}, broken)
	for i, o := range outs {
		if got := verdict(o.Result, o.Err); got != want[i] {
			t.Fatalf("block %d: stream says %q, ProcessBlock %q", i, got, want[i])
		}
	}
	if cs.rolledBack != 0 {
		t.Fatalf("%d blocks rolled back with pipelining off", cs.rolledBack)
	}
	if got, want := infoJSON(t, cs), infoJSON(t, ref); got != want {
		t.Fatalf("stream:\n%s\nProcessBlock:\n%s", got, want)
	}
}

// TestStreamScriptFailureRollsBack: block k's scripts fail while the
// blocks after it are already connected on top of it. The stream reports
// k with the reason ProcessBlock gives, every later block as "bad-prevblk",
// ends exactly where a synchronous import of blocks 0..k-1 ends, and the
// valid chain can still be connected afterwards.
func TestStreamScriptFailureRollsBack(t *testing.T) {
	raws, broken, k, badTx := brokenChain(t)

	ref := newRegtest(t, store.NewMem())
	for _, raw := range raws[:k] {
		if _, err := ref.ProcessBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	wantInfo := infoJSON(t, ref)
	_, err := ref.ProcessBlock(broken[k])
	wantReason := validate.Reason(err)
	if !strings.Contains(wantReason, "script-verify-flag-failed") {
		t.Fatalf("ProcessBlock of the broken block: %v", err)
	}

	for _, name := range append([]string{"memory"}, storeNames...) {
		t.Run(name, func(t *testing.T) {
			var st store.Store = store.NewMem()
			if name != "memory" {
				kv := openKV(t, name, filepath.Join(t.TempDir(), name))
				defer kv.Close()
				st = openKVStore(t, kv, 1<<20)
			}
			p := params.RegTest()
			v := validate.New(p, slowEngine{Engine: script.NewEngine(), slow: badTx}, nil)
			v.Workers = 2
			cs, err := New(Config{Params: p, Validator: v, Store: st})
			if err != nil {
				t.Fatal(err)
			}
			outs := streamAll(t, cs, StreamConfig{Depth: 8, StopHeight: -1}, broken)
			if len(outs) != len(broken) {
				t.Fatalf("%d outcomes for %d blocks", len(outs), len(broken))
			}
			for i, o := range outs {
				switch r := validate.Reason(o.Err); {
				case i < k && o.Err != nil:
					t.Fatalf("block %d: %v", i, o.Err)
				case i == k && r != wantReason:
					t.Fatalf("broken block: %q, want %q", r, wantReason)
				case i > k && r != "bad-prevblk" && o.Result.Status != StatusOrphan:
					// Synchronously the first descendant is "bad-prevblk"
					// and is not indexed, so the next ones wait as
					// orphans; pipelined, descendants already connected
					// are marked failed with the broken block.
					t.Fatalf("block %d after the broken one: %v %s", i, o.Err, o.Result.Status)
				}
			}
			if cs.rolledBack == 0 {
				t.Fatal("the broken block's scripts were not pending when its descendants connected")
			}
			if got := infoJSON(t, cs); got != wantInfo {
				t.Fatalf("after the rollback:\n%s\nwant:\n%s", got, wantInfo)
			}
			checkScratchMuHash(t, cs)
			if n, ok := cs.Lookup(outs[k].Result.Hash); !ok || !n.Status.Invalid() {
				t.Fatal("the broken block is not marked invalid")
			}
			// The real chain still connects.
			outs = streamAll(t, cs, StreamConfig{Depth: 8, StopHeight: -1}, raws[k:])
			for _, o := range outs {
				if o.Err != nil {
					t.Fatal(o.Err)
				}
			}
			full := newRegtest(t, store.NewMem())
			for _, raw := range raws {
				if _, err := full.ProcessBlock(raw); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := infoJSON(t, cs), infoJSON(t, full); got != want {
				t.Fatalf("valid chain after the rollback:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestStreamStopHeight: the stream stops reading at StopHeight even with
// blocks pending, and emit returning false stops it too.
func TestStreamStopHeight(t *testing.T) {
	raws := generated(t, chaingen.ProfileEarly, 60, 0)
	cs := newRegtest(t, store.NewMem())
	outs := streamAll(t, cs, StreamConfig{Depth: 8, StopHeight: 25}, raws)
	if h := cs.Tip().Height; h != 25 {
		t.Fatalf("tip %d, want 25", h)
	}
	if last := outs[len(outs)-1]; last.TipHeight != 25 {
		t.Fatalf("last outcome at tip %d", last.TipHeight)
	}
	n := len(outs)
	err := cs.ProcessStream(StreamConfig{Depth: 8, StopHeight: -1}, func() ([]byte, int64, error) {
		n++
		return raws[n-1], 0, nil
	}, func(o Outcome) bool { return o.Result.Height < 30 })
	if err != nil {
		t.Fatal(err)
	}
	if h := cs.Tip().Height; h < 30 || h > 30+8 {
		t.Fatalf("stopped at %d", h)
	}
}

// TestStreamPrefetchBadBlocks: with the reading goroutine parsing and
// checking ahead, a block that does not parse, one whose merkle root is
// wrong (CheckBlock) and the blocks after them get ProcessBlock's
// verdicts, and the chainstate ends where ProcessBlock's does.
func TestStreamPrefetchBadBlocks(t *testing.T) {
	raws := generated(t, chaingen.ProfileEarly, 130, 0)
	bad := make([][]byte, 0, len(raws)+2)
	for i, raw := range raws {
		switch i {
		case 110:
			bad = append(bad, raw[:len(raw)-3]) // truncated: a parse error
		case 120:
			m := bytes.Clone(raw)
			m[36] ^= 1 // the merkle root: bad-txnmrklroot
			bad = append(bad, m)
		}
		bad = append(bad, raw)
	}
	ref := newRegtest(t, store.NewMem())
	var want []string
	for _, raw := range bad {
		res, err := ref.ProcessBlock(raw)
		want = append(want, verdict(res, err))
	}
	for _, prefetch := range []int{0, 1, 4} {
		t.Run(fmt.Sprintf("prefetch%d", prefetch), func(t *testing.T) {
			cs := newRegtest(t, store.NewMem())
			outs := streamAll(t, cs, StreamConfig{StopHeight: -1, Prefetch: prefetch}, bad)
			if len(outs) != len(bad) {
				t.Fatalf("%d outcomes for %d blocks", len(outs), len(bad))
			}
			for i, o := range outs {
				if i == 110 {
					// ProcessBlock returns no hash for a block it cannot
					// parse; a stream names the header's.
					if !errors.Is(o.Err, ErrParse) {
						t.Fatalf("truncated block: %v", o.Err)
					}
					continue
				}
				if got := verdict(o.Result, o.Err); got != want[i] {
					t.Fatalf("block %d: stream says %q, ProcessBlock %q", i, got, want[i])
				}
			}
			if validate.Reason(outs[121].Err) != "bad-txnmrklroot" {
				t.Fatalf("mutated block: %v", outs[121].Err)
			}
			if got, want := infoJSON(t, cs), infoJSON(t, ref); got != want {
				t.Fatalf("stream:\n%s\nProcessBlock:\n%s", got, want)
			}
		})
	}
}

// TestStreamPrefetchStopsReading: a stream that stops (StopHeight, emit
// false, next's error) returns with no call of next in flight.
func TestStreamPrefetchStopsReading(t *testing.T) {
	raws := generated(t, chaingen.ProfileEarly, 60, 0)
	cs := newRegtest(t, store.NewMem())
	var inNext atomic.Int32
	i := 0
	next := func() ([]byte, int64, error) {
		inNext.Add(1)
		defer inNext.Add(-1)
		time.Sleep(time.Millisecond)
		if i == 40 {
			return nil, 0, errors.New("disk on fire")
		}
		i++
		return raws[i-1], int64(i - 1), nil
	}
	if err := cs.ProcessStream(StreamConfig{StopHeight: 20, Prefetch: 4}, next, func(Outcome) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if inNext.Load() != 0 || cs.Tip().Height != 20 {
		t.Fatalf("after StopHeight: %d calls in flight, tip %d", inNext.Load(), cs.Tip().Height)
	}
	err := cs.ProcessStream(StreamConfig{StopHeight: -1, Prefetch: 4}, next, func(Outcome) bool { return true })
	if err == nil || err.Error() != "disk on fire" {
		t.Fatalf("next's error: %v", err)
	}
	if inNext.Load() != 0 {
		t.Fatal("a call of next in flight after ProcessStream returned")
	}
}

// TestStreamAssumedPrefetch: with AssumedPrefetch the reading goroutine
// reads ahead while blocks connect without their scripts and stops for
// good at the first block whose scripts are verified, without losing or
// reordering the blocks it had read: every block connects, to the digests
// of a one-by-one run, and after the switch a block is read only once the
// previous one's verdict is out.
func TestStreamAssumedPrefetch(t *testing.T) {
	raws, newCS, ref := avStream(t)
	cs := newCS()
	// Call i of next reads raws[i] (height i+1); ahead[i] says that
	// raws[i+1] was read before the verdict on raws[i] was out.
	var emitted atomic.Int64 // verdicts out
	ahead := make([]bool, len(raws)+1)
	i := 0
	err := cs.ProcessStream(StreamConfig{StopHeight: -1, AssumedPrefetch: 1}, func() ([]byte, int64, error) {
		if i > 0 {
			ahead[i-1] = emitted.Load() < int64(i)
		}
		if i == len(raws) {
			return nil, 0, io.EOF
		}
		i++
		return raws[i-1], int64(i - 1), nil
	}, func(o Outcome) bool {
		if o.Err != nil {
			t.Errorf("block %d: %v", o.Tag+1, o.Err)
			return false
		}
		if h := o.Result.Height; h > avBad-30 && h < avBad+30 {
			time.Sleep(time.Millisecond) // let a reading goroutine get ahead
		}
		emitted.Add(1)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := digestJSON(t, cs), digestJSON(t, ref); got != want || cs.Tip().Height != avTip {
		t.Fatalf("tip %d, stream:\n%s\none by one:\n%s", cs.Tip().Height, got, want)
	}
	readAhead := 0
	for h := avBad - 29; h < avBad; h++ {
		if ahead[h-1] {
			readAhead++
		}
	}
	if readAhead == 0 {
		t.Fatal("no block read ahead while scripts were assumed valid")
	}
	// Block avBad+1 is the first verified; the reader may hold one more.
	for h := avBad + 3; h < avBad+30; h++ {
		if ahead[h-1] {
			t.Fatalf("block %d read before block %d's verdict, after scripts were verified", h+1, h)
		}
	}
}

// TestStreamVerifiedDepth: OnVerified runs once, right after the first block
// whose scripts are verified (block avBad+1 of the assume-valid fixture),
// and the stream that pipelines from there on reaches the digests of
// connecting the blocks one by one.
func TestStreamVerifiedDepth(t *testing.T) {
	raws, newCS, ref := avStream(t)
	cs := newCS()
	read, calls, readAtCall, depthAtCall := 0, 0, 0, 0
	cfg := StreamConfig{StopHeight: -1, VerifiedDepth: 2}
	cfg.OnVerified = func() {
		calls++
		readAtCall, depthAtCall = read, cs.pipe.depth
	}
	err := cs.ProcessStream(cfg, func() ([]byte, int64, error) {
		if read == len(raws) {
			return nil, 0, io.EOF
		}
		read++
		return raws[read-1], int64(read - 1), nil
	}, func(o Outcome) bool {
		if o.Err != nil {
			t.Errorf("block %d: %v", o.Tag+1, o.Err)
			return false
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || readAtCall != avBad+1 || depthAtCall != 2 {
		t.Fatalf("OnVerified called %d times, after block %d was read, depth %d; want once, after block %d, depth 2", calls, readAtCall, depthAtCall, avBad+1)
	}
	if got, want := digestJSON(t, cs), digestJSON(t, ref); got != want || cs.Tip().Height != avTip {
		t.Fatalf("tip %d, stream:\n%s\none by one:\n%s", cs.Tip().Height, got, want)
	}
}

// avStream returns the blocks of the assume-valid fixture (heights 1 to
// avTip), a constructor of chainstates that know their headers and assume
// the tip valid, and one that connected the blocks one by one (the
// reference for a stream's digests).
func avStream(t *testing.T) (raws [][]byte, newCS func() *Chainstate, ref *Chainstate) {
	t.Helper()
	ch := avFixture(t, "sig")
	av := validate.AssumeValid{Block: ch.nodes[avTip].Hash}
	for _, n := range ch.nodes[1:] {
		raws = append(raws, n.Raw)
	}
	newCS = func() *Chainstate {
		cs := newAV(t, store.NewMem(), av)
		hs := headersOf(t, ch.nodes[1:])
		if hr := cs.AcceptHeaders(hs); hr.Added != len(hs) {
			t.Fatalf("headers: %+v", hr)
		}
		return cs
	}
	ref = newCS()
	for i, raw := range raws {
		if _, err := ref.ProcessBlock(raw); err != nil {
			t.Fatalf("block %d: %v", i+1, err)
		}
	}
	return raws, newCS, ref
}

// TestProcessBlockScriptFailureIsCoreOrder: on the one path at depth 0 a
// block whose scripts fail is refused as Core's ConnectBlock refuses it,
// before anything else connects: the orphans waiting for it stay held (not
// marked failed with it), nothing is rolled back, the digests are those of
// its parent, and the block data at the edge of the reorg window is kept
// (dropped only when a block's scripts pass).
func TestProcessBlockScriptFailureIsCoreOrder(t *testing.T) {
	raws, broken, k, _ := brokenChain(t)
	ref := newRegtest(t, store.NewMem())
	p := params.RegTest()
	cs, err := New(Config{Params: p, Validator: validate.New(p, script.NewEngine(), nil), Store: store.NewMem(), KeepBlocks: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range raws[:k] {
		for _, c := range []*Chainstate{ref, cs} {
			if _, err := c.ProcessBlock(raw); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, raw := range broken[k+1 : k+3] {
		if res, err := cs.ProcessBlock(raw); err != nil || res.Status != StatusOrphan {
			t.Fatalf("descendant before the broken block: %+v %v", res, err)
		}
	}
	tip := cs.Tip()
	edge, _ := cs.AtHeight(tip.Height + 1 - 4)
	res, err := cs.ProcessBlock(broken[k])
	if r := validate.Reason(err); !strings.Contains(r, "script-verify-flag-failed") || res.Status != "" {
		t.Fatalf("broken block: %+v %v", res, err)
	}
	if cs.rolledBack != 0 || cs.Tip().Hash != tip.Hash {
		t.Fatalf("rolled back %d, tip %d", cs.rolledBack, cs.Tip().Height)
	}
	if n, ok := cs.Lookup(res.Hash); !ok || !n.Status.Invalid() {
		t.Fatalf("broken block not marked invalid: %+v", n)
	}
	for _, raw := range broken[k+1 : k+3] {
		if n, ok := cs.Lookup(wire.DoubleSHA256(raw[:wire.HeaderSize])); !ok || !n.Orphan {
			t.Fatalf("a held descendant left the pool: %v %+v", ok, n)
		}
	}
	if n, _ := cs.Lookup(edge.Hash); !n.Status.Has(validate.StatusHaveData) {
		t.Fatalf("block %d at the window's edge lost its data", n.Height)
	}
	if got, want := infoJSON(t, cs), infoJSON(t, ref); got != want {
		t.Fatalf("after the refusal:\n%s\nwant:\n%s", got, want)
	}
	checkScratchMuHash(t, cs)
}
