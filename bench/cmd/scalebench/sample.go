package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"utxod/address"
	"utxod/params"
	"utxod/scripthash"
	"utxod/snapshot"
)

// sample is what the lookups ask for, drawn from the snapshot the datadir
// was loaded from: every step-th coin over the whole file, so the keys
// spread over the whole key space as the coins do (the file is in txid
// order).
type sample struct {
	net       *params.Params
	coins     uint64
	outpoints []string // /v1/utxos/{txid}/{vout}
	addresses []string // /api/address/{a}/utxo, or /api/scripthash/{h}/utxo for scripts without an address
	whale     []byte   // the script with the most coins
	whaleN    uint64   // its coins in the snapshot
}

// expectFile is the part of mainnetgen's expect.json read here.
type expectFile struct {
	Coins uint64 `json:"coins"`
	Shape struct {
		Whales []struct {
			Coins  uint64 `json:"coins"`
			Script string `json:"script"`
		} `json:"whales"`
	} `json:"shape"`
}

// readSample reads the snapshot once. With expect (mainnetgen's
// expect.json) its whale scripts are left out of the address sample (an
// Esplora /utxo of 10 k coins is refused past --utxos-limit) and the largest
// is the paging target; without it the script seen most often in the
// sample's address draws is (a weak whale, but one that exists).
func readSample(file, expect string, want int) (*sample, error) {
	whales := map[string]bool{}
	var s sample
	if expect != "" {
		b, err := os.ReadFile(expect)
		if err != nil {
			return nil, err
		}
		var e expectFile
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("%s: %w", expect, err)
		}
		for _, w := range e.Shape.Whales {
			sc, err := hex.DecodeString(w.Script)
			if err != nil {
				return nil, fmt.Errorf("%s: whale script: %w", expect, err)
			}
			whales[string(sc)] = true
			if w.Coins > s.whaleN {
				s.whale, s.whaleN = sc, w.Coins
			}
		}
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := snapshot.NewReader(f, nil)
	if err != nil {
		return nil, err
	}
	s.net, s.coins = r.Network(), r.Metadata().Coins
	step := max(s.coins/uint64(want), 1)
	var n, whaleSeen uint64
	counts := map[string]uint64{}
	for {
		txid, coins, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for _, c := range coins {
			if s.whale != nil && bytes.Equal(c.Coin.Script, s.whale) {
				whaleSeen++
			}
			if n%step == 0 {
				s.outpoints = append(s.outpoints, fmt.Sprintf("/v1/utxos/%s/%d", txid, c.Index))
			}
			if (n+step/2)%step == 0 && !whales[string(c.Coin.Script)] {
				counts[string(c.Coin.Script)]++
				if a, ok := address.FromScript(c.Coin.Script, s.net); ok {
					s.addresses = append(s.addresses, "/api/address/"+a+"/utxo")
				} else {
					h := scripthash.Of(c.Coin.Script)
					s.addresses = append(s.addresses, "/api/scripthash/"+hex.EncodeToString(h[:])+"/utxo")
				}
			}
			n++
		}
	}
	if len(s.outpoints) == 0 || len(s.addresses) == 0 {
		return nil, fmt.Errorf("%s: too few coins to sample", file)
	}
	if s.whale != nil && whaleSeen != s.whaleN {
		return nil, fmt.Errorf("%s: the largest whale has %d coins in the snapshot, expect.json says %d", file, whaleSeen, s.whaleN)
	}
	if s.whale == nil {
		var best uint64 // its coins: counted by paging
		for sc, k := range counts {
			if k > best {
				s.whale, best = []byte(sc), k
			}
		}
	}
	return &s, nil
}
