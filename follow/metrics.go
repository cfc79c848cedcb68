package follow

import "github.com/prometheus/client_golang/prometheus"

// metrics are the follower's Prometheus collectors (utxod_follow_*).
type metrics struct {
	height       prometheus.Gauge
	sourceHeight prometheus.Gauge
	inSync       prometheus.Gauge
	paused       prometheus.Gauge
	blocks       *prometheus.CounterVec // by chainstate status
	rejected     *prometheus.CounterVec // by Core reject reason
	errors       *prometheus.CounterVec // by SourceError reason
	bytes        prometheus.Counter
	reorgs       prometheus.Counter
	fetchWait    prometheus.Counter
}

func newMetrics() *metrics {
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "utxod", Subsystem: "follow", Name: name, Help: help})
	}
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "utxod", Subsystem: "follow", Name: name, Help: help})
	}
	cv := func(name, help, label string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "utxod", Subsystem: "follow", Name: name, Help: help}, []string{label})
	}
	return &metrics{
		height:       g("height", "Height of the local active tip, as of the follower's last block."),
		sourceHeight: g("source_height", "Height of the source's active tip at the last poll."),
		inSync:       g("in_sync", "1 when the local tip is the source's tip, else 0."),
		paused:       g("paused", "1 while following is paused after a rejected block."),
		blocks:       cv("blocks_total", "Blocks from the source processed, by outcome (connected, side-branch, duplicate, orphan).", "status"),
		rejected:     cv("rejected_blocks_total", "Blocks from the source the chainstate rejected, by Bitcoin Core reject reason.", "reason"),
		errors:       cv("errors_total", "Failed requests to the source, by cause (unreachable, timeout, unavailable, not-found, wrong-hash, truncated, bad-headers, ...).", "kind"),
		bytes:        c("block_bytes_total", "Bytes of blocks downloaded and processed."),
		reorgs:       c("reorgs_total", "Rounds that found the source on another branch than the local tip."),
		fetchWait:    c("fetch_wait_seconds_total", "Time validation waited for a block download (0 when fetching fully overlaps validation)."),
	}
}

func (m *metrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.height, m.sourceHeight, m.inSync, m.paused, m.blocks, m.rejected, m.errors, m.bytes, m.reorgs, m.fetchWait} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// setState mirrors the state in the in_sync gauge.
func (m *metrics) setState(state string) {
	if state == StateInSync {
		m.inSync.Set(1)
	} else {
		m.inSync.Set(0)
	}
}
