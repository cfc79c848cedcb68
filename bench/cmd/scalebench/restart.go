package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// restart kills the server with SIGKILL while it serves lookups (and, every
// other time when blocks are given, while a block POST is in flight),
// restarts it and times the restart until /healthz is ok and a lookup
// answers.
func (r *runState) restart(ctx context.Context) error {
	var took []time.Duration
	var notes []string
	for i := range r.c.restarts {
		duringPost := r.blocks != nil && i%2 == 1
		before, _ := r.tip()
		lctx, cancel := context.WithCancel(ctx)
		loaded := make(chan loadResult, 1)
		go func() { loaded <- load(lctx, r.s.addr, r.smp.outpoints, r.c.conns, time.Minute, nil) }()
		posted := make(chan postStats, 1)
		if duringPost {
			inFlight := make(chan struct{})
			go func() { posted <- r.blocks.post(lctx, r.s, before, 0, inFlight) }()
			<-inFlight
			time.Sleep(500 * time.Millisecond)
		} else {
			time.Sleep(2 * time.Second)
		}
		r.s.kill()
		cancel()
		<-loaded
		note := "lookups"
		if duringPost {
			st := <-posted
			note = fmt.Sprintf("lookups and back-to-back block POSTs (%d accepted; a POST cut by the kill: %t)", len(st.lat), st.lastErr != nil)
		}
		h, d, err := r.start()
		if err != nil {
			return err
		}
		r.t.Log.Info("restarted after SIGKILL", "under", note, "seconds", d.Seconds(), "tip_before", before, "tip_after", h.Height)
		took = append(took, d)
		notes = append(notes, fmt.Sprintf("%s (under %s; tip %d → %d)", secs(d), note, before, h.Height))
	}
	slices.Sort(took)
	r.row("restart after SIGKILL → /healthz ok and a lookup answered",
		fmt.Sprintf("median %s of %d: %s", secs(took[len(took)/2]), len(took), strings.Join(notes, "; ")), "≤ 10 s")
	return nil
}

// cold stops the server, drops the datadir from the page cache, restarts
// it and measures outpoint lookups in windows until they are back to 90 % of
// the warm median rate.
func (r *runState) cold(ctx context.Context) error {
	if len(r.warm) == 0 {
		return fmt.Errorf("needs the lookups phase first (the warm rate)")
	}
	warm := make([]float64, len(r.warm))
	for i, x := range r.warm {
		warm[i] = x.rps()
	}
	slices.Sort(warm)
	target := 0.9 * warm[len(warm)/2]
	if err := r.s.stop(); err != nil {
		return err
	}
	r.s = nil
	dir := r.c.server.datadir
	res0, total, err := resident(dir)
	if err != nil {
		return err
	}
	if err := dropCache(dir); err != nil {
		return err
	}
	res1, _, err := resident(dir)
	if err != nil {
		return err
	}
	h, took, err := r.start()
	if err != nil {
		return err
	}
	res2, _, _ := resident(dir)
	r.row("page cache dropped (fadvise DONTNEED, mincore): datadir resident before → after → once serving",
		fmt.Sprintf("%s → %s → %s", fraction(res0, total), fraction(res1, total), fraction(res2, total)), "")
	r.row("start with the page cache cold → /healthz ok and a lookup answered", fmt.Sprintf("%s (tip %d)", secs(took), h.Height), "")
	var wins []string
	reached := time.Duration(-1)
	var rs []loadResult
	for w := range r.c.coldWindows {
		res, st, err := r.load(ctx, r.smp.outpoints, r.c.window)
		if err != nil {
			return err
		}
		rs = append(rs, res)
		b := ""
		if r.blocks != nil {
			b = fmt.Sprintf(", %d blocks", len(st.lat))
		}
		wins = append(wins, fmt.Sprintf("%.0f req/s p99 %s%s", res.rps(), ms(res.pct(.99)), b))
		if res.rps() >= target {
			reached = took + time.Duration(w+1)*r.c.window
			break
		}
	}
	resEnd, _, _ := resident(dir)
	back := fmt.Sprintf("not within %d windows", len(rs))
	if reached >= 0 {
		back = fmt.Sprintf("≤ %s after the start", secs(reached))
	}
	r.row(fmt.Sprintf("`GET /v1/utxos/{txid}/{vout}` after the cold start, per %v window%s", r.c.window, r.blocksNote()),
		fmt.Sprintf("%s; back to ≥ 90 %% of the warm %.0f req/s: %s; datadir resident then %s",
			strings.Join(wins, " · "), warm[len(warm)/2], back, fraction(resEnd, total)), "")
	return nil
}
