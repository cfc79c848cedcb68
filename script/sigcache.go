package script

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// SigCache remembers valid signatures so that a transaction verified once
// (a block POSTed twice, a block re-connected after a reorg, a mempool
// transaction later mined) is not verified again. Entries are keyed like
// Core's CSignatureCache (src/script/sigcache.cpp): a SHA-256 over a
// per-process random 32-byte nonce, a 32-byte padding block ('E' for ECDSA,
// 'S' for Schnorr, so the two kinds never collide), then the sighash, the
// public key and the signature without its hash type. Only successful
// verifications are stored, so a hit proves validity for that exact
// (sighash, key, signature).
//
// The cache is a fixed-size set-associative table (4 ways per bucket)
// split into 256 independently locked shards; an insertion into a full
// bucket evicts a way picked from the key. It never allocates after
// construction and is safe for concurrent use.
type SigCache struct {
	salt   [64]byte // nonce || padding (padding byte replaced per kind)
	shards [256]sigCacheShard
	mask   uint64 // buckets per shard - 1
	// filled is set by the first insertion: until then every lookup
	// misses, and engines that never insert skip it (WithSigCacheStore).
	filled atomic.Bool
}

type sigCacheShard struct {
	mu      sync.RWMutex
	buckets [][sigCacheWays][32]byte
	_       [40]byte // keep shards on separate cache lines
}

const sigCacheWays = 4

// DefaultSigCacheEntries is the entry count NewEngine's default cache holds
// (32 bytes each: 16 MiB).
const DefaultSigCacheEntries = 1 << 19

// NewSigCache returns a cache of about entries signatures (rounded up to a
// power of two, at least 1024).
func NewSigCache(entries int) *SigCache {
	c := &SigCache{}
	if _, err := rand.Read(c.salt[:32]); err != nil {
		panic("script: no randomness for the signature cache salt: " + err.Error())
	}
	per := 1
	for per*256*sigCacheWays < entries || per*256*sigCacheWays < 1024 {
		per <<= 1
	}
	c.mask = uint64(per - 1)
	for i := range c.shards {
		c.shards[i].buckets = make([][sigCacheWays][32]byte, per)
	}
	return c
}

// Entries returns the cache's capacity in signatures.
func (c *SigCache) Entries() int { return int(c.mask+1) * 256 * sigCacheWays }

// ecdsaKey is Core's ComputeEntryECDSA.
func (c *SigCache) ecdsaKey(buf []byte, sighash *[32]byte, pubkey, sig []byte) [32]byte {
	return c.key(buf, 'E', sighash, pubkey, sig)
}

// schnorrKey is Core's ComputeEntrySchnorr (32-byte key, 64-byte sig).
func (c *SigCache) schnorrKey(buf []byte, sighash *[32]byte, pubkey, sig []byte) [32]byte {
	return c.key(buf, 'S', sighash, pubkey, sig)
}

// key hashes nonce || pad || sighash || pubkey || sig using buf (a scratch
// buffer owned by the caller) to avoid allocating.
func (c *SigCache) key(buf []byte, kind byte, sighash *[32]byte, pubkey, sig []byte) [32]byte {
	buf = buf[:0]
	buf = append(buf, c.salt[:32]...)
	buf = append(buf, kind)
	buf = append(buf, make([]byte, 31)...)
	buf = append(buf, sighash[:]...)
	buf = append(buf, pubkey...)
	buf = append(buf, sig...)
	return sha256.Sum256(buf)
}

func (c *SigCache) locate(k *[32]byte) (*sigCacheShard, uint64) {
	h := binary.LittleEndian.Uint64(k[:8])
	return &c.shards[k[8]], h & c.mask
}

// empty reports whether nothing was ever inserted (every lookup misses).
func (c *SigCache) empty() bool { return !c.filled.Load() }

// contains reports whether k is cached.
func (c *SigCache) contains(k *[32]byte) bool {
	s, b := c.locate(k)
	s.mu.RLock()
	bk := &s.buckets[b]
	hit := bk[0] == *k || bk[1] == *k || bk[2] == *k || bk[3] == *k
	s.mu.RUnlock()
	return hit
}

// insert stores k, evicting a way chosen by the key if the bucket is full.
func (c *SigCache) insert(k *[32]byte) {
	if !c.filled.Load() {
		c.filled.Store(true)
	}
	s, b := c.locate(k)
	s.mu.Lock()
	bk := &s.buckets[b]
	var zero [32]byte
	slot := int(k[9]) % sigCacheWays
	for w := range bk {
		if bk[w] == *k {
			s.mu.Unlock()
			return
		}
		if bk[w] == zero {
			slot = w
			break
		}
	}
	bk[slot] = *k
	s.mu.Unlock()
}
