package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The load generator speaks HTTP/1.1 over raw keep-alive connections, one
// goroutine each, closed loop: net/http's client costs several times the CPU
// per request, and the client shares the host's CPUs with the server.

// loadResult is one fixed-time run of GETs.
type loadResult struct {
	wall       time.Duration
	lat        []time.Duration // sorted
	status     map[int]int
	errs       int
	bytes      int64
	clientCPU  time.Duration // this process's user+system during the run
	serverCPU  time.Duration // the server's, from /proc
	firstError error
}

func (r loadResult) n() int { return len(r.lat) }

func (r loadResult) rps() float64 { return float64(r.n()) / r.wall.Seconds() }

func (r loadResult) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[int(p*float64(len(r.lat)-1))]
}

func (r loadResult) max() time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[len(r.lat)-1]
}

// load GETs paths (random picks) on conns connections to addr for d.
// cpu, if not nil, reads the server's CPU time.
func load(ctx context.Context, addr string, paths []string, conns int, d time.Duration, cpu func() time.Duration) loadResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	type worker struct {
		lat    []time.Duration
		status map[int]int
		errs   int
		bytes  int64
		err    error
	}
	ws := make([]worker, conns)
	var wg sync.WaitGroup
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	var s0 time.Duration
	if cpu != nil {
		s0 = cpu()
	}
	start := time.Now()
	for i := range ws {
		w := &ws[i]
		w.status = map[int]int{}
		w.lat = make([]time.Duration, 0, 1<<14)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), uint64(start.UnixNano())))
			var c *rawConn
			for ctx.Err() == nil {
				if c == nil {
					var err error
					if c, err = dial(addr); err != nil {
						w.errs++
						w.err = cmpErr(w.err, err)
						time.Sleep(10 * time.Millisecond)
						continue
					}
				}
				p := paths[rng.IntN(len(paths))]
				t0 := time.Now()
				st, n, err := c.get(p)
				if err != nil {
					c.close()
					c = nil
					if ctx.Err() == nil {
						w.errs++
						w.err = cmpErr(w.err, err)
					}
					continue
				}
				w.lat = append(w.lat, time.Since(t0))
				w.status[st]++
				w.bytes += int64(n)
			}
			if c != nil {
				c.close()
			}
		}()
	}
	wg.Wait()
	r := loadResult{wall: time.Since(start), status: map[int]int{}}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if cpu != nil {
		r.serverCPU = cpu() - s0
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	r.clientCPU = tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)
	for _, w := range ws {
		r.lat = append(r.lat, w.lat...)
		for k, v := range w.status {
			r.status[k] += v
		}
		r.errs += w.errs
		r.bytes += w.bytes
		r.firstError = cmpErr(r.firstError, w.err)
	}
	slices.Sort(r.lat)
	return r
}

func cmpErr(old, err error) error {
	if old != nil {
		return old
	}
	return err
}

type rawConn struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

func dial(addr string) (*rawConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &rawConn{c: c, br: bufio.NewReaderSize(c, 32<<10), bw: bufio.NewWriterSize(c, 4<<10)}, nil
}

func (c *rawConn) close() { c.c.Close() }

var errResponse = errors.New("malformed HTTP response")

// get sends one GET and reads the whole response, returning its status and
// body length.
func (c *rawConn) get(path string) (int, int, error) {
	c.c.SetDeadline(time.Now().Add(30 * time.Second))
	c.bw.WriteString("GET ")
	c.bw.WriteString(path)
	c.bw.WriteString(" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if err := c.bw.Flush(); err != nil {
		return 0, 0, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, 0, fmt.Errorf("%w: %q", errResponse, line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %q", errResponse, line)
	}
	length, chunked, closing := -1, false, false
	for {
		h, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, 0, err
		}
		if len(h) <= 2 {
			break
		}
		k, v, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(v)); err != nil {
				return 0, 0, fmt.Errorf("%w: Content-Length %q", errResponse, v)
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, []byte("Connection")):
			closing = bytes.EqualFold(v, []byte("close"))
		}
	}
	n, err := c.body(length, chunked)
	if err == nil && closing {
		err = errors.New("server closed the connection")
	}
	return status, n, err
}

func (c *rawConn) body(length int, chunked bool) (int, error) {
	if !chunked {
		if length < 0 {
			return 0, fmt.Errorf("%w: no length", errResponse)
		}
		_, err := c.br.Discard(length)
		return length, err
	}
	total := 0
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return total, err
		}
		sz, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(";"))
		n, err := strconv.ParseInt(string(sz), 16, 32)
		if err != nil || n < 0 {
			return total, fmt.Errorf("%w: chunk size %q", errResponse, line)
		}
		if n == 0 {
			for { // trailers up to the blank line
				t, err := c.br.ReadSlice('\n')
				if err != nil {
					return total, err
				}
				if len(t) <= 2 {
					return total, nil
				}
			}
		}
		if _, err := c.br.Discard(int(n) + 2); err != nil {
			return total, err
		}
		total += int(n)
	}
}
