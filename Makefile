# utxod — see README.md.
GO      ?= go
TAGS    ?= rocksdb
BIN     ?= bin
DATADIR ?= ./data

.PHONY: all build test test-short vet fmt generate bench run torture gate clean fuzz-short deps-build deps-test test-esplora-client

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
	$(GO) build -tags '$(TAGS)' -o $(BIN)/chaingen ./cmd/chaingen

# The README's test command, and what CI (.ci/run) runs on a clean clone: it
# installs what it needs first. Keep it well under 15 minutes on 2 cores.
test: deps-test vet
	$(GO) test -tags '$(TAGS)' -count=1 -timeout 30m ./...
	$(GO) test -tags '$(TAGS)' -race -short -count=1 ./api/ ./chainstate/
	$(GO) test -tags 'purego' -count=1 ./merkle/... ./wire/... ./utxo/... ./internal/sha256x/...
	$(GO) test -count=1 ./backends/rocksdb/ ./cmd/utxod/ -run 'Stub|Help|BadFlags|Missing'
	$(GO) test -tags '$(TAGS) syssecp256k1' -count=1 ./internal/secp256k1/ ./script/
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
	$(GO) test -run '^$$' -fuzz '^FuzzDoubleSums$$' -fuzztime $(FUZZTIME) ./internal/sha256x/
	$(GO) test -run '^$$' -fuzz '^FuzzHeaderReader$$' -fuzztime $(FUZZTIME) ./wire/
	$(GO) test -run '^$$' -fuzz '^FuzzRecordDecode$$' -fuzztime $(FUZZTIME) ./utxo/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeUndo$$' -fuzztime $(FUZZTIME) ./store/kvstore/undorec/
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./address/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./descriptor/
	$(GO) test -run '^$$' -fuzz '^FuzzParseHeaders$$' -fuzztime $(FUZZTIME) ./follow/fuzz/
	$(GO) test -run '^$$' -fuzz '^FuzzCheckBlock$$' -fuzztime $(FUZZTIME) ./follow/fuzz/
	$(GO) test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) ./snapshot/fuzz/

# The published Esplora client @mempool/mempool.js (npm) against a test
# server (api's TestMempoolJSClient); needs node and npm.
test-esplora-client:
	UTXOD_MEMPOOLJS=$$(sh scripts/mempooljs.sh) $(GO) test -tags '$(TAGS)' -count=1 -run TestMempoolJSClient -v ./api/

vet: deps-build
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	@$(GO) mod tidy -diff || (echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1)
	$(GO) vet -tags '$(TAGS)' ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

generate:
	$(GO) generate ./...

bench: deps-build
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench . -benchmem ./...

# UTXO snapshot dump, verify and load beside an import of the same chain, per
# store, whole process (docs/benchmarks/snapshot.md; ~5 min at 2M coins).
.PHONY: bench-snapshot
SNAPBENCH_COINS  ?= 2000000
SNAPBENCH_ROUNDS ?= 3
bench-snapshot: build
	sh docs/benchmarks/snapshot-bench.sh $(SNAPBENCH_COINS) $(SNAPBENCH_ROUNDS)

# Serves the API on mainnet, pebble, in $(DATADIR) (Ctrl-C stops it
# gracefully); README's first screen has commands to try against it.
LISTEN ?= 127.0.0.1:8335
run: build
	@echo 'utxod serve: http://$(LISTEN)  (docs: http://$(LISTEN)/docs; write token in $(DATADIR)/.cookie)'
	$(BIN)/utxod serve --network main --backend pebble --datadir $(DATADIR) --listen $(LISTEN)

# Every tool under cmd/ besides utxod (README, CLI).
.PHONY: tools
tools: deps-build
	$(GO) build -tags '$(TAGS)' -o $(BIN)/chaingen ./cmd/chaingen
	$(GO) build -o $(BIN)/gate ./cmd/gate
	$(GO) build -o $(BIN)/valbench ./cmd/valbench
	$(GO) build -o $(BIN)/btcdreplay ./cmd/btcdreplay
	$(GO) build -tags '$(TAGS)' -o $(BIN)/storebench ./cmd/storebench
	$(GO) build -o $(BIN)/corerest ./cmd/corerest
	$(GO) build -o $(BIN)/followbench ./cmd/followbench
	$(GO) build -o $(BIN)/addrbench ./cmd/addrbench

# A small performance gate (docs/benchmarks/gate/README.md): control
# --merkle-kernel generic vs candidate --merkle-kernel auto, ABBA, every store,
# on a chaingen corpus if bin/chaingen exists, else the first GATE_BLOCKS
# blocks of the mainnet sample. A few minutes; writes $(GATE_OUT)/custody.json,
# report.md and report.svg. Unavailable stores are reported, not fatal;
# an invalid verdict (a digest mismatch or failed run) fails the target.
# GATE_MODE=full (every script verified, --assume-valid 0) or assume-valid:
# the chaingen corpus gets 2017 coinbase-only blocks on top (chaingen --bury)
# and both arms run with --assume-valid at its tip, so every script below the
# burial is skipped as Core skips them; the mode is in the custody's commands.
GATE_OUT      ?= $(BIN)/gate-out
GATE_BLOCKS   ?= 6000
GATE_PAIRS    ?= 2
GATE_COOLDOWN ?= 2s
GATE_BACKENDS ?= pebble,rocksdb,bbolt
GATE_MODE     ?= full
gate: deps-build
	$(GO) build -tags '$(TAGS)' -o $(BIN)/utxod ./cmd/utxod
	$(GO) build -o $(BIN)/gate ./cmd/gate
	@mkdir -p $(GATE_OUT)
	@case "$(GATE_MODE)" in full|assume-valid) ;; *) echo "GATE_MODE: want full or assume-valid, got $(GATE_MODE)"; exit 2;; esac; \
	mode="--assume-valid 0"; \
	if [ -x $(BIN)/chaingen ]; then \
		bury=""; [ "$(GATE_MODE)" = assume-valid ] && bury="--bury 2017"; \
		$(BIN)/chaingen --profile early --blocks $(GATE_BLOCKS) --seed 1 $$bury --out $(GATE_OUT)/corpus.dat --json > $(GATE_OUT)/corpus.json || exit 1; \
		tip=$$(sed -n 's/.*"tip": *"\([0-9a-f]*\)".*/\1/p' $(GATE_OUT)/corpus.json); \
		[ "$(GATE_MODE)" = assume-valid ] && mode="--assume-valid $$tip"; \
		set -- --corpus $(GATE_OUT)/corpus.dat --network regtest; \
	else \
		[ "$(GATE_MODE)" = assume-valid ] && { echo "GATE_MODE=assume-valid needs bin/chaingen (make build)"; exit 2; }; \
		set -- --corpus testdata/mainnet/blk_0_to_14131.dat --corpus-blocks $(GATE_BLOCKS) --network main; \
	fi; \
	$(BIN)/gate "$$@" --backends $(GATE_BACKENDS) --pairs $(GATE_PAIRS) --cooldown $(GATE_COOLDOWN) \
		--control "{bin} import --network {network} --datadir {datadir} --backend {backend} --json $$mode --merkle-kernel generic {corpus}" \
		--candidate "{bin} import --network {network} --datadir {datadir} --backend {backend} --json $$mode --merkle-kernel auto {corpus}" \
		--control-commit "$$(git rev-parse HEAD 2>/dev/null)" --candidate-commit "$$(git rev-parse HEAD 2>/dev/null)" \
		--out $(GATE_OUT)/custody.json --report $(GATE_OUT)/report.md

# Torture of the real binary (internal/torture; figures in
# docs/benchmarks/reliability.md): TORTURE_KILLS SIGKILLs per store for each
# of serve (over HTTP) and import on a larger generated corpus, the full-disk
# tmpfs test (root), access rules and a wrk load of TORTURE_LOAD_SECONDS.
# make test runs the same tests with 10 kills per store on a small corpus.
# TORTURE_FUZZTIME=2m also runs every api fuzz target for that long.
TORTURE_KILLS        ?= 200
TORTURE_LOAD_SECONDS ?= 30
TORTURE_FUZZTIME     ?=
torture: deps-test
	UTXOD_TORTURE_KILLS=$(TORTURE_KILLS) UTXOD_TORTURE_LOAD_SECONDS=$(TORTURE_LOAD_SECONDS) \
		$(GO) test -tags '$(TAGS)' -count=1 -timeout 12h -v -run 'TestCrash|TestFullDisk|TestLoad|TestAccess' ./internal/torture
	@if [ -n "$(TORTURE_FUZZTIME)" ]; then \
		for f in FuzzPostBlock FuzzGetRoutes FuzzRESTGetUTXOsBody FuzzAuthHeader; do \
			$(GO) test -tags '$(TAGS)' -run '^$$' -fuzz "^$$f\$$" -fuzztime $(TORTURE_FUZZTIME) ./api || exit 1; \
		done; \
	fi

clean:
	rm -rf $(BIN)

# Storage benchmark (docs/benchmarks/storage.md): every store, sequentially; generates its corpora under
# $(STOREBENCH_WORK) (≈ 1.5 GB with the default 10^7-coin growth chain) and prints the tables. Phases and
# sizes: see internal/storebench/run.sh (e.g. make bench-storage STOREBENCH_ENV='GROWTH_UTXOS=1000000').
STOREBENCH_OUT  ?= $(BIN)/storebench-out
STOREBENCH_WORK ?= /tmp/storebench-work
.PHONY: bench-storage
bench-storage:
	OUT=$(STOREBENCH_OUT) WORK=$(STOREBENCH_WORK) $(STOREBENCH_ENV) internal/storebench/run.sh
	python3 internal/storebench/report.py $(STOREBENCH_OUT) $(STOREBENCH_OUT)/storage-growth.svg

# Issue 19's assume-valid side by side (docs/benchmarks/nonsig.md): btcdreplay with a checkpoint at the tip
# against utxod's defaults and the control arm --prefetch 0 on every store, NONSIG_ROUNDS rounds, order
# reversed each round, on the early corpus of 440k inputs buried under 2017 coinbase-only blocks (generated unless
# NONSIG_CORPUS exists). ≈ 2 min with the defaults on 2 cores.
.PHONY: bench-nonsig
NONSIG_CORPUS ?= $(BIN)/nonsig-out/early440k-bury2017.dat
NONSIG_ROUNDS ?= 5
bench-nonsig: deps-build
	$(GO) build -tags '$(TAGS)' -o $(BIN)/utxod ./cmd/utxod
	$(GO) build -tags '$(TAGS)' -o $(BIN)/chaingen ./cmd/chaingen
	$(GO) build -o $(BIN)/btcdreplay ./cmd/btcdreplay
	@mkdir -p $(dir $(NONSIG_CORPUS))
	@test -f $(NONSIG_CORPUS) || $(BIN)/chaingen --profile early --target-inputs 440000 --seed 1 --bury 2017 --out $(NONSIG_CORPUS)
	CORPUS=$(NONSIG_CORPUS) UTXOD=$(BIN)/utxod BTCDREPLAY=$(BIN)/btcdreplay python3 docs/benchmarks/nonsig-side-by-side.py $(NONSIG_ROUNDS)

# Side-by-side full validation (docs/benchmarks/validation.md, "btcd replay side by side" and "signature floor"):
# btcdreplay (btcd's blockchain package, full validation) and utxod import on each of VALBENCH_STORES, rotating
# (no arm twice in a row) for VALBENCH_ROUNDS rounds on fresh datadirs, plus the signature floor. Generates the early-profile corpus
# (VALBENCH_INPUTS inputs, seed 1) unless VALBENCH_CORPUS exists. Prints the Markdown table; valbench.json and
# valbench.md go to VALBENCH_OUT. ≈ 3 min with the defaults on 2 cores. Extra driver flags in VALBENCH_FLAGS, e.g.
# make bench-validation VALBENCH_FLAGS='--utxod-args "--pipeline 4"'.
VALBENCH_INPUTS ?= 100000
VALBENCH_CORPUS ?= $(BIN)/valbench-out/early-$(VALBENCH_INPUTS).dat
VALBENCH_ROUNDS ?= 3
VALBENCH_STORES ?= pebble,rocksdb,bbolt
VALBENCH_OUT    ?= $(BIN)/valbench-out
VALBENCH_FLAGS  ?=
.PHONY: bench-validation
bench-validation: deps-build
	$(GO) build -tags '$(TAGS)' -o $(BIN)/utxod ./cmd/utxod
	$(GO) build -tags '$(TAGS)' -o $(BIN)/chaingen ./cmd/chaingen
	$(GO) build -o $(BIN)/btcdreplay ./cmd/btcdreplay
	$(GO) build -o $(BIN)/valbench ./cmd/valbench
	@mkdir -p $(VALBENCH_OUT) $(dir $(VALBENCH_CORPUS))
	@test -f $(VALBENCH_CORPUS) || $(BIN)/chaingen --profile early --target-inputs $(VALBENCH_INPUTS) --seed 1 --out $(VALBENCH_CORPUS)
	$(BIN)/valbench --corpus $(VALBENCH_CORPUS) --network regtest --rounds $(VALBENCH_ROUNDS) --stores $(VALBENCH_STORES) \
		--utxod $(BIN)/utxod --btcdreplay $(BIN)/btcdreplay --out $(VALBENCH_OUT) \
		--label "binaries built by make from $$(git rev-parse --short HEAD 2>/dev/null)$$(git diff --quiet HEAD -- 2>/dev/null || echo ' with uncommitted changes')" \
		$(VALBENCH_FLAGS)

# Following against importing (docs/benchmarks/follow.md): utxod follow from a Core REST stand-in
# (cmd/corerest) serving FOLLOWBENCH_CORPUS vs utxod import of the same file, whole
# processes on fresh datadirs, alternating ABBA for FOLLOWBENCH_ROUNDS rounds; medians and ratios.
# Generates the early-profile corpus (FOLLOWBENCH_INPUTS inputs, seed 1) unless it exists; the
# mainnet sample (tiny 2009 blocks, the per-request worst case): FOLLOWBENCH_CORPUS=testdata/mainnet/blk_0_to_14131.dat
# FOLLOWBENCH_NETWORK=main. Extra driver flags in FOLLOWBENCH_FLAGS (e.g. --follow-args "--follow-concurrency 8").
FOLLOWBENCH_INPUTS  ?= 100000
FOLLOWBENCH_CORPUS  ?= $(BIN)/followbench-out/early-$(FOLLOWBENCH_INPUTS).dat
FOLLOWBENCH_NETWORK ?= regtest
FOLLOWBENCH_ROUNDS  ?= 5
FOLLOWBENCH_BACKEND ?= pebble
FOLLOWBENCH_OUT     ?= $(BIN)/followbench-out
FOLLOWBENCH_FLAGS   ?=
.PHONY: bench-follow
bench-follow: deps-build
	$(GO) build -tags '$(TAGS)' -o $(BIN)/utxod ./cmd/utxod
	$(GO) build -tags '$(TAGS)' -o $(BIN)/chaingen ./cmd/chaingen
	$(GO) build -o $(BIN)/corerest ./cmd/corerest
	$(GO) build -o $(BIN)/followbench ./cmd/followbench
	@mkdir -p $(FOLLOWBENCH_OUT)
	@test -f $(FOLLOWBENCH_CORPUS) || $(BIN)/chaingen --profile early --target-inputs $(FOLLOWBENCH_INPUTS) --seed 1 --out $(FOLLOWBENCH_CORPUS)
	$(BIN)/followbench --utxod $(BIN)/utxod --corerest $(BIN)/corerest --corpus $(FOLLOWBENCH_CORPUS) \
		--network $(FOLLOWBENCH_NETWORK) --backend $(FOLLOWBENCH_BACKEND) --rounds $(FOLLOWBENCH_ROUNDS) \
		--workdir $(FOLLOWBENCH_OUT) --json $(FOLLOWBENCH_OUT)/follow.json $(FOLLOWBENCH_FLAGS)
