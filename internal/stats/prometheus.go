package stats

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sort"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Live are the figures of a phase the exporter reads at each scrape, so
// that they move continuously. Nil fields are not exported.
type Live struct {
	// Progress is the fraction of the phase done, 0 to 1.
	Progress func() float64
	// Requesters is the number of requesters running.
	Requesters func() int
	// ScheduleLag is how far a run is behind its schedule, seconds: an
	// open loop's oldest arrival not yet started, or a requestrate run's
	// most belated requester. Backlog is an open loop's arrivals due but
	// not started (a requestrate run has none).
	ScheduleLag func() float64
	Backlog     func() float64
	// LoadStages are the stages of a load seen so far, true while under
	// way.
	LoadStages func() map[string]bool
	// LoadRows are the rows a load has written.
	LoadRows func() (nodes, links, counts int64)
}

type phaseRec struct {
	name string
	c    *Collector
	live Live
}

// Exporter serves live metrics in the Prometheus text format from a
// private registry, for every phase of one process (a load and the request
// phase of -l -r keep their own phase label). Everything is read from the
// phases' collectors and Live functions at scrape time. The metrics are
// listed in docs/metrics.md.
type Exporter struct {
	reg *prometheus.Registry
	srv *http.Server
	ln  net.Listener

	mu      sync.Mutex
	phases  []*phaseRec
	current int // index of the running phase, -1 when none
}

// Metric names.
const (
	MetricBuildInfo       = "linkbench_build_info"
	MetricPhaseRunning    = "linkbench_phase_running"
	MetricOps             = "linkbench_ops_total"
	MetricErrors          = "linkbench_errors_total"
	MetricRetries         = "linkbench_retries_total"
	MetricReconnects      = "linkbench_reconnects_total"
	MetricLatency         = "linkbench_op_latency_seconds"
	MetricIntervalLatency = "linkbench_interval_latency_seconds"
	MetricIntervalOps     = "linkbench_interval_ops_per_second"
	MetricListSize        = "linkbench_list_size_links"
	MetricProgress        = "linkbench_progress_ratio"
	MetricRequesters      = "linkbench_requesters"
	MetricScheduleLag     = "linkbench_schedule_lag_seconds"
	MetricScheduleBacklog = "linkbench_schedule_backlog_requests"
	MetricLoadStage       = "linkbench_load_stage"
	MetricLoadRows        = "linkbench_load_rows_total"
)

var descs = struct {
	phase, ops, errs, retries, reconnects, latency, ivLatency, ivOps, listSize,
	progress, requesters, lag, backlog, stage, rows *prometheus.Desc
}{
	phase:      prometheus.NewDesc(MetricPhaseRunning, "1 while the phase runs, 0 after it ended.", []string{"phase"}, nil),
	ops:        prometheus.NewDesc(MetricOps, "Operations completed (bulk calls in a load); RANGE_SIZE is not an operation.", []string{"phase", "op"}, nil),
	errs:       prometheus.NewDesc(MetricErrors, "Operations that failed.", []string{"phase", "op"}, nil),
	retries:    prometheus.NewDesc(MetricRetries, "Retries after transient errors.", []string{"phase", "op"}, nil),
	reconnects: prometheus.NewDesc(MetricReconnects, "Operations that failed on a lost connection (the store reconnects).", []string{"phase"}, nil),
	latency:    prometheus.NewDesc(MetricLatency, "Latency of every operation since the start of the phase.", []string{"phase", "op"}, nil),
	ivLatency:  prometheus.NewDesc(MetricIntervalLatency, "Latency percentiles of the last one-second interval (HdrHistogram, 3 significant digits).", []string{"phase", "op", "percentile"}, nil),
	ivOps:      prometheus.NewDesc(MetricIntervalOps, "Operations per second over the last one-second interval.", []string{"phase"}, nil),
	listSize:   prometheus.NewDesc(MetricListSize, "Links returned by each GET_LINKS_LIST (the reference's RANGE_SIZE).", []string{"phase"}, nil),
	progress:   prometheus.NewDesc(MetricProgress, "Fraction of the phase done, 0 to 1 (a load: links inserted of the graph's).", []string{"phase"}, nil),
	requesters: prometheus.NewDesc(MetricRequesters, "Requesters running.", []string{"phase"}, nil),
	lag:        prometheus.NewDesc(MetricScheduleLag, "Open loop: age of the oldest arrival not yet started; requestrate: how late the most belated requester sent its latest op.", []string{"phase"}, nil),
	backlog:    prometheus.NewDesc(MetricScheduleBacklog, "Open loop: arrivals due but not yet started.", []string{"phase"}, nil),
	stage:      prometheus.NewDesc(MetricLoadStage, "1 while a load stage (nodes, links, counts, each finishing step) runs, 0 after it ended.", []string{"phase", "stage"}, nil),
	rows:       prometheus.NewDesc(MetricLoadRows, "Rows a load has written.", []string{"phase", "table"}, nil),
}

// latencyBuckets are the upper bounds (seconds) of the exported latency
// histograms: 10 µs to 10 s, three per decade.
var latencyBuckets = func() []float64 {
	var b []float64
	for e := 1e-5; e < 20; e *= 10 {
		b = append(b, e, 2*e, 5*e)
	}
	return b
}()

// listBuckets are the upper bounds of the list size histogram (links).
var listBuckets = []float64{0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}

// NewExporter builds the registry; version and revision label
// linkbench_build_info.
func NewExporter(version, revision string) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry(), current: -1}
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricBuildInfo, Help: "Always 1; the labels name the linkbench build.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": goVersion()}})
	info.Set(1)
	e.reg.MustRegister(info, exporterCollector{e})
	return e
}

// BeginPhase starts exporting a phase: c's counters and histograms, and
// the live figures. The previous phases' figures stay, marked ended; a
// phase of the same name (the next loop or sweep point) replaces its
// predecessor, whose counters then start again from zero.
func (e *Exporter) BeginPhase(phase string, c *Collector, live Live) {
	e.mu.Lock()
	defer e.mu.Unlock()
	kept := e.phases[:0]
	for _, p := range e.phases {
		if p.name != phase {
			kept = append(kept, p)
		}
	}
	e.phases = append(kept, &phaseRec{name: phase, c: c, live: live})
	e.current = len(e.phases) - 1
}

// EndPhase marks the running phase ended; its last figures stay.
func (e *Exporter) EndPhase() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.current >= 0 {
		p := e.phases[e.current]
		// Live figures are frozen at their last values.
		p.live = freeze(p.live)
	}
	e.current = -1
}

func freeze(l Live) Live {
	var f Live
	if l.Progress != nil {
		v := l.Progress()
		f.Progress = func() float64 { return v }
	}
	if l.LoadStages != nil {
		m := l.LoadStages()
		for k := range m {
			m[k] = false
		}
		f.LoadStages = func() map[string]bool { return m }
	}
	if l.LoadRows != nil {
		n, li, c := l.LoadRows()
		f.LoadRows = func() (int64, int64, int64) { return n, li, c }
	}
	return f
}

type exporterCollector struct{ e *Exporter }

func (x exporterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descs.phase, descs.ops, descs.errs, descs.retries, descs.reconnects, descs.latency, descs.ivLatency,
		descs.ivOps, descs.listSize, descs.progress, descs.requesters, descs.lag, descs.backlog, descs.stage, descs.rows} {
		ch <- d
	}
}

func (x exporterCollector) Collect(ch chan<- prometheus.Metric) {
	x.e.mu.Lock()
	phases := append([]*phaseRec(nil), x.e.phases...)
	current := x.e.current
	x.e.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for i, p := range phases {
		running := 0.0
		if i == current {
			running = 1
		}
		gauge(descs.phase, running, p.name)
		counts := p.c.Counters()
		var reconnects int64
		for op, n := range counts {
			if graph.Op(op) == graph.RangeSize || (n == OpCounters{}) {
				continue
			}
			name := graph.Op(op).String()
			counter(descs.ops, float64(n.Count), p.name, name)
			counter(descs.errs, float64(n.Errors), p.name, name)
			counter(descs.retries, float64(n.Retries), p.name, name)
			reconnects += n.Reconnects
		}
		counter(descs.reconnects, float64(reconnects), p.name)
		for op, h := range p.c.Histograms() {
			if op == graph.RangeSize {
				ch <- constHistogram(descs.listSize, h, listBuckets, 1, p.name)
				continue
			}
			ch <- constHistogram(descs.latency, h, latencyBuckets, 1e9, p.name, op.String())
		}
		if iv, ok := p.c.LastInterval(); ok {
			gauge(descs.ivOps, iv.OpsPerSec, p.name)
			for _, o := range iv.Ops {
				if o.Op == graph.RangeSize {
					continue
				}
				for _, q := range []struct {
					name string
					ms   float64
				}{{"50", o.P50}, {"99", o.P99}, {"99.9", o.P999}, {"100", o.Max}} {
					gauge(descs.ivLatency, q.ms/1000, p.name, o.Name, q.name)
				}
			}
		}
		collectLive(p.name, p.live, gauge, counter)
	}
}

func collectLive(phase string, l Live, gauge, counter func(*prometheus.Desc, float64, ...string)) {
	if l.Progress != nil {
		gauge(descs.progress, min(max(l.Progress(), 0), 1), phase)
	}
	if l.Requesters != nil {
		gauge(descs.requesters, float64(l.Requesters()), phase)
	}
	if l.ScheduleLag != nil {
		gauge(descs.lag, l.ScheduleLag(), phase)
	}
	if l.Backlog != nil {
		gauge(descs.backlog, l.Backlog(), phase)
	}
	if l.LoadStages != nil {
		stages := l.LoadStages()
		names := make([]string, 0, len(stages))
		for n := range stages {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			v := 0.0
			if stages[n] {
				v = 1
			}
			gauge(descs.stage, v, phase, n)
		}
	}
	if l.LoadRows != nil {
		nodes, links, counts := l.LoadRows()
		counter(descs.rows, float64(nodes), phase, "nodes")
		counter(descs.rows, float64(links), phase, "links")
		counter(descs.rows, float64(counts), phase, "counts")
	}
}

// constHistogram exports an HdrHistogram as a Prometheus histogram, values
// divided by scale (ns to seconds for latencies).
func constHistogram(d *prometheus.Desc, h *hdr.Histogram, bounds []float64, scale float64, labels ...string) prometheus.Metric {
	// One pass over the histogram's bars (ascending) fills the cumulative
	// bucket counts.
	buckets := make(map[float64]uint64, len(bounds))
	bars := h.Distribution()
	var cum uint64
	j := 0
	for _, ub := range bounds {
		limit := int64(ub * scale)
		for ; j < len(bars) && bars[j].To <= limit; j++ {
			cum += uint64(bars[j].Count)
		}
		buckets[ub] = cum
	}
	sum := h.Mean() * float64(h.TotalCount()) / scale
	return prometheus.MustNewConstHistogram(d, uint64(h.TotalCount()), sum, buckets, labels...)
}

// MetricNames lists every metric the exporter can serve, with the series
// suffixes of its histograms: a dashboard query must name one of them.
func MetricNames() []string {
	names := []string{MetricBuildInfo, MetricPhaseRunning, MetricOps, MetricErrors, MetricRetries, MetricReconnects,
		MetricIntervalLatency, MetricIntervalOps, MetricProgress, MetricRequesters, MetricScheduleLag, MetricScheduleBacklog,
		MetricLoadStage, MetricLoadRows}
	for _, h := range []string{MetricLatency, MetricListSize} {
		names = append(names, h+"_bucket", h+"_sum", h+"_count")
	}
	sort.Strings(names)
	return names
}

// Serve listens on addr (such as "127.0.0.1:9090") and serves /metrics
// until Close.
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

// IsLoopback reports whether a listen address (host:port) only accepts
// connections from this machine; ":9090" and "0.0.0.0:9090" listen on
// every interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func goVersion() string { return runtime.Version() }
