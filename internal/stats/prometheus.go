package stats

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Exporter publishes live metrics in the Prometheus text format from a
// private registry: cumulative ops, errors and retries per op, and the
// latency quantiles and throughput of the last interval.
type Exporter struct {
	reg       *prometheus.Registry
	ops       *prometheus.CounterVec
	errs      *prometheus.CounterVec
	retries   *prometheus.CounterVec
	latency   *prometheus.GaugeVec
	opsPerSec prometheus.Gauge
	progress  prometheus.Gauge
	srv       *http.Server
	ln        net.Listener
	phase     string
}

// NewExporter builds the metrics; phase labels them ("load" or "request").
func NewExporter(phase string) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry(), phase: phase}
	labels := prometheus.Labels{"phase": phase}
	e.ops = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linkbench_ops_total", Help: "Operations completed.", ConstLabels: labels}, []string{"op"})
	e.errs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linkbench_errors_total", Help: "Operations that failed.", ConstLabels: labels}, []string{"op"})
	e.retries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linkbench_retries_total", Help: "Retries after transient errors.", ConstLabels: labels}, []string{"op"})
	e.latency = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "linkbench_latency_seconds", Help: "Latency quantiles over the last interval.", ConstLabels: labels}, []string{"op", "quantile"})
	e.opsPerSec = prometheus.NewGauge(prometheus.GaugeOpts{Name: "linkbench_ops_per_second", Help: "Throughput over the last interval.", ConstLabels: labels})
	e.progress = prometheus.NewGauge(prometheus.GaugeOpts{Name: "linkbench_progress_ratio", Help: "Fraction of the phase done (0 to 1).", ConstLabels: labels})
	e.reg.MustRegister(e.ops, e.errs, e.retries, e.latency, e.opsPerSec, e.progress)
	return e
}

// histBuckets are the upper bounds (seconds) of the exported latency
// histograms: 10 µs to 10 s, three per decade.
var histBuckets = func() []float64 {
	var b []float64
	for e := 1e-5; e < 20; e *= 10 {
		b = append(b, e, 2*e, 5*e)
	}
	return b
}()

// histCollector exports the cumulative HdrHistograms of a Collector as
// Prometheus histograms at scrape time.
type histCollector struct {
	c    *Collector
	desc *prometheus.Desc
}

func (h histCollector) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

func (h histCollector) Collect(ch chan<- prometheus.Metric) {
	for op, hist := range h.c.Histograms() {
		if op == graph.RangeSize {
			continue
		}
		// One pass over the histogram's bars (ascending) fills the
		// cumulative bucket counts.
		buckets := make(map[float64]uint64, len(histBuckets))
		bars := hist.Distribution()
		var cum uint64
		j := 0
		for _, ub := range histBuckets {
			limit := int64(ub * 1e9)
			for ; j < len(bars) && bars[j].To <= limit; j++ {
				cum += uint64(bars[j].Count)
			}
			buckets[ub] = cum
		}
		sum := hist.Mean() * float64(hist.TotalCount()) / 1e9
		m, err := prometheus.NewConstHistogram(h.desc, uint64(hist.TotalCount()), sum, buckets, op.String())
		if err == nil {
			ch <- m
		}
	}
}

// WatchHistograms exports c's cumulative latency histograms, per op, as
// linkbench_latency_histogram_seconds.
func (e *Exporter) WatchHistograms(c *Collector) {
	e.reg.MustRegister(histCollector{c: c, desc: prometheus.NewDesc("linkbench_latency_histogram_seconds",
		"Latency of every operation since the start of the phase.", []string{"op"}, prometheus.Labels{"phase": e.phase})})
}

// Observe adds one interval.
func (e *Exporter) Observe(iv Interval) {
	for _, o := range iv.Ops {
		e.ops.WithLabelValues(o.Name).Add(float64(o.Count))
		e.errs.WithLabelValues(o.Name).Add(float64(o.Errors))
		e.retries.WithLabelValues(o.Name).Add(float64(o.Retries))
		if o.Name == "RANGE_SIZE" {
			continue
		}
		for q, v := range map[string]float64{"0.5": o.P50, "0.99": o.P99, "0.999": o.P999, "1": o.Max} {
			e.latency.WithLabelValues(o.Name, q).Set(v / 1000)
		}
	}
	e.opsPerSec.Set(iv.OpsPerSec)
}

// SetProgress records the fraction of the phase done.
func (e *Exporter) SetProgress(f float64) { e.progress.Set(f) }

// Serve listens on addr (such as ":9090" or "127.0.0.1:9090") and serves
// /metrics until Close.
func (e *Exporter) Serve(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	e.ln = ln
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{}))
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := e.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the benchmark goes on without live metrics
		}
	}()
	return nil
}

// Addr is the address the exporter listens on ("" before Serve).
func (e *Exporter) Addr() string {
	if e.ln == nil {
		return ""
	}
	return e.ln.Addr().String()
}

// Close stops serving.
func (e *Exporter) Close() error {
	if e.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return e.srv.Shutdown(ctx)
}
