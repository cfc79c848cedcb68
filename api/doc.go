// Package api serves utxod over HTTP.
package api
