// Package layout holds the tests that keep the repository's layout honest:
// the import graph (the product never imports the measuring harness or the
// test kit, internal/ holds leaves only) and docs/ARCHITECTURE.md's packages
// and arrows against go list. It has no code of its own.
package layout
