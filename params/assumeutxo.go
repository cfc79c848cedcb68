package params

import "utxod/wire"

// AssumeUTXO is one entry of Bitcoin Core's assumeutxo table
// (m_assumeutxo_data in src/kernel/chainparams.cpp): a block whose UTXO set
// a snapshot may describe, with the hash_serialized_3 that set must have.
type AssumeUTXO struct {
	Height    int32
	BlockHash wire.Hash
	// HashSerialized is the hash_serialized_3 of the UTXO set after the
	// block (gettxoutsetinfo's hash_serialized_3, display-order literal).
	HashSerialized wire.Hash
	// ChainTxCount is the block's m_chain_tx_count: the transactions of
	// the chain up to and including it, the genesis coinbase counted.
	ChainTxCount uint64
}

// AssumeUTXOData returns the network's assumeutxo table in Core's order (a
// fresh slice). A signet with a custom challenge has none, as in Core.
func (p *Params) AssumeUTXOData() []AssumeUTXO {
	au := func(height int32, block, hash string, txs uint64) AssumeUTXO {
		return AssumeUTXO{Height: height, BlockHash: mustHash(block), HashSerialized: mustHash(hash), ChainTxCount: txs}
	}
	// Transcribed from Core master (v31.99) src/kernel/chainparams.cpp.
	switch p.Name {
	case "main":
		return []AssumeUTXO{
			au(840_000, "0000000000000000000320283a032748cef8227873ff4872689bf23f1cda83a5", "a2a5521b1b5ab65f67818e5e8eccabb7171a517f9e2382208f77687310768f96", 991032194),
			au(880_000, "000000000000000000010b17283c3c400507969a9c2afd1dcf2082ec5cca2880", "dbd190983eaf433ef7c15f78a278ae42c00ef52e0fd2a54953782175fbadcea9", 1145604538),
			au(910_000, "0000000000000000000108970acb9522ffd516eae17acddcb1bd16469194a821", "4daf8a17b4902498c5787966a2b51c613acdab5df5db73f196fa59a4da2f1568", 1226586151),
			au(935_000, "0000000000000000000147034958af1652b2b91bba607beacc5e72a56f0fb5ee", "e4b90ef9eae834f56c4b64d2d50143cee10ad87994c614d7d04125e2a6025050", 1305397408),
		}
	case "testnet3":
		return []AssumeUTXO{
			au(2_500_000, "0000000000000093bcb68c03a9a168ae252572d348a2eaeba2cdf9231d73206f", "f841584909f68e47897952345234e37fcd9128cd818f41ee6c3ca68db8071be7", 66484552),
			au(4_840_000, "00000000000000f4971a7fb37fbdff89315b69a2e1920c467654a382f0d64786", "ce6bb677bb2ee9789c4a1c9d73e6683c53fc20e8fdbedbdaaf468982a0c8db2a", 536078574),
		}
	case "testnet4":
		return []AssumeUTXO{
			au(90_000, "0000000002ebe8bcda020e0dd6ccfbdfac531d2f6a81457191b99fc2df2dbe3b", "784fb5e98241de66fdd429f4392155c9e7db5c017148e66e8fdbc95746f8b9b5", 11347043),
			au(120_000, "000000000bd2317e51b3c5794981c35ba894ce27d3e772d5c39ecd9cbce01dc8", "10b05d05ad468d0971162e1b222a4aa66caca89da2bb2a93f8f37fb29c4794b0", 14141057),
		}
	case "signet":
		if p.Magic != SigNet().Magic {
			return nil // custom challenge
		}
		return []AssumeUTXO{
			au(160_000, "0000003ca3c99aff040f2563c2ad8f8ec88bd0fd6b8f0895cfaf1ef90353a62c", "fe0a44309b74d6b5883d246cb419c6221bcccf0b308c9b59b7d70783dbdf928a", 2289496),
			au(290_000, "0000000577f2741bb30cd9d39d6d71b023afbeb9764f6260786a97969d5c9ac0", "97267e000b4b876800167e71b9123f1529d13b14308abec2888bbd2160d14545", 28547497),
		}
	case "regtest":
		return []AssumeUTXO{
			au(110, "135eec25a6fb277884e5824e7aa7d052c4868161c99a5122170b5266f86c273d", "86e9a1205b418b16dde3a18a78c730e30137e28466bda5dbf6b33ab8fc05447c", 111),
			au(200, "385901ccbd69dff6bbd00065d01fb8a9e464dede7cfe0372443884f9b1dcf6b9", "17dcc016d188d16068907cdeb38b75691a118d43053b8cd6a25969419381d13a", 201),
			au(299, "0c552ced4721c249a389eb9b08cb8da261cd46f0e7b5f9d064d48f3113406853", "106b2c56233e378a824cf0d5ff2be42ed32c72f1605c9be288d00942908a40ac", 334),
		}
	}
	return nil
}

// AssumeUTXOForBlockHash returns the table entry for a block hash (Core's
// AssumeutxoForBlockhash).
func (p *Params) AssumeUTXOForBlockHash(h wire.Hash) (AssumeUTXO, bool) {
	for _, e := range p.AssumeUTXOData() {
		if e.BlockHash == h {
			return e, true
		}
	}
	return AssumeUTXO{}, false
}

// AssumeUTXOForHeight returns the table entry for a height (Core's
// AssumeutxoForHeight).
func (p *Params) AssumeUTXOForHeight(height int32) (AssumeUTXO, bool) {
	for _, e := range p.AssumeUTXOData() {
		if e.Height == height {
			return e, true
		}
	}
	return AssumeUTXO{}, false
}

// CoreName is the network's name as Core's ChainTypeToString writes it
// (main, test, testnet4, signet, regtest), the names Core's error messages
// use.
func (p *Params) CoreName() string {
	if p.Name == "testnet3" {
		return "test"
	}
	return p.Name
}

// ByMagic returns the network whose message start is magic (Core's
// GetNetworkForMagic): main, testnet3, testnet4, the default signet or
// regtest; false for any other (a custom signet, an unknown network).
func ByMagic(magic [4]byte) (*Params, bool) {
	for _, f := range []func() *Params{MainNet, TestNet3, TestNet4, SigNet, RegTest} {
		if p := f(); p.Magic == magic {
			return p, true
		}
	}
	return nil, false
}
