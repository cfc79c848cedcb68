// Package params holds the consensus parameters of each Bitcoin network (mainnet, testnet3, testnet4, signet, regtest).
package params
