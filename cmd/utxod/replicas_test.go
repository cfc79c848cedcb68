package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// utxodBinary builds utxod into the test's temporary directory.
func utxodBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "utxod")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// proc is a utxod serve process.
type proc struct {
	name, datadir string
	args          []string
	cmd           *exec.Cmd
	base          string
	addr          string
	log           *bytes.Buffer
	mu            sync.Mutex
	exited        chan error
}

// startProc starts "utxod serve" with args on addr (host:port; port 0 picks
// one) and waits until it listens.
func startProc(t *testing.T, bin, name, addr, datadir string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, datadir: datadir, args: args, addr: addr, log: &bytes.Buffer{}}
	p.start(t, bin)
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *proc) start(t *testing.T, bin string) {
	t.Helper()
	args := append([]string{"serve", "--listen", p.addr, "--datadir", p.datadir, "--log-level", "warn"}, p.args...)
	p.cmd = exec.Command(bin, args...)
	pr, pw := io.Pipe()
	p.cmd.Stderr = pw
	p.exited = make(chan error, 1)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait(); pw.Close() }()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if _, rest, ok := strings.Cut(line, "listening on http://"); ok {
				a, _, _ := strings.Cut(rest, " ")
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		p.addr, p.base = a, "http://"+a
	case err := <-p.exited:
		t.Fatalf("%s exited: %v\n%s", p.name, err, p.logs())
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not start\n%s", p.name, p.logs())
	}
}

func (p *proc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if sig == syscall.SIGTERM && err != nil {
			t.Fatalf("%s: exit after SIGTERM: %v\n%s", p.name, err, p.logs())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not exit after %v", p.name, sig)
	}
}

// height is the node's tip height (-1 if it does not answer).
func height(base string) int {
	resp, err := http.Get(base + "/v1/tip")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`"height":(-?\d+)`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	h, _ := strconv.Atoi(string(m[1]))
	return h
}

// digests is the node's gettxoutsetinfo with both digests.
func digests(t *testing.T, base string) map[string]any {
	t.Helper()
	got := getJSON(t, base+"/v1/chainstate?hash_type=hash_serialized_3")
	return got
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// routeCount reads utxod_http_requests_total for a GET route with status
// 200 from a node's /metrics.
func routeCount(t *testing.T, base, route string) int {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	re := regexp.MustCompile(`utxod_http_requests_total\{code="200",method="GET",route="` + regexp.QuoteMeta(route) + `"\} (\d+)`)
	m := re.FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// TestReplicas: one primary follows a (fake) Core node with --archive, two
// replicas follow the primary, separate processes on their own datadirs.
// At each height every node reports the same digests (the reference ones
// where testdata has them); a replica SIGKILLed while it follows restarts
// on its datadir, resumes and catches up with equal digests; with HAProxy
// installed, reads through it spread over both replicas.
func TestReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs utxod processes")
	}
	bin := utxodBinary(t)
	src, srcURL := fakeCore(t, 2016, 1000)
	// Slow block downloads so that a replica is mid-catch-up long enough
	// to be killed there.
	src.SetDelay(3 * time.Millisecond)
	dir := t.TempDir()
	poll := []string{"--follow-poll", "50ms", "--follow-flush", "200ms"}
	primary := startProc(t, bin, "primary", "127.0.0.1:0", filepath.Join(dir, "primary"), append([]string{"--follow", srcURL, "--archive"}, poll...)...)
	replicas := []*proc{
		startProc(t, bin, "replica1", "127.0.0.1:0", filepath.Join(dir, "r1"), append([]string{"--follow", primary.base}, poll...)...),
		startProc(t, bin, "replica2", "127.0.0.1:0", filepath.Join(dir, "r2"), append([]string{"--follow", primary.base}, poll...)...),
	}
	nodes := append([]*proc{primary}, replicas...)
	sameDigests := func(height int) map[string]any {
		t.Helper()
		for _, n := range nodes {
			waitInSync(t, n.base, height)
		}
		want := digests(t, primary.base)
		for _, n := range nodes {
			got := digests(t, n.base)
			for _, k := range []string{"height", "bestblock", "txouts", "bogosize", "transactions", "total_amount_sat", "muhash", "hash_serialized_3"} {
				if fmt.Sprint(got[k]) != fmt.Sprint(want[k]) {
					t.Fatalf("height %d: %s %s = %v, primary %v", height, n.name, k, got[k], want[k])
				}
			}
		}
		return want
	}
	checkDigests(t, "nodes at 1000", sameDigests(1000), referenceAt(t, 1000))

	t.Run("haproxy", func(t *testing.T) {
		hp, err := exec.LookPath("haproxy")
		if err != nil {
			t.Skip("haproxy is not installed (Debian: apt-get install -y haproxy); the load-balancer spread is not checked")
		}
		lb := freeAddr(t)
		cmd := exec.Command(hp, "-db", "-f", "../../deploy/haproxy/haproxy.cfg")
		cmd.Env = append(os.Environ(), "LB_ADDR="+lb, "PRIMARY_ADDR="+primary.addr, "REPLICA1_ADDR="+replicas[0].addr, "REPLICA2_ADDR="+replicas[1].addr)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		before := []int{routeCount(t, replicas[0].base, "/v1/chainstate"), routeCount(t, replicas[1].base, "/v1/chainstate")}
		served := map[string]int{}
		deadline := time.Now().Add(30 * time.Second)
		for served["replica1"] < 10 || served["replica2"] < 10 {
			if time.Now().After(deadline) {
				t.Fatalf("reads through haproxy went to %v\n%s", served, out.String())
			}
			resp, err := http.Get("http://" + lb + "/v1/chainstate")
			if err != nil {
				time.Sleep(50 * time.Millisecond) // haproxy starting, or checks not passed yet
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				served[resp.Header.Get("X-Utxod-Server")]++
			}
		}
		// The replicas' own counters agree: the reads reached them.
		for i, r := range replicas {
			if n := routeCount(t, r.base, "/v1/chainstate") - before[i]; n < served[r.name] {
				t.Errorf("%s counted %d reads, haproxy sent %d", r.name, n, served[r.name])
			}
		}
		if served["primary"] != 0 {
			t.Errorf("the primary served %d reads while both replicas were in sync", served["primary"])
		}
		t.Logf("reads through haproxy: %v", served)
	})

	// The source moves to 1500; replica2 is SIGKILLed while catching up.
	src.Reveal(1500 + 1)
	victim := replicas[1]
	deadline := time.Now().Add(60 * time.Second)
	for h := height(victim.base); h < 1100; h = height(victim.base) {
		if time.Now().After(deadline) {
			t.Fatalf("%s stuck at %d", victim.name, h)
		}
		time.Sleep(2 * time.Millisecond)
	}
	killedAt := height(victim.base)
	victim.signal(t, syscall.SIGKILL)
	if killedAt >= 1500 {
		t.Logf("%s had caught up (%d) before the kill", victim.name, killedAt)
	}
	victim.start(t, bin)
	// It reports where it reopened: the flushed tip, no higher than what
	// it had connected (the follower flushes again only once caught up).
	if f := getJSON(t, victim.base+"/healthz")["flushed_height"].(float64); f < 1000 || int(f) > max(killedAt, 1500) {
		t.Errorf("%s killed at %d reports flushed_height %v after the restart", victim.name, killedAt, f)
	}
	reopened := height(victim.base)
	t.Logf("%s killed at height %d, reopened at %d", victim.name, killedAt, reopened)
	// Blocks keep connecting between the height read and the signal, so
	// the reopened tip is bounded by the source's tip, not by killedAt.
	if reopened > 1500 || reopened < 1000 {
		t.Errorf("%s reopened at %d after a kill at %d (want its last flushed tip: at least 1000, at most the source's 1500)", victim.name, reopened, killedAt)
	}
	sameDigests(1500)

	src.RevealAll()
	checkDigests(t, "nodes at 2016", sameDigests(2016), referenceAt(t, 2016))
	for _, n := range nodes {
		n.signal(t, syscall.SIGTERM)
	}
}
