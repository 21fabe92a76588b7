package stats

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/graph"
)

// Collector owns the worker handles and the run's histograms. Tick is
// called by one goroutine (the ticker); Handle creation may happen at any time.
type Collector struct {
	sigfigs      int
	trackService bool

	mu      sync.Mutex
	handles []*Handle
	// active holds the full batches workers handed over since the last
	// tick (under spillMu, which a worker takes without holding its
	// handle's). Tick swaps it with interval, so the spilled samples are
	// not merged once more.
	spillMu  sync.Mutex
	active   [graph.NumOps]opRec
	start    time.Time
	last     time.Time
	interval [graph.NumOps]opRec
	series   []Interval
	segments []*segment
	// window accumulates the intervals since the last TakeWindow, and
	// settled the windows before it: the run is the two together (see
	// run), so a tick merges its interval once, into the window.
	window      [graph.NumOps]opRec
	settled     [graph.NumOps]opRec
	windowStart time.Time
}

// NewCollector makes a collector with histograms of sigfigs significant
// digits (1-5). trackService keeps a separate service-time histogram, for
// throttled runs where latency counts from the intended start.
func NewCollector(sigfigs int, trackService bool, start time.Time) *Collector {
	if sigfigs < 1 || sigfigs > 5 {
		sigfigs = 3
	}
	return &Collector{sigfigs: sigfigs, trackService: trackService, start: start, last: start, windowStart: start}
}

// NewHandle returns a recorder for one worker.
func (c *Collector) NewHandle() *Handle {
	h := &Handle{c: c}
	c.mu.Lock()
	c.handles = append(c.handles, h)
	c.mu.Unlock()
	return h
}

// Restart discards everything recorded so far and starts the clock again
// at now (used at the end of a warm-up).
func (c *Collector) Restart(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.handles {
		h.discard()
	}
	c.spillMu.Lock()
	for i := range c.active {
		c.active[i].reset()
	}
	c.spillMu.Unlock()
	for i := range c.settled {
		c.settled[i].reset()
		c.interval[i].reset()
		c.window[i].reset()
	}
	c.series = c.series[:0]
	c.start, c.last, c.windowStart = now, now, now
}

// Tick drains every handle into a new interval ending at now, appends its
// summary to the series, adds it to the run's histograms, and returns it.
func (c *Collector) Tick(now time.Time) Interval {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A phase that ends during its warm-up ticks before its start: its
	// interval is empty, never of negative length.
	if now.Before(c.last) {
		now = c.last
	}
	for i := range c.interval {
		c.interval[i].reset()
	}
	c.spillMu.Lock()
	c.interval, c.active = c.active, c.interval
	c.spillMu.Unlock()
	for _, h := range c.handles {
		h.drainInto(&c.interval)
	}
	iv := Interval{
		Start:   c.last.Sub(c.start),
		End:     now.Sub(c.start),
		Ops:     make([]OpSummary, 0, 4),
		EndTime: now,
	}
	iv.DurationSec = now.Sub(c.last).Seconds()
	secs := now.Sub(c.last).Seconds()
	for i := range c.interval {
		r := &c.interval[i]
		c.window[i].merge(r, c.sigfigs)
		if r.empty() {
			continue
		}
		s := summarize(graph.Op(i), r, secs)
		iv.Ops = append(iv.Ops, s)
		if countsAsOp(graph.Op(i)) {
			iv.Count += s.Count
			iv.Errors += s.Errors
			iv.Reconnects += r.reconnects
		}
	}
	if secs > 0 {
		iv.OpsPerSec = float64(iv.Count) / secs
	}
	c.addToSegment(now)
	c.last = now
	c.series = append(c.series, iv)
	return iv
}

// spill adds a worker's full batch of samples to the active histograms.
func (c *Collector) spill(samples []sample) {
	c.spillMu.Lock()
	recordSamples(&c.active, samples, c.sigfigs, c.trackService)
	c.spillMu.Unlock()
}

func isLoadOp(op graph.Op) bool {
	return op == graph.LoadNodesBulk || op == graph.LoadLinksBulk || op == graph.LoadCountsBulk
}

// countsAsOp is false for RANGE_SIZE, which records list lengths.
func countsAsOp(op graph.Op) bool { return op < graph.Op(graph.NumRequestOps) || isLoadOp(op) }

// Series returns the intervals recorded since the start (or Restart).
func (c *Collector) Series() []Interval {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Interval(nil), c.series...)
}

// Elapsed is the time from the start (or Restart) to the last tick.
func (c *Collector) Elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last.Sub(c.start)
}

// Summary returns the cumulative per-op summaries of every op that ran,
// in op order, over elapsed seconds.
func (c *Collector) Summary() []OpSummary {
	c.mu.Lock()
	defer c.mu.Unlock()
	secs := c.last.Sub(c.start).Seconds()
	var out []OpSummary
	for i := range c.settled {
		r := c.run(i)
		if r.empty() {
			continue
		}
		out = append(out, summarize(graph.Op(i), &r, secs))
	}
	return out
}

// run returns op i's record since the start (or Restart) up to the last
// tick: the settled windows and the open one, in histograms of its own.
// The caller holds c.mu.
func (c *Collector) run(i int) opRec {
	var r opRec
	r.merge(&c.settled[i], c.sigfigs)
	r.merge(&c.window[i], c.sigfigs)
	return r
}

// runCounts is op i's counters since the start (or Restart). The caller
// holds c.mu.
func (c *Collector) runCounts(i int) counts {
	n := c.settled[i].counts
	n.add(&c.window[i].counts)
	return n
}

// Histograms returns the run's latency histograms by op, in histograms of
// their own (no entry for an op that never ran), for the HdrHistogram log.
func (c *Collector) Histograms() map[graph.Op]*hdr.Histogram {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[graph.Op]*hdr.Histogram{}
	for i := range c.settled {
		if r := c.run(i); r.latency != nil {
			out[graph.Op(i)] = r.latency
		}
	}
	return out
}

// Reconnects is the number of failures on a lost connection since the
// start (or Restart), up to the last tick.
func (c *Collector) Reconnects() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for i := range c.settled {
		n += c.runCounts(i).reconnects
	}
	return n
}

// Window is what the operations did between two TakeWindow calls: the
// figures of one progress line.
type Window struct {
	Seconds float64
	// Count, Errors, Retries and Reconnects are over every operation
	// (RANGE_SIZE, a list length, excluded).
	Count, Errors, Retries, Reconnects int64
	OpsPerSec                          float64
	// All are the latency percentiles of every operation of the window
	// together (ms).
	All Percentiles
	// Ops are the per-op figures of the window.
	Ops []OpSummary
}

// TakeWindow summarises the intervals ticked since the previous call (or
// the start) up to the last tick, and starts a new window there.
func (c *Collector) TakeWindow() Window {
	c.mu.Lock()
	defer c.mu.Unlock()
	secs := c.last.Sub(c.windowStart).Seconds()
	w := Window{Seconds: secs}
	var all *hdr.Histogram
	for i := range c.window {
		r := &c.window[i]
		if r.empty() {
			continue
		}
		op := graph.Op(i)
		w.Ops = append(w.Ops, summarize(op, r, secs))
		c.settled[i].merge(r, c.sigfigs)
		if !countsAsOp(op) {
			r.reset()
			continue
		}
		w.Count += r.count
		w.Errors += r.errors
		w.Retries += r.retries
		w.Reconnects += r.reconnects
		mergeHist(&all, r.latency, c.sigfigs)
		r.reset()
	}
	w.All = percentiles(all, 1e6)
	if secs > 0 {
		w.OpsPerSec = float64(w.Count) / secs
	}
	c.windowStart = c.last
	return w
}

// OpCounters are an op's cumulative counters.
type OpCounters struct {
	Count, Errors, Retries, Reconnects int64
}

// Counters returns every op's cumulative counters up to the last tick.
func (c *Collector) Counters() [graph.NumOps]OpCounters {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [graph.NumOps]OpCounters
	for i := range c.settled {
		r := c.runCounts(i)
		out[i] = OpCounters{Count: r.count, Errors: r.errors, Retries: r.retries, Reconnects: r.reconnects}
	}
	return out
}

// LastInterval returns the interval of the last tick (false before the
// first).
func (c *Collector) LastInterval() (Interval, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.series) == 0 {
		return Interval{}, false
	}
	return c.series[len(c.series)-1], true
}
