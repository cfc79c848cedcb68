# utxod — see README.md.
GO      ?= go
TAGS    ?= rocksdb
BIN     ?= bin
DATADIR ?= ./data

.PHONY: all build test test-short vet fmt generate bench run torture gate clean

all: build

build:
	$(GO) build -tags '$(TAGS)' -o $(BIN)/utxod ./cmd/utxod
	$(GO) build -tags '$(TAGS)' -o $(BIN)/chaingen ./cmd/chaingen

# The README's test command. Runs on a clean clone after .ci/run installs
# librocksdb-dev; keep it well under 15 minutes on 2 cores.
test: vet
	$(GO) test -tags '$(TAGS)' -count=1 -timeout 30m ./...
	$(GO) test -tags 'purego' -count=1 ./merkle/... ./wire/...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet -tags '$(TAGS)' ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

generate:
	$(GO) generate ./...

bench:
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench . -benchmem ./...

run: build
	$(BIN)/utxod import --network main --datadir $(DATADIR) --json testdata/mainnet/blk_0_to_14131.dat

clean:
	rm -rf $(BIN)
