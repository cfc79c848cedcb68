//go:build !amd64 || purego

package merkle

import "utxod/wire"

// autoOrder is the preference order of "auto": only generic exists here.
var autoOrder = []string{KernelGeneric}

// lookupArch reports no vector kernels in purego or non-amd64 builds.
func lookupArch(string) (func(dst, src []wire.Hash), bool) { return nil, false }
