package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"utxod/internal/cli"
)

// runScan measures POST /v1/scan (Core's scantxoutset) of the largest
// whale's script on a datadir without the scripthash index: every coin is
// read.
func runScan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	t := cli.New("scalebench scan", usage, stdout, stderr)
	fs := t.Flags
	var c serveConfig
	fs.StringVar(&c.server.utxod, "utxod", "bin/utxod", "utxod executable")
	fs.StringVar(&c.server.datadir, "datadir", "", "a loaded datadir WITHOUT the scripthash index (required)")
	fs.StringVar(&c.server.extra, "server-args", "", "extra flags for utxod serve, space-separated")
	fs.StringVar(&c.snapshot, "snapshot", "", "the snapshot the datadir was loaded from (required)")
	fs.StringVar(&c.expect, "expect", "", "mainnetgen's expect.json (the whales)")
	fs.StringVar(&c.label, "label", "", "first column of the rows (default: the datadir's store)")
	fs.IntVar(&c.rounds, "rounds", 3, "scans, the median reported")
	if code, done := t.Parse(args); done {
		return code
	}
	if c.server.datadir == "" || c.snapshot == "" || fs.NArg() != 0 || c.rounds < 1 {
		return t.UsageError(errors.New("--datadir and --snapshot are required, no arguments; --rounds positive"))
	}
	if c.label == "" {
		c.label = storeOf(c.server.datadir)
	}
	row, err := measureScan(c, t)
	if err != nil {
		return t.Fail(err)
	}
	io.WriteString(stdout, row)
	return cli.ExitOK
}

func measureScan(c serveConfig, t *cli.Tool) (string, error) {
	smp, err := readSample(c.snapshot, c.expect, 1000)
	if err != nil {
		return "", err
	}
	c.server.network = smp.net.Name
	if c.server.addr, err = freePort(); err != nil {
		return "", err
	}
	t0 := time.Now()
	s, err := startServer(c.server)
	if err != nil {
		return "", err
	}
	defer s.kill()
	if _, _, err := s.waitHealthy(t0, smp.outpoints[0], 10*time.Minute); err != nil {
		return "", err
	}
	body, _ := json.Marshal(map[string]any{"action": "start", "scanobjects": []string{"raw(" + hex.EncodeToString(smp.whale) + ")"}})
	var rates, cpu []float64
	var res struct {
		Success  bool              `json:"success"`
		TxOuts   uint64            `json:"txouts"`
		Unspents []json.RawMessage `json:"unspents"`
	}
	for range c.rounds {
		c0, t0 := s.cpu(), time.Now()
		resp, err := postClient.Post(s.base()+"/v1/scan", "application/json", bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		d, dc := time.Since(t0), s.cpu()-c0
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("POST /v1/scan: %d %s", resp.StatusCode, b)
		}
		if err := json.Unmarshal(b, &res); err != nil {
			return "", err
		}
		if !res.Success || res.TxOuts != smp.coins {
			return "", fmt.Errorf("POST /v1/scan: success %t, %d txouts scanned, the set has %d (does the datadir have the index?)", res.Success, res.TxOuts, smp.coins)
		}
		if smp.whaleN != 0 && uint64(len(res.Unspents)) != smp.whaleN {
			return "", fmt.Errorf("POST /v1/scan found %d coins of the whale, expect.json has %d", len(res.Unspents), smp.whaleN)
		}
		rates, cpu = append(rates, float64(res.TxOuts)/d.Seconds()), append(cpu, float64(res.TxOuts)/dc.Seconds())
		t.Log.Info("scanned", "txouts", res.TxOuts, "found", len(res.Unspents), "seconds", d.Seconds())
	}
	if err := s.stop(); err != nil {
		return "", err
	}
	slices.Sort(rates)
	slices.Sort(cpu)
	return fmt.Sprintf("| %s | `POST /v1/scan` of `raw(<largest whale>)` without the index (%d coins read, %d found) | %.2f M coins/s (%.2f–%.2f, %d scans); %.1f M coins per second of the server's CPU | ≥ 5 M coins/s |\n",
		c.label, res.TxOuts, len(res.Unspents), rates[len(rates)/2]/1e6, rates[0]/1e6, rates[len(rates)-1]/1e6, len(rates), cpu[len(cpu)/2]/1e6), nil
}
