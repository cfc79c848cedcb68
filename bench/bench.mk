# Benchmark targets, included by the top Makefile (make bench-validation, make gate, ...).
# How to measure, and what each target writes: bench/README.md.

bench: deps-build
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench . -benchmem ./...

# UTXO snapshot dump, verify and load beside an import of the same chain, per
# store, whole process (bench/results/snapshot.md; ~5 min at 2M coins).
.PHONY: bench-snapshot
SNAPBENCH_COINS  ?= 2000000
SNAPBENCH_ROUNDS ?= 3
bench-snapshot: build
	sh bench/scripts/snapshot-bench.sh $(SNAPBENCH_COINS) $(SNAPBENCH_ROUNDS)

# Every tool of bench/cmd and testkit/cmd (bench/README.md).
.PHONY: tools
tools: deps-build
	$(GO) build -tags '$(TAGS)' -o $(BIN)/chaingen ./testkit/cmd/chaingen
	$(GO) build -o $(BIN)/gate ./bench/cmd/gate
	$(GO) build -o $(BIN)/valbench ./bench/cmd/valbench
	$(GO) build -o $(BIN)/btcdreplay ./bench/cmd/btcdreplay
	$(GO) build -tags '$(TAGS)' -o $(BIN)/storebench ./bench/cmd/storebench
	$(GO) build -o $(BIN)/corerest ./testkit/cmd/corerest
	$(GO) build -o $(BIN)/followbench ./bench/cmd/followbench
	$(GO) build -o $(BIN)/addrbench ./bench/cmd/addrbench
	$(GO) build -o $(BIN)/eventsbench ./bench/cmd/eventsbench
	$(GO) build -o $(BIN)/corebench ./bench/cmd/corebench
	$(GO) build -o $(BIN)/scalebench ./bench/cmd/scalebench

# A small performance gate (bench/gate/README.md): the same import,
# control with UTXOD_DEBUG=merklekernel=generic (bench/settings.md) vs the
# candidate's default kernel (auto), ABBA, every store,
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
	$(GO) build -o $(BIN)/gate ./bench/cmd/gate
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
		--control "{bin} import --network {network} --datadir {datadir} --backend {backend} --json $$mode {corpus}" \
		--candidate "{bin} import --network {network} --datadir {datadir} --backend {backend} --json $$mode {corpus}" \
		--control-env UTXOD_DEBUG=merklekernel=generic \
		--control-commit "$$(git rev-parse HEAD 2>/dev/null)" --candidate-commit "$$(git rev-parse HEAD 2>/dev/null)" \
		--out $(GATE_OUT)/custody.json --report $(GATE_OUT)/report.md

# Storage benchmark (bench/results/storage.md): every store, sequentially; generates its corpora under
# $(STOREBENCH_WORK) (≈ 1.5 GB with the default 10^7-coin growth chain) and prints the tables. Phases and
# sizes: see bench/storebench/run.sh (e.g. make bench-storage STOREBENCH_ENV='GROWTH_UTXOS=1000000').
STOREBENCH_OUT  ?= $(BIN)/storebench-out
STOREBENCH_WORK ?= /tmp/storebench-work
.PHONY: bench-storage
bench-storage:
	OUT=$(STOREBENCH_OUT) WORK=$(STOREBENCH_WORK) $(STOREBENCH_ENV) bench/storebench/run.sh
	python3 bench/storebench/report.py $(STOREBENCH_OUT) $(STOREBENCH_OUT)/storage-growth.svg

# Issue 19's assume-valid side by side (bench/results/assumevalid.md): btcdreplay with a checkpoint at the tip
# against utxod's defaults on every store, NONSIG_ROUNDS rounds, order
# reversed each round, on the early corpus of 440k inputs buried under 2017 coinbase-only blocks (generated unless
# NONSIG_CORPUS exists). ≈ 2 min with the defaults on 2 cores.
.PHONY: bench-nonsig
NONSIG_CORPUS ?= $(BIN)/nonsig-out/early440k-bury2017.dat
NONSIG_ROUNDS ?= 5
bench-nonsig: deps-build
	$(GO) build -tags '$(TAGS)' -o $(BIN)/utxod ./cmd/utxod
	$(GO) build -tags '$(TAGS)' -o $(BIN)/chaingen ./testkit/cmd/chaingen
	$(GO) build -o $(BIN)/btcdreplay ./bench/cmd/btcdreplay
	@mkdir -p $(dir $(NONSIG_CORPUS))
	@test -f $(NONSIG_CORPUS) || $(BIN)/chaingen --profile early --target-inputs 440000 --seed 1 --bury 2017 --out $(NONSIG_CORPUS)
	CORPUS=$(NONSIG_CORPUS) UTXOD=$(BIN)/utxod BTCDREPLAY=$(BIN)/btcdreplay python3 bench/scripts/nonsig-side-by-side.py $(NONSIG_ROUNDS)

# Side-by-side full validation (bench/results/validation.md, "btcd replay side by side" and "signature floor"):
# btcdreplay (btcd's blockchain package, full validation) and utxod import on each of VALBENCH_STORES, rotating
# (no arm twice in a row) for VALBENCH_ROUNDS rounds on fresh datadirs, plus the signature floor. Generates the early-profile corpus
# (VALBENCH_INPUTS inputs, seed 1) unless VALBENCH_CORPUS exists. Prints the Markdown table; valbench.json and
# valbench.md go to VALBENCH_OUT. ≈ 3 min with the defaults on 2 cores. Extra driver flags in VALBENCH_FLAGS, e.g.
# make bench-validation VALBENCH_FLAGS='--utxod-args "--cache-mb 100"'.
VALBENCH_INPUTS ?= 100000
VALBENCH_CORPUS ?= $(BIN)/valbench-out/early-$(VALBENCH_INPUTS).dat
VALBENCH_ROUNDS ?= 3
VALBENCH_STORES ?= pebble,rocksdb,bbolt
VALBENCH_OUT    ?= $(BIN)/valbench-out
VALBENCH_FLAGS  ?=
.PHONY: bench-validation
bench-validation: deps-build
	$(GO) build -tags '$(TAGS)' -o $(BIN)/utxod ./cmd/utxod
	$(GO) build -tags '$(TAGS)' -o $(BIN)/chaingen ./testkit/cmd/chaingen
	$(GO) build -o $(BIN)/btcdreplay ./bench/cmd/btcdreplay
	$(GO) build -o $(BIN)/valbench ./bench/cmd/valbench
	@mkdir -p $(VALBENCH_OUT) $(dir $(VALBENCH_CORPUS))
	@test -f $(VALBENCH_CORPUS) || $(BIN)/chaingen --profile early --target-inputs $(VALBENCH_INPUTS) --seed 1 --out $(VALBENCH_CORPUS)
	$(BIN)/valbench --corpus $(VALBENCH_CORPUS) --network regtest --rounds $(VALBENCH_ROUNDS) --stores $(VALBENCH_STORES) \
		--utxod $(BIN)/utxod --btcdreplay $(BIN)/btcdreplay --out $(VALBENCH_OUT) \
		--label "binaries built by make from $$(git rev-parse --short HEAD 2>/dev/null)$$(git diff --quiet HEAD -- 2>/dev/null || echo ' with uncommitted changes')" \
		$(VALBENCH_FLAGS)

# Following against importing (bench/results/follow.md): utxod follow from a Core REST stand-in
# (testkit/cmd/corerest) serving FOLLOWBENCH_CORPUS vs utxod import of the same file, whole
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
	$(GO) build -tags '$(TAGS)' -o $(BIN)/chaingen ./testkit/cmd/chaingen
	$(GO) build -o $(BIN)/corerest ./testkit/cmd/corerest
	$(GO) build -o $(BIN)/followbench ./bench/cmd/followbench
	@mkdir -p $(FOLLOWBENCH_OUT)
	@test -f $(FOLLOWBENCH_CORPUS) || $(BIN)/chaingen --profile early --target-inputs $(FOLLOWBENCH_INPUTS) --seed 1 --out $(FOLLOWBENCH_CORPUS)
	$(BIN)/followbench --utxod $(BIN)/utxod --corerest $(BIN)/corerest --corpus $(FOLLOWBENCH_CORPUS) \
		--network $(FOLLOWBENCH_NETWORK) --backend $(FOLLOWBENCH_BACKEND) --rounds $(FOLLOWBENCH_ROUNDS) \
		--workdir $(FOLLOWBENCH_OUT) --json $(FOLLOWBENCH_OUT)/follow.json $(FOLLOWBENCH_FLAGS)
.PHONY: bench gate

# A mainnet-shaped UTXO set as a Core snapshot (testkit/mainnetgen): writes
# $(OUT)/utxo.dat, $(OUT)/headers.dat (regtest header chain to the base),
# $(OUT)/blocks.dat (signed blocks on the base spending old, then recent coins)
# and $(OUT)/expect.json (digests before and after the blocks, computed by the
# generator). N=185000000 is mainnet's peak: ≈ 9 GB of snapshot, a few tens of
# MiB of memory. GEN_FLAGS: e.g. --old-blocks 40 --recent-blocks 10 --block-txs 3000.
.PHONY: gen-mainnet
N    ?= 185000000
OUT  ?= /work/tmp-scale
SEED ?= 1
GEN_FLAGS ?=
gen-mainnet:
	$(GO) build -o $(BIN)/mainnetgen ./testkit/cmd/mainnetgen
	$(BIN)/mainnetgen --coins $(N) --seed $(SEED) --network regtest --out $(OUT) $(GEN_FLAGS)

# Scale benchmark (bench/results/scale.md): a mainnet-shaped set of N coins
# (mainnetgen, headers to 880,000) loaded with and without the scripthash
# index, the index built afterwards, both digests and a dump, per store, each
# step timed whole-process (wall, CPU, peak RSS) with the datadir sizes, then
# the generated blocks POSTed one by one to utxod serve (p50/p99/max per kind).
# Disk: about 3× the set's datadir under SCALE_WORK. Not part of make test.
# Then bench/cmd/scalebench serves the loaded datadir (lookups under load,
# paging a whale, SIGKILL restarts, a cold page cache; SCALE_BLOCKS: a blk
# file extending the set's tip, POSTed meanwhile) and scans the plain load;
# SCALE_SERVE=0 skips it, SCALE_SERVE_FLAGS passes flags to scalebench serve.
SCALE_WORK        ?= /work/tmp-scale-bench
SCALE_STORES      ?= pebble rocksdb bbolt
SCALE_SERVE       ?= 1
SCALE_SERVE_FLAGS ?=
SCALE_BLOCKS      ?=
.PHONY: bench-scale bench-scale-serve
bench-scale: build
	$(GO) build -o $(BIN)/mainnetgen ./testkit/cmd/mainnetgen
	$(GO) build -o $(BIN)/scalebench ./bench/cmd/scalebench
	BIN=$(BIN) WORK=$(SCALE_WORK) GEN_FLAGS="$(GEN_FLAGS)" SERVE=$(SCALE_SERVE) SERVE_FLAGS="$(SCALE_SERVE_FLAGS)" BLOCKS="$(SCALE_BLOCKS)" \
		sh bench/scripts/scale-bench.sh $(N) "$(SCALE_STORES)"

# scalebench serve alone on a datadir already loaded with the index:
# make bench-scale-serve SCALE_DATADIR=D SCALE_GEN=DIR (mainnetgen's --out:
# utxo.dat, expect.json) [SCALE_BLOCKS=FILE] [SCALE_SERVE_FLAGS=...]; the
# rows go to stdout. Blocks POSTed change the datadir.
SCALE_DATADIR ?=
SCALE_GEN     ?= $(OUT)
bench-scale-serve: build
	$(GO) build -o $(BIN)/scalebench ./bench/cmd/scalebench
	@[ -n "$(SCALE_DATADIR)" ] || { echo "SCALE_DATADIR: the loaded datadir"; exit 2; }
	$(BIN)/scalebench serve --utxod $(BIN)/utxod --datadir $(SCALE_DATADIR) --snapshot $(SCALE_GEN)/utxo.dat \
		--expect $(SCALE_GEN)/expect.json $(if $(SCALE_BLOCKS),--blocks $(SCALE_BLOCKS)) $(SCALE_SERVE_FLAGS)
# Two utxod binaries taking a mainnetgen set's blocks, interleaved, cold and warm page cache (bench/results/scale.md,
# "Overlapping a block's reads"): make bench-block-reads SCALE_GEN=DIR SCALE_DATADIR=D BIN_A=OTHER [ROUNDS=3];
# D (the set loaded with snapshot load --headers) is copied per run and left as it is. Lines: arm mode round kind ms.
BIN_A  ?=
ROUNDS ?= 3
.PHONY: bench-block-reads
bench-block-reads: build
	$(GO) build -o $(BIN)/scalebench ./bench/cmd/scalebench
	@[ -n "$(SCALE_DATADIR)" ] && [ -n "$(BIN_A)" ] || { echo "SCALE_DATADIR and BIN_A are needed"; exit 2; }
	SCALEBENCH=$(BIN)/scalebench sh bench/scripts/block-reads.sh $(SCALE_GEN) $(SCALE_DATADIR) $(BIN_A) $(BIN)/utxod $(ROUNDS)
# Bitcoin Core beside utxod (opt-in; CI never needs it; bench/results/core.md). `make core-build` builds bitcoind
# from source (bench/scripts/build-core.sh, ≈ 20 min on 2 shared cores) and prints its path.
# `make test-core BITCOIND=...` runs the interop test (testkit/coreinterop): utxod follows a real regtest bitcoind
# over REST through a reorg; digests, dumptxoutset and REST answers must equal Core's.
# `make bench-core BITCOIND=...` runs the side-by-side figures (bench/scripts/core-bench.sh).
.PHONY: core-build test-core bench-core
BITCOIND ?=
core-build:
	sh bench/scripts/build-core.sh
test-core:
	@test -n "$(BITCOIND)" || { echo "test-core: set BITCOIND=/path/to/bitcoind (make core-build prints it)"; exit 2; }
	UTXOD_BITCOIND=$(abspath $(BITCOIND)) $(GO) test -count=1 -v -run TestCoreInterop ./testkit/coreinterop/
CORE_ROUNDS ?= 3
CORE_INPUTS ?= 440000
bench-core: deps-build
	@test -n "$(BITCOIND)" || { echo "bench-core: set BITCOIND=/path/to/bitcoind (make core-build prints it)"; exit 2; }
	BIN=$(BIN) GO=$(GO) sh bench/scripts/core-bench.sh $(abspath $(BITCOIND)) $(CORE_ROUNDS) $(CORE_INPUTS)
