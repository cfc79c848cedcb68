package api

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"utxod/address"
	"utxod/events"
)

// TestEventsScale measures the event streams at scale through real HTTP
// (bench/results/events.md): UTXOD_EVENTS_STREAMS SSE streams (default
// 9,800: client and server share this process's descriptors) each
// watching UTXOD_EVENTS_SCRIPTS scripts (default 100), and blocks paying
// one watched script of every tenth stream; every stream asks for blocks.
// It reports the heap per watched script and per stream and the delay from
// ProcessBlock's return to each client's block_connected (p50, p99, max).
//
//	UTXOD_EVENTS_SCALE=1 go test -tags rocksdb -run TestEventsScale -v -timeout 30m ./api
func TestEventsScale(t *testing.T) {
	if os.Getenv("UTXOD_EVENTS_SCALE") == "" {
		t.Skip("set UTXOD_EVENTS_SCALE=1")
	}
	streams, scripts, blocks := envInt("UTXOD_EVENTS_STREAMS", 9800), envInt("UTXOD_EVENTS_SCRIPTS", 100), envInt("UTXOD_EVENTS_BLOCKS", 30)
	n := newEventsNet(t, 0, events.Config{MaxStreams: streams, MaxWatched: streams * scripts})
	n.waitHub()
	// Scripts: stream i watches P2WSH(sha256(i, j)) for j < scripts.
	script := func(i, j int) []byte {
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:], uint32(i))
		binary.LittleEndian.PutUint32(b[4:], uint32(j))
		h := sha256.Sum256(b[:])
		return address.WitnessScript(0, h[:])
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	ids := make([]string, streams)
	for i := range streams {
		shs := make([]string, scripts)
		for j := range scripts {
			h := sha256.Sum256(script(i, j))
			shs[j] = hex.EncodeToString(h[:])
		}
		body, _ := json.Marshal(SubscriptionRequest{Scripthashes: shs, Blocks: true})
		resp, err := http.Post(n.ts.URL+"/v1/subscriptions", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		var sub Subscription
		json.NewDecoder(resp.Body).Decode(&sub)
		resp.Body.Close()
		ids[i] = sub.ID
	}
	before := heap()
	tr := &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}
	client := &http.Client{Transport: tr}
	type recv struct {
		height int
		at     time.Time
	}
	got := make([][]recv, streams)
	var ready, done sync.WaitGroup
	for i := range streams {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			resp, err := client.Get(n.ts.URL + "/v1/events?subscription=" + ids[i])
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("stream %d: %v %v", i, err, resp)
				ready.Done()
				return
			}
			ready.Done()
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			block := false
			for sc.Scan() {
				line := sc.Text()
				switch {
				case line == "event: block_connected":
					block = true
				case block && strings.HasPrefix(line, "id: "):
					h, _, _ := strings.Cut(line[4:], ":")
					height, _ := strconv.Atoi(h)
					got[i] = append(got[i], recv{height, time.Now()})
					block = false
					if len(got[i]) == blocks {
						return
					}
				}
			}
		}()
	}
	ready.Wait()
	for watched, open := n.hub.Watched(); open < streams; watched, open = n.hub.Watched() {
		_ = watched
		time.Sleep(10 * time.Millisecond)
	}
	after := heap()
	watched, _ := n.hub.Watched()
	t.Logf("%d streams open, %d scripts watched; heap %.1f MiB with them, %.0f B per stream (connections included), %.1f B per watched script",
		streams, watched, float64(after-before)/(1<<20), float64(after-before)/float64(streams), float64(after-before)/float64(watched))

	connected := make(map[int]time.Time)
	var connectTimes []time.Duration
	for b := range blocks {
		var outs []payout
		for i := b % 10; i < streams; i += 10 {
			outs = append(outs, payout{script(i, b%scripts), 1000})
		}
		start := time.Now()
		node := n.mine(outs...)
		connected[int(node.Height)] = time.Now()
		connectTimes = append(connectTimes, time.Since(start))
		time.Sleep(200 * time.Millisecond)
	}
	done.Wait()
	var lat []time.Duration
	for i := range got {
		for _, r := range got[i] {
			lat = append(lat, r.at.Sub(connected[r.height]))
		}
	}
	slices.Sort(lat)
	slices.Sort(connectTimes)
	pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	t.Logf("%d blocks of %d outputs to watched scripts; %d deliveries: block_connected after ProcessBlock returned p50 %v p99 %v max %v; ProcessBlock p50 %v max %v; hub fan-out of the last block (observer call to the last stream queued) %v; streams cut off %d",
		blocks, (streams+9)/10, len(lat), pct(0.5), pct(0.99), lat[len(lat)-1], connectTimes[len(connectTimes)/2], connectTimes[len(connectTimes)-1], time.Duration(n.hub.Stats().Fanout.Load()), n.hub.Stats().CutOff.Load())
	if len(lat) != streams*blocks {
		t.Errorf("%d deliveries, want %d", len(lat), streams*blocks)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
