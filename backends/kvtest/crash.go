package kvtest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"utxod/backends"
)

// crashDirEnv, when set, turns the Crash subtest of a re-executed test binary
// into the writer child: it writes numbered batches into that directory
// until killed.
const crashDirEnv = "UTXOD_KVTEST_CRASH_DIR"

const (
	crashRounds   = 4
	crashDataKeys = 16
	crashValueLen = 256
)

var crashCounterKey = []byte("crash/ctr")

func crashDataKey(i uint64, j int) []byte { return fmt.Appendf(nil, "crash/d/%010d/%02d", i, j) }

func crashValue(i uint64, j int) []byte {
	v := fmt.Appendf(make([]byte, 0, crashValueLen), "%d.%d|", i, j)
	for len(v) < crashValueLen {
		v = append(v, byte('a'+(int(i)+j+len(v))%26))
	}
	return v
}

// crashBatch is batch i: the counter set to i plus crashDataKeys data keys.
func crashBatch(b *backends.Batch, i uint64) {
	b.Reset()
	for j := 0; j < crashDataKeys/2; j++ {
		b.Put(crashDataKey(i, j), crashValue(i, j))
	}
	b.Put(crashCounterKey, binary.BigEndian.AppendUint64(nil, i))
	for j := crashDataKeys / 2; j < crashDataKeys; j++ {
		b.Put(crashDataKey(i, j), crashValue(i, j))
	}
}

// runPattern turns a test name such as "TestAll/pebble/Crash" into a
// -test.run pattern selecting exactly that test.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// testCrash runs crashRounds rounds of: start a child writing batches (every
// third one with Sync), SIGKILL it at a random moment, reopen and check the
// store holds exactly batches 1..counter, whole, and nothing of later ones,
// with counter >= the last Sync batch the child acknowledged.
func testCrash(t *testing.T, open func(t *testing.T, dir string) backends.KV) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChildMain(t, open, dir)
		return
	}
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	dir := t.TempDir()
	var prev uint64
	for round := 0; round < crashRounds; round++ {
		delay := time.Duration(20+rand.IntN(180)) * time.Millisecond
		synced, ready := runCrashChild(t, dir, delay)
		if ready != prev {
			t.Fatalf("round %d: child found counter %d at start, want %d", round, ready, prev)
		}
		kv := open(t, dir)
		c, err := verifyCrash(kv)
		if cerr := kv.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("round %d (killed after %v): %v", round, delay, err)
		}
		if c < synced {
			t.Fatalf("round %d: counter %d after kill, but batch %d was acknowledged as synced", round, c, synced)
		}
		t.Logf("round %d: killed after %v; %d batches survive (last synced ack %d)", round, delay, c, synced)
		prev = c
	}
	if prev == 0 {
		t.Fatalf("no batch written in %d rounds", crashRounds)
	}
}

// runCrashChild starts the child, waits until it is ready, lets it write for
// delay, kills it and returns the last synced batch it acknowledged and the
// counter it found at start.
func runCrashChild(t *testing.T, dir string, delay time.Duration) (synced, ready uint64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lastSynced atomic.Uint64
	readyc := make(chan uint64, 1)
	var childErr atomic.Value
	scanDone := make(chan struct{})
	go func() {
		defer close(scanDone)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "KVTEST-SYNCED "):
				n, _ := strconv.ParseUint(strings.TrimPrefix(line, "KVTEST-SYNCED "), 10, 64)
				lastSynced.Store(n)
			case strings.HasPrefix(line, "KVTEST-READY "):
				n, _ := strconv.ParseUint(strings.TrimPrefix(line, "KVTEST-READY "), 10, 64)
				readyc <- n
			case strings.HasPrefix(line, "KVTEST-ERROR "):
				childErr.Store(line)
			}
		}
	}()
	select {
	case ready = <-readyc:
	case <-scanDone:
		_ = cmd.Wait()
		t.Fatalf("crash child exited before ready: %v\nstderr: %s", childErr.Load(), stderr.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("crash child not ready after 60s\nstderr: %s", stderr.String())
	}
	time.Sleep(delay)
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatalf("kill: %v", err)
	}
	<-scanDone
	werr := cmd.Wait()
	if e := childErr.Load(); e != nil {
		t.Fatalf("crash child failed: %v", e)
	}
	var exitErr *exec.ExitError
	if !errors.As(werr, &exitErr) || exitErr.ExitCode() != -1 {
		t.Fatalf("crash child was not killed (exited on its own: %v)\nstderr: %s", werr, stderr.String())
	}
	return lastSynced.Load(), ready
}

// crashChildMain is the child: write batches until killed (or 60 s pass).
func crashChildMain(t *testing.T, open func(t *testing.T, dir string) backends.KV, dir string) {
	kv := open(t, dir)
	c, err := readCounter(kv)
	if err != nil {
		fmt.Printf("KVTEST-ERROR read counter: %v\n", err)
		os.Exit(3)
	}
	fmt.Printf("KVTEST-READY %d\n", c)
	b := backends.NewBatch()
	deadline := time.Now().Add(60 * time.Second)
	for i := c + 1; time.Now().Before(deadline); i++ {
		crashBatch(b, i)
		mode := backends.NoSync
		if i%3 == 0 {
			mode = backends.Sync
		}
		if err := kv.Write(b, mode); err != nil {
			fmt.Printf("KVTEST-ERROR write batch %d: %v\n", i, err)
			os.Exit(3)
		}
		if mode == backends.Sync {
			fmt.Printf("KVTEST-SYNCED %d\n", i)
		}
	}
	fmt.Printf("KVTEST-ERROR not killed within 60s\n")
	os.Exit(3)
}

func readCounter(r backends.Reader) (uint64, error) {
	v, err := r.Get(crashCounterKey)
	if errors.Is(err, backends.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("counter has %d bytes", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// verifyCrash checks the prefix property and returns the counter.
func verifyCrash(kv backends.KV) (uint64, error) {
	c, err := readCounter(kv)
	if err != nil {
		return 0, err
	}
	it, err := kv.NewIterator(backends.PrefixRange([]byte("crash/d/")))
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var next uint64 = 1 // expected batch
	j := 0
	for it.Next() {
		var i uint64
		var jj int
		if _, err := fmt.Sscanf(string(it.Key()), "crash/d/%010d/%02d", &i, &jj); err != nil {
			return 0, fmt.Errorf("bad key %q: %v", it.Key(), err)
		}
		if i > c {
			return 0, fmt.Errorf("key %q of batch %d present but counter is %d (torn or reordered batch)", it.Key(), i, c)
		}
		if i != next || jj != j {
			return 0, fmt.Errorf("key %q found, want batch %d key %d (batch missing or partial)", it.Key(), next, j)
		}
		if !bytes.Equal(it.Value(), crashValue(i, jj)) {
			return 0, fmt.Errorf("key %q has a wrong value", it.Key())
		}
		j++
		if j == crashDataKeys {
			j, next = 0, next+1
		}
	}
	if err := it.Err(); err != nil {
		return 0, err
	}
	if j != 0 || next != c+1 {
		return 0, fmt.Errorf("data ends in batch %d key %d, but counter is %d", next, j, c)
	}
	return c, nil
}
