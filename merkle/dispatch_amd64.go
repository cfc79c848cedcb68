//go:build amd64 && !purego

package merkle

import "utxod/wire"

// autoOrder is the preference order of "auto".
var autoOrder = []string{KernelGeneric}

func lookupArch(string) (func(dst, src []wire.Hash), bool) { return nil, false }
