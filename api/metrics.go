package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"utxod/events"
)

// metrics holds the server's Prometheus collectors, registered on a
// registry owned by the Server (never the global default registry).
type metrics struct {
	reg            *prometheus.Registry
	blocks         *prometheus.CounterVec // by outcome status
	rejects        *prometheus.CounterVec // by Core reject reason
	validation     prometheus.Histogram
	flush          prometheus.Histogram
	requests       *prometheus.CounterVec
	requestSeconds *prometheus.HistogramVec
}

func newMetrics(cacheBytes func() float64, tipHeight func() float64) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.blocks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "utxod", Name: "blocks_processed_total",
		Help: "Blocks accepted over the API, by outcome (connected, side-branch, orphan, duplicate).",
	}, []string{"status"})
	m.rejects = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "utxod", Name: "blocks_rejected_total",
		Help: "Blocks rejected over the API, by Bitcoin Core reject reason.",
	}, []string{"reason"})
	m.validation = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "utxod", Name: "block_validation_seconds",
		Help:    "Time to validate and connect one submitted block (ProcessBlock), queueing excluded.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14),
	})
	m.flush = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "utxod", Name: "flush_seconds",
		Help:    "Time to flush the chainstate to the store.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
	})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "utxod", Name: "http_requests_total",
		Help: "HTTP requests by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	m.requestSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "utxod", Name: "http_request_seconds",
		Help:    "HTTP request latency by route pattern.",
		Buckets: prometheus.ExponentialBuckets(0.00005, 3, 12),
	}, []string{"route"})
	m.reg.MustRegister(m.blocks, m.rejects, m.validation, m.flush, m.requests, m.requestSeconds,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if cacheBytes != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "utxod", Name: "coins_cache_bytes",
			Help: "Bytes held by the coins cache.",
		}, cacheBytes))
	}
	if tipHeight != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "utxod", Name: "tip_height",
			Help: "Height of the active chain tip.",
		}, tipHeight))
	}
	return m
}

// registerEvents adds the event streams' metrics and returns the delivery
// histogram: per live batch written to a stream, the time from the
// chainstate's announcement of the block to the end of the write (the
// server's share of an event's latency; the network and the client add
// theirs).
func (m *metrics) registerEvents(hub *events.Hub) prometheus.Histogram {
	delivery := prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "utxod", Name: "events_delivery_seconds",
		Help:    "Event streams: time from a block's announcement to the hub to the end of a stream's write of its events, per stream and block.",
		Buckets: []float64{.001, .002, .005, .01, .02, .03, .05, .075, .1, .15, .2, .3, .5, .75, 1, 2, 5},
	})
	m.reg.MustRegister(delivery,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "utxod", Name: "events_streams", Help: "Open event streams (SSE, WebSocket, webhooks)."},
			func() float64 { _, n := hub.Watched(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "utxod", Name: "events_watched", Help: "Scripts and outpoints the open event streams watch."},
			func() float64 { n, _ := hub.Watched(); return float64(n) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "utxod", Name: "events_cut_off_total", Help: "Event streams cut off because their client did not keep up."},
			func() float64 { return float64(hub.Stats().CutOff.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "utxod", Name: "events_fanout_seconds", Help: "The last block's fan-out: from its announcement to the last stream's queue."},
			func() float64 { return time.Duration(hub.Stats().Fanout.Load()).Seconds() }),
	)
	return delivery
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// statusRecorder remembers the status code a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// instrument counts requests and observes their latency by chi route
// pattern (so path parameters do not explode the label space).
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil {
			if p := rc.RoutePattern(); p != "" {
				route = p
			}
		}
		code := rec.code
		if code == 0 {
			code = http.StatusOK
		}
		m.requests.WithLabelValues(route, r.Method, strconv.Itoa(code)).Inc()
		m.requestSeconds.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}
