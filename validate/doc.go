// Package validate implements Bitcoin's consensus rules: header chain, block and transaction checks and block connection, with Bitcoin Core's reject reasons. It performs no I/O: coins come from a utxo.View.
package validate
