package mainnetgen

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"math/big"
	"os"
	"path/filepath"

	"utxod/params"
	"utxod/wire"
)

// HeaderVersion is the version of the generated headers (BIP9 top bits; at
// least 4, as BIP34, BIP66 and BIP65 require from height 1 on regtest).
const HeaderVersion = 0x20000000

// HeadersEndTime is the timestamp of the base block: 2025-01-01 UTC, in the
// past, so that no header is "time-too-new".
const HeadersEndTime = 1_735_689_600

// writeHeaders writes the regtest header chain from height 1 to height as
// raw 80-byte headers and returns the base block's hash. Every header has
// regtest's proof-of-work limit as nBits (regtest never retargets), a nonce
// ground until the hash meets it, the previous header's hash, a timestamp
// increasing by a fixed step from genesis (so above the median time past)
// and a merkle root derived from the seed and the height.
func writeHeaders(path string, p *params.Params, height int32, seed uint64) (*File, wire.Hash, error) {
	genesis, err := wire.ParseHeader(p.GenesisBlock)
	if err != nil {
		return nil, wire.Hash{}, err
	}
	target := compactToBig(p.PowLimitBits)
	step := max(1, (HeadersEndTime-int64(genesis.Time))/int64(height))
	f, err := os.Create(path)
	if err != nil {
		return nil, wire.Hash{}, err
	}
	fh := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(f, fh), 1<<20)
	prev := p.GenesisHash
	var buf [wire.HeaderSize]byte
	var le [32]byte
	n := new(big.Int)
	for h := int32(1); h <= height; h++ {
		var m [8 + 4 + 16]byte
		binary.LittleEndian.PutUint64(m[:], seed)
		binary.LittleEndian.PutUint32(m[8:], uint32(h))
		copy(m[12:], "mainnetgen merkl")
		hdr := wire.Header{Version: HeaderVersion, PrevBlock: prev, MerkleRoot: wire.DoubleSHA256(m[:]),
			Time: uint32(int64(genesis.Time) + int64(h)*step), Bits: p.PowLimitBits}
		for {
			hash := hdr.BlockHash()
			if n.SetBytes(reverse(le[:], hash[:])).Cmp(target) <= 0 {
				prev = hash
				break
			}
			hdr.Nonce++
		}
		if _, err := w.Write(hdr.AppendTo(buf[:0])); err != nil {
			f.Close()
			return nil, wire.Hash{}, err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, wire.Hash{}, err
	}
	if err := f.Close(); err != nil {
		return nil, wire.Hash{}, err
	}
	return &File{Name: filepath.Base(path), Bytes: int64(height) * wire.HeaderSize, SHA256: hex.EncodeToString(fh.Sum(nil)), Count: uint64(height)}, prev, nil
}

// compactToBig decodes nBits (positive targets only).
func compactToBig(c uint32) *big.Int {
	mant := big.NewInt(int64(c & 0x007fffff))
	exp := int(c >> 24)
	if exp <= 3 {
		return mant.Rsh(mant, uint(8*(3-exp)))
	}
	return mant.Lsh(mant, uint(8*(exp-3)))
}
