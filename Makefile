# utxod — see README.md.
GO      ?= go
TAGS    ?= rocksdb
BIN     ?= bin
DATADIR ?= ./data

.PHONY: all build test test-short vet fmt generate run torture clean fuzz-short deps-build deps-test test-esplora-client

all: build

# Debian packages the targets need (scripts/deps.sh probes each one and, as
# root with apt-get, installs what is missing; otherwise it stops and prints
# the apt-get command). The build needs librocksdb-dev when TAGS has rocksdb;
# make test also needs libsecp256k1-dev and pkg-config (the syssecp256k1
# control arm), wrk (the load test) and haproxy (the replica test).
BUILD_DEBS = $(if $(filter rocksdb,$(TAGS)),librocksdb-dev)
TEST_DEBS  = $(BUILD_DEBS) libsecp256k1-dev pkg-config wrk haproxy

deps-build:
	@sh scripts/deps.sh $(BUILD_DEBS)

deps-test:
	@sh scripts/deps.sh $(TEST_DEBS)

build: deps-build
	$(GO) build -tags '$(TAGS)' -o $(BIN)/utxod ./cmd/utxod
	$(GO) build -tags '$(TAGS)' -o $(BIN)/chaingen ./testkit/cmd/chaingen

# The README's test command, and what CI (.ci/run) runs on a clean clone: it
# installs what it needs first. Keep it well under 15 minutes on 2 cores.
test: deps-test vet
	$(GO) test -tags '$(TAGS)' -count=1 -timeout 30m ./...
	$(GO) test -tags '$(TAGS)' -race -short -count=1 ./api/ ./chainstate/
	$(GO) test -tags 'purego' -count=1 ./merkle/... ./wire/... ./utxo/... ./silentpayments/
	$(GO) test -count=1 ./backends/rocksdb/ ./cmd/utxod/ -run 'Stub|Help|BadFlags|Missing'
	$(GO) test -tags '$(TAGS) syssecp256k1' -count=1 ./internal/secp256k1/ ./script/ ./silentpayments/
	$(MAKE) fuzz-short

# Bounded fuzzing in CI: each target a few seconds beyond its seed corpus
# (the seeds already run as unit tests above). The budget is a count of
# executions, not a duration: Go 1.26's fuzzing coordinator can report
# "context deadline exceeded" as a failure when a duration -fuzztime ends
# while a worker is busy (go.dev/issue/75804, fixed in Go 1.27). 25000x is
# 1-5 s per target here. FUZZTIME=2m for longer runs. FuzzDecodeUndo lives
# in the codec's own package (store/kvstore/undorec): built from kvstore's
# tests, its instrumented binary took in the three stores, about two minutes
# on a fresh machine.
FUZZTIME ?= 25000x
fuzz-short: deps-build
	$(GO) test -run '^$$' -fuzz '^FuzzTxDifferential$$' -fuzztime $(FUZZTIME) ./script/
	$(GO) test -run '^$$' -fuzz '^FuzzScriptDifferential$$' -fuzztime $(FUZZTIME) ./script/
	$(GO) test -run '^$$' -fuzz '^FuzzParseBlock$$' -fuzztime $(FUZZTIME) ./wire/
	$(GO) test -run '^$$' -fuzz '^FuzzParseTx$$' -fuzztime $(FUZZTIME) ./wire/
	$(GO) test -run '^$$' -fuzz '^FuzzHeaderReader$$' -fuzztime $(FUZZTIME) ./wire/
	$(GO) test -run '^$$' -fuzz '^FuzzRecordDecode$$' -fuzztime $(FUZZTIME) ./utxo/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeUndo$$' -fuzztime $(FUZZTIME) ./store/kvstore/undorec/
	$(GO) test -run '^$$' -fuzz '^FuzzParseDiskKey$$' -fuzztime $(FUZZTIME) ./store/kvstore/shindex/
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./address/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./descriptor/
	$(GO) test -run '^$$' -fuzz '^FuzzParseHeaders$$' -fuzztime $(FUZZTIME) ./follow/fuzz/
	$(GO) test -run '^$$' -fuzz '^FuzzCheckBlock$$' -fuzztime $(FUZZTIME) ./follow/fuzz/
	$(GO) test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) ./snapshot/fuzz/
	$(GO) test -run '^$$' -fuzz '^FuzzComputeTweak$$' -fuzztime $(FUZZTIME) ./silentpayments/
	$(GO) test -run '^$$' -fuzz '^FuzzChunk$$' -fuzztime $(FUZZTIME) ./backends/bbolt/
	$(GO) test -run '^$$' -fuzz '^FuzzAdvisePages$$' -fuzztime $(FUZZTIME) ./backends/bbolt/

# The published Esplora clients @mempool/mempool.js and @bitcoinerlab/explorer
# (npm) against a test server (api's TestMempoolJSClient, TestExplorerClient);
# needs node and npm.
test-esplora-client:
	UTXOD_MEMPOOLJS=$$(sh scripts/mempooljs.sh) $(GO) test -tags '$(TAGS)' -count=1 -run 'TestMempoolJSClient|TestExplorerClient' -v ./api/

vet: deps-build
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	@$(GO) mod tidy -diff || (echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1)
	$(GO) vet -tags '$(TAGS)' ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

generate:
	$(GO) generate ./...

# Serves the API on mainnet, pebble, in $(DATADIR) (Ctrl-C stops it
# gracefully); README's first screen has commands to try against it.
LISTEN ?= 127.0.0.1:8335
run: build
	@echo 'utxod serve: http://$(LISTEN)  (docs: http://$(LISTEN)/docs; write token in $(DATADIR)/.cookie)'
	$(BIN)/utxod serve --network main --backend pebble --datadir $(DATADIR) --listen $(LISTEN)

# Torture of the real binary (testkit/torture; figures in
# bench/results/reliability.md): TORTURE_KILLS SIGKILLs per store for each
# of serve (over HTTP) and import on a larger generated corpus, the full-disk
# tmpfs test (root), access rules and a wrk load of TORTURE_LOAD_SECONDS.
# make test runs the same tests with 10 kills per store on a small corpus.
# TORTURE_FUZZTIME=2m also runs every api fuzz target for that long.
TORTURE_KILLS        ?= 200
TORTURE_LOAD_SECONDS ?= 30
TORTURE_FUZZTIME     ?=
torture: deps-test
	UTXOD_TORTURE_KILLS=$(TORTURE_KILLS) UTXOD_TORTURE_LOAD_SECONDS=$(TORTURE_LOAD_SECONDS) \
		$(GO) test -tags '$(TAGS)' -count=1 -timeout 12h -v -run 'TestCrash|TestFullDisk|TestLoad|TestAccess' ./testkit/torture
	@if [ -n "$(TORTURE_FUZZTIME)" ]; then \
		for f in FuzzPostBlock FuzzGetRoutes FuzzRESTGetUTXOsBody FuzzAuthHeader; do \
			$(GO) test -tags '$(TAGS)' -run '^$$' -fuzz "^$$f\$$" -fuzztime $(TORTURE_FUZZTIME) ./api || exit 1; \
		done; \
	fi

clean:
	rm -rf $(BIN)

# Benchmarks, the gate and the measuring tools: bench/README.md.
include bench/bench.mk
