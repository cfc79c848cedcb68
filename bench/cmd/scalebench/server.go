package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// server is one utxod serve child on a fixed loopback port, so that a
// restart can be polled from the moment it is started.
type server struct {
	cmd    *exec.Cmd
	addr   string // host:port
	token  string
	exited chan struct{} // closed when the process is gone
	err    error         // its exit status then
	mu     sync.Mutex
	log    bytes.Buffer
}

type serverConfig struct {
	utxod, datadir, network, extra, addr string
	cpuprofile                           string
}

// freePort picks a loopback port that is free now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startServer starts utxod serve and returns at once; waitHealthy waits for
// it.
func startServer(c serverConfig) (*server, error) {
	args := []string{"serve", "--datadir", c.datadir, "--network", c.network, "--listen", c.addr, "--log-level", "warn"}
	if c.cpuprofile != "" {
		args = append(args, "--cpuprofile", c.cpuprofile)
	}
	args = append(args, strings.Fields(c.extra)...)
	s := &server{cmd: exec.Command(c.utxod, args...), addr: c.addr, exited: make(chan struct{})}
	pr, pw := io.Pipe()
	s.cmd.Stderr = pw
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.err = s.cmd.Wait(); pw.Close(); close(s.exited) }()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.mu.Lock()
			if s.log.Len() < 1<<20 {
				s.log.WriteString(sc.Text() + "\n")
			}
			s.mu.Unlock()
		}
	}()
	return s, nil
}

func (s *server) logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

func (s *server) base() string { return "http://" + s.addr }

// health is what /healthz answers.
type health struct {
	Status        string `json:"status"`
	Height        int32  `json:"height"`
	Tip           string `json:"tip"`
	FlushedHeight int32  `json:"flushed_height"`
}

var quickClient = &http.Client{Timeout: 2 * time.Second}

// waitHealthy polls until /healthz answers ok and probe (a lookup path)
// answers from the store, and returns the health and the time since start.
func (s *server) waitHealthy(start time.Time, probe string, limit time.Duration) (health, time.Duration, error) {
	for time.Since(start) < limit {
		select {
		case <-s.exited:
			return health{}, 0, fmt.Errorf("utxod serve exited: %v\n%s", s.err, s.logs())
		default:
		}
		var h health
		if err := getJSON(quickClient, s.base()+"/healthz", &h); err == nil && h.Status == "ok" {
			resp, err := quickClient.Get(s.base() + probe)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 || resp.StatusCode == 404 { // 404: spent by a POSTed block
					return h, time.Since(start), nil
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.cmd.Process.Kill()
	return health{}, 0, fmt.Errorf("utxod serve not healthy after %v\n%s", limit, s.logs())
}

// readToken reads the write token from the datadir's cookie file.
func (s *server) readToken(datadir string) error {
	b, err := os.ReadFile(filepath.Join(datadir, ".cookie"))
	if err != nil {
		return err
	}
	s.token = strings.TrimSpace(string(b))
	return nil
}

// kill ends the server with SIGKILL and waits for it.
func (s *server) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// stop ends the server with SIGTERM (a clean shutdown flushes the chainstate
// and writes the CPU profile).
func (s *server) stop() error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return s.err
	case <-time.After(5 * time.Minute):
		s.kill()
		return errors.New("utxod serve did not stop after SIGTERM")
	}
}

// cpu is the server's user+system CPU time so far (/proc/PID/stat).
func (s *server) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond // USER_HZ 100
}

func getJSON(c *http.Client, url string, v any) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
