package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"utxod/backends"
)

// TestSnapshotLoadKilled: `utxod snapshot load` killed (SIGKILL) at spread
// instants leaves either no datadir or a complete one with the snapshot's
// digests (the staging directory is renamed only when verified), and the
// next load then succeeds, removing what the killed one left. Every store,
// pebble and RocksDB through their ingested table files.
func TestSnapshotLoadKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ref := referenceAt(t, 14131)
	hs3 := ref["hash_serialized_3"].(string)
	dir := t.TempDir()
	_, file, _ := dumpSample(t, dir)
	stores := []string{"pebble", "bbolt"}
	args := []string{"build", "-o", filepath.Join(dir, "utxod")}
	if backends.Available("rocksdb") == nil {
		stores = append(stores, "rocksdb")
		args = append(args, "-tags", "rocksdb")
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	load := []string{"snapshot", "load", file, "--expect-hash", hs3, "--height", "14131", "--log-level", "warn"}
	check := func(t *testing.T, store, datadir string) {
		t.Helper()
		code, out, errs := runCLI(t, nil, "chainstate", "--datadir", datadir, "--backend", store, "--json", "--hash-type", "hash_serialized_3", "--log-level", "warn")
		var cs map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &cs) != nil {
			t.Fatalf("chainstate of %s: %d %s %s", datadir, code, out, errs)
		}
		if cs["hash_serialized_3"] != hs3 || cs["muhash"] != ref["muhash"] || cs["txouts"] != ref["txouts"] {
			t.Fatalf("chainstate of %s: %v", datadir, cs)
		}
	}
	for _, store := range stores {
		t.Run(store, func(t *testing.T) {
			completed, killed := 0, 0
			for i, delay := range []time.Duration{0, 5, 10, 20, 30, 45, 60, 80, 100, 150, 250, 400, 1500} {
				datadir := filepath.Join(dir, store+"-"+strconv.Itoa(i))
				cmd := exec.Command(filepath.Join(dir, "utxod"), append(load, "--datadir", datadir, "--backend", store)...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(delay * time.Millisecond)
				_ = cmd.Process.Signal(syscall.SIGKILL)
				err := cmd.Wait()
				var ee *exec.ExitError
				if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() {
					killed++
				} else if err != nil {
					t.Fatalf("load after %v: %v", delay, err)
				}
				if _, err := os.Stat(datadir); err == nil {
					completed++
					check(t, store, datadir) // there only when complete and verified
					continue
				}
				// Nothing at the datadir: the next load removes the staging
				// directory the killed one may have left, and succeeds.
				if code, _, errs := runCLI(t, nil, append(load, "--datadir", datadir, "--backend", store)...); code != 0 {
					t.Fatalf("load after a kill at %v: %d %s", delay, code, errs)
				}
				check(t, store, datadir)
				if _, err := os.Stat(datadir + ".snapshot-loading"); !os.IsNotExist(err) {
					t.Fatalf("staging directory left after a complete load: %v", err)
				}
			}
			if killed == 0 {
				t.Fatal("no load was killed: the instants missed the load")
			}
			t.Logf("%d loads killed, %d complete before the kill", killed, completed)
		})
	}
}
