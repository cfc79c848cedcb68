//go:build !amd64 || purego

package utxo

func hasMulIFMA() bool { return false }

func mulFullIFMA(*[2 * num3072Limbs]uint64, *num3072, *num3072) {
	panic("utxo: no AVX-512 IFMA multiplication in this build")
}

func (*num3072) reduceADX(*[2 * num3072Limbs]uint64) {
	panic("utxo: no ADX reduction in this build")
}
