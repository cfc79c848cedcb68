package main

import (
	"testing"

	"utxod/internal/cli/clitest"
)

func TestConventions(t *testing.T) {
	clitest.Conventions(t, "eventsbench", run)
}
