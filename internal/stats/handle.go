package stats

import (
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/graph"
)

// Histogram bounds: 1 ns to one hour.
const (
	lowestValue  = 1
	highestValue = int64(3600) * 1e9
)

// batchSize is how many samples a worker keeps before it adds them to the
// collector's histograms itself (the collector also takes them on each
// tick). Workers keep samples, not histograms: a histogram of one hour at 3
// digits is 256 KiB, and one per op per worker made the driver's memory
// grow by megabytes per requester.
const batchSize = 1024

// opRec is the record of one op type over one period.
type opRec struct {
	counts
	latency *hdr.Histogram // from intended start, ns
	service *hdr.Histogram // from actual send, ns; only when tracked
}

// counts are an op's counters over one period.
type counts struct {
	count, errors, retries int64
	// reconnects are the failures on a lost connection (the store
	// reconnects on its next call).
	reconnects int64
}

func (c *counts) add(o *counts) {
	c.count += o.count
	c.errors += o.errors
	c.retries += o.retries
	c.reconnects += o.reconnects
}

func (c *counts) empty() bool {
	return c.count == 0 && c.errors == 0 && c.retries == 0 && c.reconnects == 0
}

func clamp(v int64) int64 { return min(max(v, lowestValue), highestValue) }

// merge adds src into r, allocating r's histograms on first use.
func (r *opRec) merge(src *opRec, sigfigs int) {
	r.counts.add(&src.counts)
	mergeHist(&r.latency, src.latency, sigfigs)
	mergeHist(&r.service, src.service, sigfigs)
}

func mergeHist(dst **hdr.Histogram, src *hdr.Histogram, sigfigs int) {
	if src == nil || src.TotalCount() == 0 {
		return
	}
	(*dst) = histOf(*dst, sigfigs)
	(*dst).Merge(src)
}

// histOf returns h, or a new histogram when h is nil.
func histOf(h *hdr.Histogram, sigfigs int) *hdr.Histogram {
	if h == nil {
		h = hdr.New(lowestValue, highestValue, sigfigs)
	}
	return h
}

func (r *opRec) reset() {
	r.counts = counts{}
	if r.latency != nil {
		r.latency.Reset()
	}
	if r.service != nil {
		r.service.Reset()
	}
}

// sample is one recorded value: a latency and service time (ns), or a
// plain value such as a list length.
type sample struct {
	latency, service int64
	op               graph.Op
	plain            bool
}

// recordSamples adds samples to recs' histograms (the caller owns recs).
func recordSamples(recs *[graph.NumOps]opRec, samples []sample, sigfigs int, trackService bool) {
	for i := range samples {
		s := &samples[i]
		r := &recs[s.op]
		r.latency = histOf(r.latency, sigfigs)
		if s.plain {
			_ = r.latency.RecordValue(min(max(s.latency, 0), highestValue))
			continue
		}
		_ = r.latency.RecordValue(clamp(s.latency))
		if trackService {
			r.service = histOf(r.service, sigfigs)
			_ = r.service.RecordValue(clamp(s.service))
		}
	}
}

// Handle is one worker's recorder. Only its worker calls Record; the
// collector drains it on each tick, so its mutex is uncontended but for
// that instant.
type Handle struct {
	c      *Collector
	mu     sync.Mutex
	counts [graph.NumOps]counts
	batch  []sample
	spare  []sample
}

// add appends s to the batch and, when the batch is full, hands it to the
// collector. The caller holds h.mu; add releases it.
func (h *Handle) add(s sample) {
	if h.batch == nil {
		h.batch = make([]sample, 0, batchSize)
	}
	h.batch = append(h.batch, s)
	if len(h.batch) < batchSize {
		h.mu.Unlock()
		return
	}
	full := h.batch
	h.batch, h.spare = h.spare, nil
	h.mu.Unlock()
	h.c.spill(full)
	h.mu.Lock()
	if h.spare == nil {
		h.spare = full[:0]
	}
	h.mu.Unlock()
}

// Record adds one finished operation: latency from its intended start and
// service time from its actual start (both ns), whether it failed, and how
// many transient-error retries it took. A failed operation is counted as an
// error; its latency is not mixed with the successful ones.
func (h *Handle) Record(op graph.Op, latency, service int64, failed bool, retries int) {
	h.mu.Lock()
	r := &h.counts[op]
	r.retries += int64(retries)
	if failed {
		r.errors++
		h.mu.Unlock()
		return
	}
	r.count++
	h.add(sample{latency: latency, service: service, op: op})
}

// RecordReconnect counts a failure of op on a lost connection, after
// which the store reconnects (the failure itself is recorded by Record).
func (h *Handle) RecordReconnect(op graph.Op) {
	h.mu.Lock()
	h.counts[op].reconnects++
	h.mu.Unlock()
}

// RecordValue adds a plain value, such as a RANGE_SIZE list length, to op.
func (h *Handle) RecordValue(op graph.Op, v int64) {
	h.mu.Lock()
	h.counts[op].count++
	h.add(sample{latency: v, op: op, plain: true})
}

// discard drops this handle's counters and samples.
func (h *Handle) discard() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts = [graph.NumOps]counts{}
	h.batch = h.batch[:0]
}

// drainInto adds this handle's counters and samples to dst and resets
// them. The caller holds the collector's mutex.
func (h *Handle) drainInto(dst *[graph.NumOps]opRec) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.counts {
		dst[i].counts.add(&h.counts[i])
		h.counts[i] = counts{}
	}
	recordSamples(dst, h.batch, h.c.sigfigs, h.c.trackService)
	h.batch = h.batch[:0]
}
