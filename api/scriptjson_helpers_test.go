package api

import "utxod/params"

// addrParamsFor returns the encodings of a network by name (test helper).
func addrParamsFor(network string) addrParams {
	p, err := params.ByName(network)
	if err != nil {
		panic(err)
	}
	return p
}
