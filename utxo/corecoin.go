package utxo

import "fmt"

// Bitcoin Core's own Coin serialization (src/coins.h Coin::Serialize), the
// form the assumeutxo snapshot file carries per coin:
//
//	VARINT(height<<1 | coinbase) ‖ VARINT(CompressAmount(value)) ‖ compressed script
//
// with Core's script compression (AppendCompressedScript), the
// uncompressed-key P2PK forms 4 and 5 included.

// NumSpecialScripts is Core's nSpecialScripts: compressed-script size codes
// below it are special forms (see AppendCompressedScript), from it on raw
// scripts of code−6 bytes.
const NumSpecialScripts = numSpecialScripts

// SpecialScriptSize is Core's GetSpecialScriptSize: the data bytes that
// follow special form nSize (< NumSpecialScripts).
func SpecialScriptSize(nSize uint64) int { return specialScriptDataLen(nSize) }

// CoinCode is the first field of Core's Coin serialization: height<<1 |
// coinbase.
func CoinCode(c Coin) uint64 { return coinCode(c) }

// AppendCoreCoin appends Core's Coin serialization of c to dst.
func AppendCoreCoin(dst []byte, c Coin) []byte {
	dst = AppendVarInt(dst, coinCode(c))
	dst = AppendVarInt(dst, CompressAmount(uint64(c.Value)))
	return AppendCompressedScript(dst, c.Script)
}

// DecompressScript appends the script of special form nSize (<
// NumSpecialScripts) with its SpecialScriptSize(nSize) data bytes to dst
// (Core's DecompressScript). It fails, returning dst unchanged, only for the
// uncompressed-key forms 4 and 5 when x is not on secp256k1.
func DecompressScript(dst []byte, nSize uint64, data []byte) ([]byte, error) {
	if nSize >= numSpecialScripts || len(data) != specialScriptDataLen(nSize) {
		return dst, fmt.Errorf("%w: special form %d with %d data bytes", ErrScriptCompression, nSize, len(data))
	}
	n := len(dst)
	out, err := appendDecompressedSpecial(dst, nSize, data)
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// RecordCoreCoins validates the v5 record rec and calls fn for each of its
// outputs in ascending vout order with Core's Coin serialization of the
// output, built in scratch (valid only during the call; the grown scratch is
// returned for reuse). It is the record-to-snapshot path that needs no
// script decompression: the record's payload already is Core's compressed
// amount and script, except that records keep uncompressed-key P2PK raw,
// which becomes Core's form 4 or 5 here when the key is on the curve.
func RecordCoreCoins(rec, scratch []byte, fn func(vout uint32, coin []byte) error) ([]byte, error) {
	l, err := parseRecord(rec)
	if err != nil {
		return scratch, err
	}
	it := l.iter(rec)
	for i := 0; i < l.n; i++ {
		e := it.next()
		scratch = AppendVarInt(scratch[:0], l.code)
		scratch = appendCorePayload(scratch, e.payload)
		if err := fn(e.vout, scratch); err != nil {
			return scratch, err
		}
	}
	return scratch, nil
}

// rawP2PKUncompressedSize is the script size code of a raw 67-byte script.
const rawP2PKUncompressedSize = 67 + numSpecialScripts

// appendCorePayload appends a validated record payload in Core's form.
func appendCorePayload(dst, p []byte) []byte {
	_, k, _ := ReadVarInt(p, ^uint64(0))
	// A raw 67-byte script is VARINT(73) (one byte) and the script.
	if len(p) == k+1+67 && p[k] == rawP2PKUncompressedSize {
		if s := p[k+1:]; specialScriptKind(s) >= 4 {
			dst = append(dst, p[:k]...)
			return AppendCompressedScript(dst, s)
		}
	}
	return append(dst, p...)
}
