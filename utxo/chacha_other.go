//go:build !amd64 || purego

package utxo

func hasChachaAVX512() bool { return false }

func muHashKeystreamAVX512(*num3072, *[32]byte) { panic("utxo: no AVX-512 ChaCha20 in this build") }

func muHashKeystreamsAVX512([]num3072, [][32]byte) {
	panic("utxo: no AVX-512 ChaCha20 in this build")
}
