package main

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"utxod/backends"
)

// missingBackend is registered as unavailable, as the rocksdb stub is in a
// build without -tags rocksdb, so the refusal is tested in every build.
const missingBackend = "test-missing-store"

func init() {
	backends.RegisterUnavailable(missingBackend, fmt.Errorf("%w: build with -tags testmissing (apt-get install -y libtestmissing-dev)", backends.ErrUnavailable))
}

func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func oneLine(t *testing.T, s string) {
	t.Helper()
	if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
		t.Errorf("want exactly one line on stderr, got %q", s)
	}
}

func TestHelpExitsZero(t *testing.T) {
	names := []string{"help"}
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, h := range []string{"--help", "-h", "-help"} {
			t.Run(name+h, func(t *testing.T) {
				args := []string{name, h}
				if name == "help" {
					args = []string{h}
				}
				code, out, errs := runCLI(t, nil, args...)
				if code != 0 || !strings.Contains(out, "Usage") || errs != "" {
					t.Fatalf("exit %d, stdout %q, stderr %q; want 0 with the usage on stdout only", code, out, errs)
				}
			})
		}
	}
}

func TestBadFlagsExitTwo(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string // in the one stderr line
	}{
		{"unknown flag", nil, []string{"--no-such-flag"}, "no-such-flag"},
		{"bad int", nil, []string{"--cache-mb", "lots"}, "cache-mb"},
		{"negative cache", nil, []string{"--cache-mb", "-1"}, "cache-mb"},
		{"bad network", nil, []string{"--network", "mainnet2"}, "network"},
		{"unknown backend", nil, []string{"--backend", "leveldb"}, "leveldb"},
		{"retired flag", nil, []string{"--merkle-kernel", "generic"}, "merkle-kernel"},
		{"unknown debug setting", map[string]string{"UTXOD_DEBUG": "nosuch=1"}, nil, "UTXOD_DEBUG"},
		{"bad debug kernel", map[string]string{"UTXOD_DEBUG": "merklekernel=sse9"}, nil, "merklekernel"},
		{"bad log level", nil, []string{"--log-level", "loud"}, "log-level"},
		{"bad env int", map[string]string{"UTXOD_CACHE_MB": "lots"}, nil, "UTXOD_CACHE_MB"},
		{"bad env network", map[string]string{"UTXOD_NETWORK": "moon"}, nil, "network"},
	}
	for _, cmd := range []string{"import", "chainstate", "serve", "follow"} {
		for _, c := range cases {
			t.Run(cmd+"/"+c.name, func(t *testing.T) {
				args := append([]string{cmd}, c.args...)
				// Enough for each command to get past its required arguments.
				switch cmd {
				case "import":
					args = append(args, "no-such-file.dat")
				case "chainstate":
					args = append(args, "--datadir", t.TempDir())
				case "serve":
					args = append(args, "--listen", "127.0.0.1:0")
				case "follow":
					args = append(args, "--follow", "http://127.0.0.1:1")
				}
				code, out, errs := runCLI(t, c.env, args...)
				if code != 2 || out != "" {
					t.Fatalf("exit %d, stdout %q, stderr %q; want 2", code, out, errs)
				}
				oneLine(t, errs)
				if !strings.Contains(errs, c.want) {
					t.Errorf("stderr %q does not name %q", errs, c.want)
				}
			})
		}
	}
}

func TestMissingBackendRefused(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--backend", missingBackend, "--datadir", t.TempDir(), "--listen", "127.0.0.1:0"},
		{"import", "--backend", missingBackend, "--datadir", t.TempDir(), "no-such-file.dat"},
		{"chainstate", "--backend", missingBackend, "--datadir", t.TempDir()},
	} {
		t.Run(args[0], func(t *testing.T) {
			code, _, errs := runCLI(t, nil, args...)
			if code == 0 {
				t.Fatalf("exit 0 with a store this build lacks; stderr %q", errs)
			}
			oneLine(t, errs)
			if !strings.Contains(errs, "-tags testmissing") || !strings.Contains(errs, "libtestmissing-dev") {
				t.Errorf("stderr %q does not name the build tag and the package", errs)
			}
		})
	}
	if err := backends.Available(missingBackend); !errors.Is(err, backends.ErrUnavailable) {
		t.Fatal(err)
	}
}

// retiredFlags are the arms of settled experiments: each was fixed at its
// chosen value and its flag removed with the losing code path.
var retiredFlags = []string{
	"script-engine", "merkle-kernel", "early-sync", "store-compression", "block-files", "undo-files",
	"store-counts-txs", "trust-cache-misses", "no-muhash", "muhash-async", "prefetch", "pipeline", "api-procs",
}

// TestRetiredFlags: no command's --help lists a retired flag, and passing
// one is the usual unknown-flag usage error.
func TestRetiredFlags(t *testing.T) {
	for _, cmd := range [][]string{
		{"import"}, {"serve"}, {"follow"}, {"chainstate"}, {"snapshot", "load"}, {"snapshot", "dump"},
		{"snapshot", "verify"}, {"index", "build"}, {"index", "drop"}, {"index", "verify"},
	} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, nil, append(cmd, "--help")...)
			if code != 0 {
				t.Fatalf("--help: exit %d: %s", code, errs)
			}
			for _, f := range retiredFlags {
				if strings.Contains(out, "  -"+f+" ") || strings.Contains(out, "  -"+f+"\n") {
					t.Errorf("--help lists --%s", f)
				}
				code, _, errs := runCLI(t, nil, append(cmd, "--"+f, "1")...)
				if code != 2 || !strings.Contains(errs, "flag provided but not defined: -"+f) {
					t.Errorf("--%s: exit %d, stderr %q; want the unknown-flag error", f, code, errs)
				}
			}
		})
	}
}

// TestLimitMemory: the Go heap's soft limit follows --cache-mb unless
// GOMEMLIMIT is set, which the runtime read at start and utxod leaves be,
// or the store is bbolt.
func TestLimitMemory(t *testing.T) {
	was := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(was) })
	for _, tc := range []struct {
		env     string
		cacheMB int
		backend string
		want    int64
	}{
		{"", 450, "pebble", 225<<20 + 1280<<20},
		{"", 0, "rocksdb", 1280 << 20},
		{"", 4000, "pebble", 2000<<20 + 1280<<20},
		{"", 450, "bbolt", 450<<20 + 1280<<20}, // no block cache or memtables beside the heap
		{"3GiB", 450, "pebble", 777 << 20},     // left as it was
	} {
		debug.SetMemoryLimit(777 << 20)
		t.Setenv("GOMEMLIMIT", tc.env)
		limitMemory(tc.cacheMB, tc.backend)
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("GOMEMLIMIT=%q --cache-mb %d --backend %s: limit %d MiB, want %d MiB", tc.env, tc.cacheMB, tc.backend, got>>20, tc.want>>20)
		}
	}
}
