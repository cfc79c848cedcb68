package script

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"utxod/wire"
)

// A taproot key-path signature of 65 bytes whose hash type byte is not one
// of BIP341's fails in Core with SCHNORR_SIG_HASHTYPE (interpreter.cpp
// CheckSchnorrSignature: SignatureHashSchnorr returns false). btcd's txscript
// computes that sighash inside its verifier and drops the error, reporting
// ErrTaprootSigInvalid, so the control arm says SCHNORR_SIG. Both reject.
func TestTaprootBadHashTypeNames(t *testing.T) {
	gx, _ := hex.DecodeString("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
	pk := append([]byte{0x51, 0x20}, gx...)
	for _, tc := range []struct {
		hashType byte
		native   ErrorCode
		btcd     ErrorCode
	}{
		{0x04, ErrSchnorrSigHashType, ErrSchnorrSig},
		{0x84, ErrSchnorrSigHashType, ErrSchnorrSig},
		{0x00, ErrSchnorrSigHashType, ErrSchnorrSigSize},
	} {
		sig := append(bytes.Repeat([]byte{1}, 64), tc.hashType)
		tx, prev := creditSpend(t, nil, pk, [][]byte{sig}, 1000)
		forEachEngine(t, func(t *testing.T, ne namedEngine) {
			v, err := ne.e.Prepare(tx, []wire.TxOut{prev})
			if err != nil {
				t.Fatal(err)
			}
			err = v.VerifyInput(0, Mandatory)
			want := tc.native
			if ne.btcd {
				want = tc.btcd
			}
			if !errors.Is(err, want) {
				t.Errorf("hash type %#x: got %v, want %s", tc.hashType, err, want)
			}
		})
	}
}
