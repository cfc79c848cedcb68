package descriptor

// KeyOrigin is Core's KeyOriginInfo: the fingerprint of the key a
// derivation starts from and the path from it.
type KeyOrigin struct {
	Fingerprint [4]byte
	Path        []uint32
}

// Provider is the part of Core's FlatSigningProvider descriptors use: the
// public keys, their origins, the redeem/witness scripts and the taproot
// internal keys learnt while expanding, keyed as Core keys them. Like Core's
// std::map::emplace and merge, an entry once set is kept. Expanding several
// descriptors into one Provider and inferring from it reproduces the "desc"
// strings of Core's scantxoutset. The zero value is not usable; use
// NewProvider.
type Provider struct {
	pubkeys map[[20]byte][]byte
	origins map[[20]byte]originEntry
	scripts map[[20]byte][]byte
	trTrees map[[32]byte][32]byte // output key -> internal key (key-path only)
}

type originEntry struct {
	pub    []byte
	origin KeyOrigin
}

// NewProvider returns an empty Provider.
func NewProvider() *Provider {
	return &Provider{
		pubkeys: make(map[[20]byte][]byte),
		origins: make(map[[20]byte]originEntry),
		scripts: make(map[[20]byte][]byte),
		trTrees: make(map[[32]byte][32]byte),
	}
}

// merge is FlatSigningProvider::Merge: entries of b absent from p are added.
func (p *Provider) merge(b *Provider) {
	for k, v := range b.pubkeys {
		if _, ok := p.pubkeys[k]; !ok {
			p.pubkeys[k] = v
		}
	}
	for k, v := range b.origins {
		if _, ok := p.origins[k]; !ok {
			p.origins[k] = v
		}
	}
	for k, v := range b.scripts {
		if _, ok := p.scripts[k]; !ok {
			p.scripts[k] = v
		}
	}
	for k, v := range b.trTrees {
		if _, ok := p.trTrees[k]; !ok {
			p.trTrees[k] = v
		}
	}
}

// addKey records pub with its origin unless the key is known (emplace).
func (p *Provider) addKey(pub []byte, o KeyOrigin) {
	id := hash160(pub)
	if _, ok := p.origins[id]; !ok {
		p.origins[id] = originEntry{pub: pub, origin: o}
	}
	if _, ok := p.pubkeys[id]; !ok {
		p.pubkeys[id] = pub
	}
}

func (p *Provider) addScript(s []byte) {
	id := hash160(s)
	if _, ok := p.scripts[id]; !ok {
		p.scripts[id] = s
	}
}

// originByXOnly is GetKeyOriginByXOnly: the origin of 02x or, failing
// that, 03x.
func (p *Provider) originByXOnly(x []byte) (KeyOrigin, bool) {
	for _, prefix := range []byte{2, 3} {
		if e, ok := p.origins[hash160(append([]byte{prefix}, x...))]; ok {
			return e.origin, true
		}
	}
	return KeyOrigin{}, false
}
