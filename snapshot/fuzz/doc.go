// Package fuzz holds snapshot's fuzz target, apart from its other tests:
// its test binary links the snapshot codec without the stores snapshot's
// own tests open, so that make fuzz-short does not instrument them.
package fuzz
