package mainnetgen

// ScriptType is the kind of a coin's scriptPubKey.
type ScriptType int

// The script types of the generated set.
const (
	P2TR ScriptType = iota
	P2WPKH
	P2PKH
	P2SH
	P2WSH
	Multisig         // bare multisig, 1-of-2 and 1-of-3 (compressed and uncompressed keys)
	P2PKCompressed   // 33-byte key, compressed as 0x02/0x03 in the snapshot
	P2PKUncompressed // 65-byte key on the curve, compressed as 0x04/0x05
	NonStandard      // OP_RETURN-free others: raw in the snapshot
	numTypes
)

var typeNames = [numTypes]string{"p2tr", "p2wpkh", "p2pkh", "p2sh", "p2wsh", "multisig", "p2pk_compressed", "p2pk_uncompressed", "nonstandard"}

func (t ScriptType) String() string { return typeNames[t] }

// era is a band of heights with its own script mix and values.
type era struct {
	name string
	// share of txids (per million) and height band (per mille of the base
	// height, lo exclusive).
	share  uint64
	lo, hi int64
	// weights of the script types among non-coinbase outputs (per 10,000).
	weights [numTypes]uint64
	// coinbase txids (per million of the era's txids).
	coinbase uint64
	// log-normal value: median 2^(mu/256) sat, sigma in 1/256 bit.
	mu, sigma int64
}

// The shape of mainnet's UTXO set in 2024–25, by era: heights skewed to
// recent (55 % of txids in the last 17 % of the chain, 30 % in the middle
// band, 15 % before 45 % of the base height); P2TR the largest type since
// 2024 and mostly dust, then P2WPKH, P2PKH, P2SH; values log-normal with a
// median of about 4 M sat (old), 200 k (middle) and 11 k (recent), sigma 3.2
// bits, plus the dust spikes below: about half of the coins hold less than
// 1,000 sat.
var eras = [...]era{
	{name: "old", share: 150_000, lo: 0, hi: 450, coinbase: 5_000, mu: 22 * 256, sigma: 819,
		weights: [numTypes]uint64{P2PKH: 7000, P2SH: 1500, Multisig: 800, P2PKUncompressed: 300, P2PKCompressed: 200, NonStandard: 200}},
	{name: "middle", share: 300_000, lo: 450, hi: 830, coinbase: 2_000, mu: 4532, sigma: 819,
		weights: [numTypes]uint64{P2PKH: 3800, P2SH: 2200, P2WPKH: 3000, P2WSH: 500, Multisig: 300, P2PKCompressed: 50, NonStandard: 150}},
	{name: "recent", share: 550_000, lo: 830, hi: 1000, coinbase: 500, mu: 3456, sigma: 819,
		weights: [numTypes]uint64{P2TR: 6000, P2WPKH: 2800, P2PKH: 600, P2SH: 350, P2WSH: 150, Multisig: 60, P2PKCompressed: 10, NonStandard: 30}},
}

// TargetMix is the expected share of each script type among coins: the
// eras' weights by their shares (coinbase outputs, whales and the big txid
// move it by a few per cent at most).
func TargetMix() map[string]float64 {
	m := make(map[string]float64, numTypes)
	for _, e := range eras {
		for t, w := range e.weights {
			m[typeNames[t]] += float64(e.share) / 1e6 * float64(w) / 1e4
		}
	}
	return m
}

// overallWeights are TargetMix as weights per 10,000 (the big txid's
// outputs follow it).
var overallWeights = func() (w [numTypes]uint64) {
	for _, e := range eras {
		for t, x := range e.weights {
			w[t] += e.share * x / 1_000_000
		}
	}
	return w
}()

// Value spikes per type (per 10,000 outputs): the dust limits and round
// amounts mainnet is full of. The rest is log-normal.
type spike struct{ value, per10k uint64 }

var spikes = [numTypes][]spike{
	P2TR:        {{330, 7000}, {546, 1000}, {600, 300}, {10_000, 300}},
	P2WPKH:      {{294, 2000}, {546, 600}, {330, 300}, {1_000, 200}, {100_000, 100}},
	P2PKH:       {{546, 2000}, {5_460, 300}, {100_000, 100}},
	P2SH:        {{540, 500}, {546, 1000}, {1_000, 100}},
	P2WSH:       {{330, 2500}, {546, 300}},
	Multisig:    {{7_800, 5000}, {546, 2000}, {1_000, 500}},
	NonStandard: {{0, 500}, {1, 500}, {546, 1000}},
}

// Coins per txid: mostly one or two, then a long tail (the mean is about
// 1.75; mainnet's is 1.5–1.7).
var groupSizes = [...]struct {
	cum    uint64 // cumulative per million
	lo, hi uint64
}{
	{780_000, 1, 1},
	{930_000, 2, 2},
	{997_500, 3, 10},
	{999_930, 11, 200},
	{1_000_000, 201, 5_000},
}

// The big txid: HugeCoins unspent outputs among vouts 0 … HugeVouts−1, so
// that vouts of 16,512 and more (3-byte VARINT keys, which Core's cursor
// puts between vout 255 and 256) are present, in a group whose count is a
// 3-byte CompactSize. Present when the set has at least HugeMinCoins coins.
const (
	HugeCoins    = 16_600
	HugeVouts    = 20_000
	HugeMinCoins = 40_000
)

// Whales: scripts holding many coins. At mainnet's size (MainnetCoins) one
// script holds 1,000,000 coins, four hold 100,000 and forty hold 10,000
// (about 1 % of the set). A smaller set scales the coins per whale down
// proportionally (keeping every tier while a whale of it holds at least two
// coins); a larger one scales the number of whales up.
const MainnetCoins = 185_000_000

var whaleTiers = [...]struct {
	coins, count uint64
	types        []ScriptType
}{
	{1_000_000, 1, []ScriptType{P2PKH}},
	{100_000, 4, []ScriptType{P2WPKH, P2TR, P2SH, P2WSH}},
	{10_000, 40, []ScriptType{P2PKH, P2WPKH, P2TR, P2SH, P2WSH, Multisig, P2PKCompressed}},
}

// Whale is one many-coin script of the generated set.
type Whale struct {
	Tier   uint64 `json:"tier"` // coins at mainnet size
	Coins  uint64 `json:"coins"`
	Type   string `json:"type"`
	Script string `json:"script"` // hex
}

// whaleSpec lists the whales of a set of n coins (scripts filled later).
func whaleSpec(n uint64) []Whale {
	var ws []Whale
	for _, t := range whaleTiers {
		coins, count := t.coins, t.count
		if n < MainnetCoins {
			coins = (t.coins*n + MainnetCoins/2) / MainnetCoins
		} else {
			count = (t.count*n + MainnetCoins/2) / MainnetCoins
		}
		if coins < 2 {
			continue
		}
		for i := range count {
			ws = append(ws, Whale{Tier: t.coins, Coins: coins, Type: t.types[i%uint64(len(t.types))].String()})
		}
	}
	return ws
}
