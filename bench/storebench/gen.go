// Package storebench measures the chainstate's storage layer (bench/results/storage.md): a cheap generator
// of valid regtest chains whose UTXO set grows to millions of coins, and the measurement driver behind
// `go run ./bench/cmd/storebench` (connect, sample, read, size).
//
// # Generated chains
//
// Every output is spendable without a signature, so generation costs hashing only and an import measures
// the store, not script verification:
//
//   - "wpkh-like": OP_2 <20 random bytes> (22 bytes, the size of P2WPKH). A witness program of an unknown
//     version: under consensus rules anyone can spend it with an empty scriptSig and an empty witness
//     (SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM is policy, not consensus).
//   - "tr-like": OP_2 <32 random bytes> (34 bytes, the size of P2TR and P2WSH), spent the same way.
//   - "sh-like": P2SH of the redeem script <8-byte nonce> OP_DROP OP_TRUE (23 bytes, compressed to 21 like
//     P2PKH and P2SH); the scriptSig pushes the 11-byte redeem script. No sigops anywhere.
//
// Program bytes and nonces are random, so the stores cannot compress records better than real ones. The
// transactions are legacy-serialised (no witness data, no commitment needed). Shape per transaction: 1
// input (60 %), 2 (25 %) or 3–5 (15 %); 1 output (10 %), 2 (65 %) or 3–20 (25 %); inputs are drawn half from
// the 10,000 most recently created coins and half uniformly from the whole set (uniform spends are the
// cache's worst case); coins created earlier in the same block may be spent. Values split the inputs'
// sum at random (no fees). Blocks 1–100 hold only their coinbase (maturity), later blocks TxsPerBlock
// transactions (≈ 550 kB, weight ≈ 2.2 M). The UTXO set grows by ≈ 6,400 coins per block; 10^7 coins take
// 1,652 blocks (902 MB, 51 s to generate on 2 vCPU).
package storebench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"time"

	"github.com/btcsuite/btcd/chainhash/v2"
	btcwire "github.com/btcsuite/btcd/wire/v2"

	"utxod/merkle"
	"utxod/params"
	"utxod/testkit/blockgen"
	"utxod/wire"
)

// Config configures Generate. One of TargetUTXOs, TargetOutputs or Blocks must be positive; generation
// stops at the first block after which any positive target is reached.
type Config struct {
	Seed          uint64
	TargetUTXOs   int64 // UTXO set size at the tip
	TargetOutputs int64 // outputs created (coinbases included)
	Blocks        int   // height
	TxsPerBlock   int   // default 2500
	// Progress, when set, is called after each block.
	Progress func(s Summary)
}

// Summary describes a generated chain.
type Summary struct {
	Blocks  int       `json:"blocks"` // height of the tip
	Tip     wire.Hash `json:"tip"`
	Txs     int64     `json:"txs"`     // coinbases included
	Inputs  int64     `json:"inputs"`  // non-coinbase
	Outputs int64     `json:"outputs"` // all created
	UTXOs   int64     `json:"utxos"`   // at the tip
	Bytes   int64     `json:"bytes"`   // file size, framing included
	Seconds float64   `json:"seconds"`
}

const (
	kindWPKH = iota // OP_2 <20>
	kindTR          // OP_2 <32>
	kindSH          // P2SH(<nonce8> OP_DROP OP_TRUE)
)

type coin struct {
	txid  wire.Hash
	vout  uint32
	kind  uint8
	value int64
	nonce uint64 // sh-like only
}

const (
	maturity     = 100
	recentWindow = 10_000
)

// Generate writes a chain in Core's block-file framing (regtest magic) to w.
func Generate(cfg Config, w io.Writer) (Summary, error) {
	if cfg.TargetUTXOs <= 0 && cfg.TargetOutputs <= 0 && cfg.Blocks <= 0 {
		return Summary{}, errors.New("storebench: no target")
	}
	if cfg.TxsPerBlock <= 0 {
		cfg.TxsPerBlock = 2500
	}
	start := time.Now()
	p := params.RegTest()
	g := &gen{p: p, rng: rand.New(rand.NewPCG(cfg.Seed, 0x73746f7265)), bw: bufio.NewWriterSize(w, 1<<20)}
	var s Summary
	prev := p.GenesisHash
	t := int64(1296688602) // regtest genesis time
	var coinbases []coin   // immature, by height-1
	for h := int32(1); ; h++ {
		t += 600
		txs := [][]byte{}
		var ids []wire.Hash
		// Coinbase: BIP34 height, one wpkh-like output.
		cbScript := g.script(kindWPKH, 0)
		cb := blockgen.NewCoinbase(h, p.Subsidy(h), cbScript)
		cbRaw := blockgen.SerializeTx(cb)
		cbID := blockgen.TxID(cb)
		txs, ids = append(txs, cbRaw), append(ids, cbID)
		coinbases = append(coinbases, coin{txid: cbID, kind: kindWPKH, value: p.Subsidy(h)})
		s.Outputs++
		g.utxos++
		if h > maturity {
			g.pool = append(g.pool, coinbases[h-1-maturity])
			for range cfg.TxsPerBlock {
				raw, id, ins, outs := g.tx()
				if raw == nil {
					break
				}
				txs, ids = append(txs, raw), append(ids, id)
				s.Inputs += int64(ins)
				s.Outputs += int64(outs)
			}
		}
		s.Txs += int64(len(txs))
		root, _ := merkle.Root(ids)
		hdr := btcwire.BlockHeader{Version: blockgen.DefaultVersion, PrevBlock: chainhash.Hash(prev), MerkleRoot: chainhash.Hash(root),
			Timestamp: time.Unix(t, 0), Bits: p.PowLimitBits}
		if err := blockgen.Solve(&hdr); err != nil {
			return s, err
		}
		var hb bytes.Buffer
		if err := hdr.Serialize(&hb); err != nil {
			return s, err
		}
		size := hb.Len() + wire.CompactSizeLen(uint64(len(txs)))
		for _, tx := range txs {
			size += len(tx)
		}
		var frame [8]byte
		copy(frame[:4], p.Magic[:])
		binary.LittleEndian.PutUint32(frame[4:], uint32(size))
		g.bw.Write(frame[:])
		g.bw.Write(hb.Bytes())
		g.bw.Write(wire.AppendCompactSize(nil, uint64(len(txs))))
		for _, tx := range txs {
			g.bw.Write(tx)
		}
		s.Bytes += int64(8 + size)
		prev = wire.Hash(hdr.BlockHash())
		s.Blocks, s.Tip, s.UTXOs = int(h), prev, g.utxos
		if cfg.Progress != nil {
			cfg.Progress(s)
		}
		if (cfg.TargetUTXOs > 0 && s.UTXOs >= cfg.TargetUTXOs) || (cfg.TargetOutputs > 0 && s.Outputs >= cfg.TargetOutputs) ||
			(cfg.Blocks > 0 && s.Blocks >= cfg.Blocks) {
			break
		}
	}
	s.Seconds = time.Since(start).Seconds()
	return s, g.bw.Flush()
}

type gen struct {
	p     *params.Params
	rng   *rand.Rand
	bw    *bufio.Writer
	pool  []coin // spendable coins
	utxos int64  // UTXO set size (pool + immature coinbases)
	nonce uint64
	buf   []byte
	prog  [32]byte
}

// script returns the output script of a new coin of kind (nonce for sh-like).
func (g *gen) script(kind uint8, nonce uint64) []byte {
	switch kind {
	case kindWPKH, kindTR:
		n := 20
		if kind == kindTR {
			n = 32
		}
		for i := 0; i < n; i += 8 {
			binary.LittleEndian.PutUint64(g.prog[i:min(i+8, 32)], g.rng.Uint64())
		}
		return append([]byte{0x52, byte(n)}, g.prog[:n]...)
	default:
		h := blockgen.Hash160(redeem(nonce))
		return append(append([]byte{0xa9, 0x14}, h...), 0x87)
	}
}

func redeem(nonce uint64) []byte {
	r := make([]byte, 11)
	r[0] = 8
	binary.LittleEndian.PutUint64(r[1:9], nonce)
	r[9], r[10] = 0x75, 0x51 // OP_DROP OP_TRUE
	return r
}

// pick removes and returns a random spendable coin.
func (g *gen) pick() coin {
	n := len(g.pool)
	var i int
	if g.rng.IntN(2) == 0 && n > recentWindow {
		i = n - 1 - g.rng.IntN(recentWindow)
	} else {
		i = g.rng.IntN(n)
	}
	c := g.pool[i]
	g.pool[i] = g.pool[n-1]
	g.pool = g.pool[:n-1]
	return c
}

// tx builds one transaction spending pool coins; nil when the pool is empty.
func (g *gen) tx() (raw []byte, id wire.Hash, nIn, nOut int) {
	if len(g.pool) == 0 {
		return nil, id, 0, 0
	}
	switch r := g.rng.IntN(100); {
	case r < 60:
		nIn = 1
	case r < 85:
		nIn = 2
	default:
		nIn = 3 + g.rng.IntN(3)
	}
	nIn = min(nIn, len(g.pool))
	switch r := g.rng.IntN(100); {
	case r < 10:
		nOut = 1
	case r < 75:
		nOut = 2
	default:
		nOut = 3 + g.rng.IntN(18)
	}
	b := g.buf[:0]
	b = binary.LittleEndian.AppendUint32(b, 2)
	b = wire.AppendCompactSize(b, uint64(nIn))
	var sum int64
	for range nIn {
		c := g.pick()
		sum += c.value
		b = append(b, c.txid[:]...)
		b = binary.LittleEndian.AppendUint32(b, c.vout)
		if c.kind == kindSH {
			r := redeem(c.nonce)
			b = append(b, byte(len(r)+1), byte(len(r)))
			b = append(b, r...)
		} else {
			b = append(b, 0)
		}
		b = binary.LittleEndian.AppendUint32(b, 0xffffffff)
	}
	b = wire.AppendCompactSize(b, uint64(nOut))
	// Random split of sum.
	var weights [20]uint64
	var wsum uint64
	for i := range nOut {
		weights[i] = 1 + uint64(g.rng.IntN(1000))
		wsum += weights[i]
	}
	created := make([]coin, nOut)
	left := sum
	for i := range nOut {
		v := left
		if i < nOut-1 {
			v = int64(uint64(sum) * weights[i] / wsum)
			left -= v
		}
		var kind uint8
		switch r := g.rng.IntN(100); {
		case r < 45:
			kind = kindWPKH
		case r < 75:
			kind = kindSH
		default:
			kind = kindTR
		}
		var nonce uint64
		if kind == kindSH {
			g.nonce++
			nonce = g.nonce
		}
		s := g.script(kind, nonce)
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
		b = wire.AppendCompactSize(b, uint64(len(s)))
		b = append(b, s...)
		created[i] = coin{vout: uint32(i), kind: kind, value: v, nonce: nonce}
	}
	b = binary.LittleEndian.AppendUint32(b, 0)
	g.buf = b
	id = wire.DoubleSHA256(b)
	for i := range created {
		created[i].txid = id
	}
	g.pool = append(g.pool, created...)
	g.utxos += int64(nOut - nIn)
	return bytes.Clone(b), id, nIn, nOut
}
