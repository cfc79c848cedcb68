//go:build !amd64 || purego

package utxo

func hasSHA256x16() bool { return false }

func sha256ManyAVX512([][32]byte, [][]byte) { panic("utxo: no AVX-512 SHA-256 in this build") }
