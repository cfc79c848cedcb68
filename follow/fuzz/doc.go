// Package fuzz holds follow's fuzz targets, apart from its other tests:
// its test binary links only what follow's parsers need, not the
// chainstate and stores follow's own tests use, so that make fuzz-short
// does not instrument them.
package fuzz
