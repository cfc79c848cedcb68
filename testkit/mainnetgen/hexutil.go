package mainnetgen

import "encoding/hex"

// displayHex is the hex of a raw 32-byte hash in Core's display order
// (uint256::GetHex: bytes reversed).
func displayHex(raw [32]byte) string {
	var r [32]byte
	return hex.EncodeToString(reverse(r[:], raw[:]))
}
