package stats

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

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
}

// NewExporter builds the metrics; phase labels them ("load" or "request").
func NewExporter(phase string) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry()}
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
