// Package wire parses Bitcoin blocks and transactions in place: zero-copy views over the raw bytes, txid and wtxid hashed from byte ranges, and Core's block-file framing.
package wire
