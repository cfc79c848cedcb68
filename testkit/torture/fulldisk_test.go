package torture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds of the full-disk test: a failing import must exit within
// diskExitBound, a request to a server whose disk is full must be answered
// within diskRequestBound, and the server must exit within diskStopBound of
// SIGTERM. Exits take well under 2 s on a quiet machine; the bounds are
// generous because a loaded CI box once took 17 s, and what they catch is a
// hang (pebble used to retry a failed flush forever).
const (
	diskExitBound    = 60 * time.Second
	diskRequestBound = 30 * time.Second
	diskStopBound    = 60 * time.Second
)

// envMinFree is the pre-flush free-space margin (internal/diskspace).
const envMinFree = "UTXOD_MIN_FREE_MB"

// TestFullDisk fills the data directory's disk under every store, each
// scenario on its own small tmpfs (8 MiB):
//
//   - margin: the default 50 MiB margin is more than the tmpfs holds, so the
//     pre-flush check (Core's CheckDiskSpace) refuses the first flush before
//     the store writes anything;
//   - enospc: with the check off (UTXOD_MIN_FREE_MB=0) and 256 KiB free,
//     imports in --stop-height steps (each ending with a flush) run until
//     the store itself meets ENOSPC, at open, in a write or in a
//     background flush (make torture: more free sizes and step sizes);
//   - serve: utxod serve with the check off; blocks are POSTed, each
//     followed by GET /v1/chainstate?hash_type=hash_serialized_3 (which
//     flushes), until an answer is 503 problem+json "disk-full"; the
//     following requests are answered (not hung) and flushes keep failing
//     with disk-full. Then the tmpfs is grown under the running server:
//     bbolt flushes and reaches the final state, pebble and RocksDB keep
//     answering disk-full (they stay stopped until restarted). SIGTERM ends
//     the process (exit 1 when the shutdown flush fails).
//
// Every failing process must name the full disk ("no space left on
// device", "ENOSPC"), exit non-zero within the bound, and not die of a
// signal, a Go panic or fatal error, or a C assertion (Debian's librocksdb
// is built with assertions). After the tmpfs is grown (remount,size=128m)
// the store must reopen at a tip whose every gettxoutsetinfo field equals
// the clean replay there (for imports: the last step that succeeded, or the
// failed step's tip if its batch made it), and an import with the default
// margin must finish at the uninterrupted run's hash_serialized_3.
//
// Needs root (mount -t tmpfs); skipped with a message otherwise. CI runs as
// root.
func TestFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin, _ := binary(t)
	c := testCorpus(t)
	frees := []int64{256}
	steps := []int32{max(c.Height/16, 1)}
	if long() {
		frees = []int64{32, 128, 256, 512}
		steps = append(steps, max(c.Height/7, 1))
	}
	for _, store := range stores(t) {
		t.Run(store, func(t *testing.T) {
			t.Run("margin", func(t *testing.T) { fullDiskMargin(t, bin, c, store) })
			for _, free := range frees {
				for _, step := range steps {
					t.Run(fmt.Sprintf("enospc-free%dk-step%d", free, step), func(t *testing.T) {
						fullDiskImport(t, bin, c, store, free, step)
					})
				}
			}
			t.Run("serve", func(t *testing.T) { fullDiskServe(t, bin, c, store) })
		})
	}
}

// fullDiskMargin: the pre-flush check refuses the flush on a disk with less
// than the margin free.
func fullDiskMargin(t *testing.T, bin string, c *Corpus, store string) {
	mnt := mountTmpfs(t, -1)
	dir := filepath.Join(mnt, store)
	args := append([]string{"import"}, append(importArgs(store, dir), c.File)...)
	start := time.Now()
	code, stderr, hung := runWithTimeout(bin, diskExitBound, []string{envMinFree + "=50"}, args...)
	checkDiskFullExit(t, store+" import", code, stderr, hung, time.Since(start))
	if !strings.Contains(stderr, "margin") {
		t.Fatalf("%s: the import failed, but not at the pre-flush check:\n%s", store, stderr)
	}
	t.Logf("%s: refused by the pre-flush check in %v (exit %d): %s", store, time.Since(start).Round(time.Millisecond), code, firstLines(stderr, 2))
	reopenAfterGrowing(t, bin, c, store, mnt, dir)
}

// fullDiskImport: imports in steps until the store meets ENOSPC.
func fullDiskImport(t *testing.T, bin string, c *Corpus, store string, freeKiB int64, step int32) {
	mnt := mountTmpfs(t, freeKiB)
	dir := filepath.Join(mnt, store)
	env := []string{envMinFree + "=0"}
	lastOK, failedAt := int32(0), int32(-1)
	for h := step; failedAt < 0; h += step {
		h = min(h, c.Height)
		args := append([]string{"import"}, append(importArgs(store, dir), "--stop-height", strconv.Itoa(int(h)), c.File)...)
		start := time.Now()
		code, stderr, hung := runWithTimeout(bin, diskExitBound, env, args...)
		took := time.Since(start)
		if code == 0 && !hung {
			if namesDiskFull(stderr) {
				t.Fatalf("%s: the import exited 0 although a write failed:\n%s", store, stderr)
			}
			lastOK = h
			if h == c.Height {
				break
			}
			continue
		}
		checkDiskFullExit(t, fmt.Sprintf("%s import to %d", store, h), code, stderr, hung, took)
		failedAt = h
		t.Logf("%s: step to height %d failed in %v (exit %d): %s", store, h, took.Round(time.Millisecond), code, firstLines(stderr, 3))
	}
	if failedAt < 0 {
		t.Fatalf("%s: the whole corpus fit in %d KiB; the disk never filled", store, freeKiB)
	}
	tip := reopenAfterGrowing(t, bin, c, store, mnt, dir)
	if tip.height != lastOK && tip.height != failedAt {
		t.Fatalf("%s: reopened at height %d; the last flushed step was %d, the failed one %d", store, tip.height, lastOK, failedAt)
	}
	t.Logf("%s: disk full during the step %d→%d; after growing the tmpfs the store reopened at %d, consistent with the clean replay", store, lastOK, failedAt, tip.height)
}

// fullDiskServe: a server whose disk fills answers disk-full, keeps
// answering, and exits on SIGTERM.
func fullDiskServe(t *testing.T, bin string, c *Corpus, store string) {
	mnt := mountTmpfs(t, 256)
	dir := filepath.Join(mnt, store)
	srv, err := StartServerEnv(bin, dir, []string{envMinFree + "=0"}, serveArgs(store)...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if !srv.Exited() {
			srv.Kill()
		}
	}()
	ctx := context.Background()
	client := &http.Client{Timeout: diskRequestBound}
	// request sends one request; a transport error (timeout, reset) means
	// the server hung or died.
	request := func(what string, do func() (Response, error)) Response {
		t.Helper()
		start := time.Now()
		r, err := do()
		if err != nil {
			t.Fatalf("%s: %s: no answer after %v (hung or crashed): %v\n%s", store, what, time.Since(start).Round(time.Millisecond), err, tail(srv.Stderr.String(), 2000))
		}
		return r
	}
	flush := func(i int) Response {
		return request(fmt.Sprintf("GET hash_serialized_3 after block %d", i), func() (Response, error) {
			return srv.Get(ctx, client, "/v1/chainstate?hash_type=hash_serialized_3")
		})
	}
	post := func(i int) Response {
		return request(fmt.Sprintf("POST block %d", i), func() (Response, error) { return srv.Post(ctx, client, c.Blocks[i]) })
	}
	failed := -1
	for i := range c.Blocks {
		if r := post(i); r.Status == http.StatusServiceUnavailable {
			checkDiskFullProblem(t, store, "POST", r)
			failed = i
			break
		} else if r.Status != http.StatusOK {
			t.Fatalf("%s: POST block %d: %d %s", store, i, r.Status, r.Body)
		}
		if r := flush(i); r.Status == http.StatusServiceUnavailable {
			checkDiskFullProblem(t, store, "GET hash_serialized_3", r)
			failed = i
			break
		} else if r.Status != http.StatusOK {
			t.Fatalf("%s: GET hash_serialized_3 after block %d: %d %s", store, i, r.Status, r.Body)
		}
	}
	if failed < 0 {
		t.Fatalf("%s: every block and flush fit in 256 KiB; the disk never filled", store)
	}
	t.Logf("%s: disk full at block %d: 503 disk-full; server log: %s", store, failed, firstLines(srv.Stderr.String(), 3))
	// Later requests are answered: blocks are still accepted in memory, and
	// every flush fails cleanly again.
	for i := failed + 1; i < min(failed+4, len(c.Blocks)); i++ {
		if r := post(i); r.Status == http.StatusServiceUnavailable {
			checkDiskFullProblem(t, store, "POST", r)
		} else if r.Status != http.StatusOK {
			t.Fatalf("%s: POST block %d after the disk filled: %d %s", store, i, r.Status, r.Body)
		}
		r := flush(i)
		if r.Status != http.StatusServiceUnavailable {
			t.Fatalf("%s: a flush after the disk filled answered %d %s", store, r.Status, r.Body)
		}
		checkDiskFullProblem(t, store, "GET hash_serialized_3", r)
	}
	if r := request("GET /v1/tip", func() (Response, error) { return srv.Get(ctx, client, "/v1/tip") }); r.Status != http.StatusOK {
		t.Fatalf("%s: GET /v1/tip on a full disk: %d %s", store, r.Status, r.Body)
	}
	// Space freed while the server runs: bbolt rolled its failed
	// transactions back, so the next flush writes everything still pending
	// (block index entries included) and the server carries on to the final
	// state; pebble and RocksDB stay stopped until restarted.
	growTmpfs(t, mnt)
	r := flush(failed)
	if store == "bbolt" {
		if r.Status != http.StatusOK {
			t.Fatalf("%s: flush after freeing space: %d %s", store, r.Status, r.Body)
		}
		for i := failed + 4; i < len(c.Blocks); i++ {
			if r := post(i); r.Status != http.StatusOK {
				t.Fatalf("%s: POST block %d after freeing space: %d %s", store, i, r.Status, r.Body)
			}
		}
		checkFinal(t, c, srv, client)
		t.Logf("%s: after freeing space the running server flushed and reached the final state", store)
	} else {
		if r.Status != http.StatusServiceUnavailable {
			t.Fatalf("%s: a stopped store flushed after space was freed (restart expected): %d %s", store, r.Status, r.Body)
		}
		checkDiskFullProblem(t, store, "GET hash_serialized_3 after freeing space", r)
	}
	// SIGTERM: the shutdown flush fails (or succeeds, bbolt) and the
	// process exits, without a crash.
	start := time.Now()
	_ = srv.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-srv.Done():
	case <-time.After(diskStopBound):
		srv.Kill()
		t.Fatalf("%s: no exit %v after SIGTERM on a full disk\n%s", store, diskStopBound, tail(srv.Stderr.String(), 2000))
	}
	code := 0
	var ee *exec.ExitError
	if err := srv.Err(); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	stderr := srv.Stderr.String()
	if crashed(code, stderr) {
		t.Fatalf("%s: the server crashed on a full disk (exit %d):\n%s", store, code, tail(stderr, 4000))
	}
	if !namesDiskFull(stderr) {
		t.Fatalf("%s: the server log does not name the full disk:\n%s", store, tail(stderr, 4000))
	}
	if (code == 0) != (store == "bbolt") {
		t.Fatalf("%s: exit %d after SIGTERM (want 0 only for bbolt, whose shutdown flush succeeds once space is back):\n%s", store, code, tail(stderr, 4000))
	}
	t.Logf("%s: server exited %v after SIGTERM (exit %d)", store, time.Since(start).Round(time.Millisecond), code)
	tip := reopenAfterGrowing(t, bin, c, store, mnt, dir)
	t.Logf("%s: after growing the tmpfs the store reopened at %d, consistent with the clean replay", store, tip.height)
}

// mountTmpfs mounts an 8 MiB tmpfs in a temporary directory (unmounted at
// the end of the test) and fills it so that freeKiB KiB stay free (all of
// it when freeKiB < 0). It skips the test when mounting is not allowed.
func mountTmpfs(t *testing.T, freeKiB int64) string {
	t.Helper()
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	if freeKiB < 0 {
		return mnt
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if err := os.WriteFile(filepath.Join(mnt, "filler"), make([]byte, free-freeKiB<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	return mnt
}

// growTmpfs grows the tmpfs to 128 MiB (more than the default margin
// needs).
func growTmpfs(t *testing.T, mnt string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,size=128m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
}

// reopenAfterGrowing grows the tmpfs, checks the reopened store against the
// clean replay and finishes the import with the default margin; it returns
// the reopened tip.
func reopenAfterGrowing(t *testing.T, bin string, c *Corpus, store, mnt, dir string) tipInfo {
	t.Helper()
	growTmpfs(t, mnt)
	tip := checkInfo(t, c, runChainstate(t, bin, store, dir), "")
	out := runImport(t, bin, append(importArgs(store, dir), "--json", c.File)...)
	if got, err := Canonical(out); err != nil || got != c.Final {
		t.Fatalf("%s: import after freeing space:\n%s\nwant\n%s", store, out, c.Final)
	}
	return tip
}

// checkDiskFullExit asserts a clean disk-full failure of a process.
func checkDiskFullExit(t *testing.T, what string, code int, stderr string, hung bool, took time.Duration) {
	t.Helper()
	switch {
	case hung:
		t.Fatalf("%s: no exit within %v on a full disk (killed); stderr (%d bytes) ends %q", what, diskExitBound, len(stderr), tail(stderr, 1500))
	case crashed(code, stderr):
		t.Fatalf("%s: crashed on a full disk (exit %d after %v):\n%s", what, code, took, tail(stderr, 4000))
	case code == 0:
		t.Fatalf("%s: exit 0 on a full disk:\n%s", what, stderr)
	case !namesDiskFull(stderr):
		t.Fatalf("%s: exit %d without naming the full disk (ENOSPC, no space left on device):\n%s", what, code, stderr)
	}
}

// checkDiskFullProblem asserts a 503 problem+json with reason disk-full.
func checkDiskFullProblem(t *testing.T, store, what string, r Response) {
	t.Helper()
	var p struct {
		Status int    `json:"status"`
		Reason string `json:"reason"`
		Detail string `json:"detail"`
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("%s: %s answered %d with %q: %s", store, what, r.Status, ct, r.Body)
	}
	if err := json.Unmarshal(r.Body, &p); err != nil || p.Reason != "disk-full" || p.Status != r.Status || !strings.Contains(p.Detail, "ENOSPC") {
		t.Fatalf("%s: %s: %d %s", store, what, r.Status, r.Body)
	}
}

// namesDiskFull: the message says the disk is full, naming ENOSPC.
func namesDiskFull(s string) bool {
	return strings.Contains(s, "ENOSPC") && strings.Contains(strings.ToLower(s), "no space left on device")
}

// crashed: killed by a signal, or a Go panic / fatal error or a C
// assertion in the output.
func crashed(code int, stderr string) bool {
	if code < 0 {
		return true
	}
	for _, m := range []string{"panic:", "fatal error:", "SIGABRT", "SIGSEGV", "SIGBUS", "Assertion", "goroutine 1 ["} {
		if strings.Contains(stderr, m) {
			return true
		}
	}
	return false
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// runWithTimeout runs bin with env added to this process's environment and
// returns its exit code (-1 when a signal ended it) and the first 64 KiB of
// stderr; a run longer than timeout is SIGKILLed and reported as hung.
func runWithTimeout(bin string, timeout time.Duration, env []string, args ...string) (code int, stderr string, hung bool) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var buf limitedBuffer
	buf.max = 64 << 10
	cmd.Stderr = &buf
	if err := cmd.Start(); err != nil {
		return -1, err.Error(), false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return -1, buf.String(), true
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), buf.String(), false
	}
	if err != nil {
		return -1, err.Error(), false
	}
	return 0, buf.String(), false
}

// limitedBuffer keeps the first max bytes written (a store logging in a
// loop must not fill the test's memory).
type limitedBuffer struct {
	b   bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return l.b.String() }
