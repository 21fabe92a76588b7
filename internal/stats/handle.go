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

// opRec is the record of one op type over one period.
type opRec struct {
	count, errors, retries int64
	// reconnects are the failures on a lost connection (the store
	// reconnects on its next call).
	reconnects int64
	latency    *hdr.Histogram // from intended start, ns
	service    *hdr.Histogram // from actual send, ns; only when tracked
}

func clamp(v int64) int64 { return min(max(v, lowestValue), highestValue) }

// merge adds src into r, allocating r's histograms on first use.
func (r *opRec) merge(src *opRec, sigfigs int) {
	r.count += src.count
	r.errors += src.errors
	r.retries += src.retries
	r.reconnects += src.reconnects
	mergeHist(&r.latency, src.latency, sigfigs)
	mergeHist(&r.service, src.service, sigfigs)
}

func mergeHist(dst **hdr.Histogram, src *hdr.Histogram, sigfigs int) {
	if src == nil || src.TotalCount() == 0 {
		return
	}
	if *dst == nil {
		*dst = hdr.New(lowestValue, highestValue, sigfigs)
	}
	(*dst).Merge(src)
}

func (r *opRec) empty() bool {
	return r.count == 0 && r.errors == 0 && r.retries == 0 && r.reconnects == 0
}

func (r *opRec) reset() {
	r.count, r.errors, r.retries, r.reconnects = 0, 0, 0, 0
	if r.latency != nil {
		r.latency.Reset()
	}
	if r.service != nil {
		r.service.Reset()
	}
}

// Handle is one worker's recorder. Only its worker calls Record; the
// collector drains it on each tick, so its mutex is uncontended but for
// that instant.
type Handle struct {
	mu           sync.Mutex
	sigfigs      int
	trackService bool
	ops          [graph.NumOps]opRec
}

// Record adds one finished operation: latency from its intended start and
// service time from its actual start (both ns), whether it failed, and how
// many transient-error retries it took. A failed operation is counted as an
// error; its latency is not mixed with the successful ones.
func (h *Handle) Record(op graph.Op, latency, service int64, failed bool, retries int) {
	h.mu.Lock()
	r := &h.ops[op]
	r.retries += int64(retries)
	if failed {
		r.errors++
		h.mu.Unlock()
		return
	}
	r.count++
	if r.latency == nil {
		r.latency = hdr.New(lowestValue, highestValue, h.sigfigs)
	}
	_ = r.latency.RecordValue(clamp(latency))
	if h.trackService {
		if r.service == nil {
			r.service = hdr.New(lowestValue, highestValue, h.sigfigs)
		}
		_ = r.service.RecordValue(clamp(service))
	}
	h.mu.Unlock()
}

// RecordReconnect counts a failure of op on a lost connection, after
// which the store reconnects (the failure itself is recorded by Record).
func (h *Handle) RecordReconnect(op graph.Op) {
	h.mu.Lock()
	h.ops[op].reconnects++
	h.mu.Unlock()
}

// RecordValue adds a plain value, such as a RANGE_SIZE list length, to op.
func (h *Handle) RecordValue(op graph.Op, v int64) {
	h.mu.Lock()
	r := &h.ops[op]
	r.count++
	if r.latency == nil {
		r.latency = hdr.New(lowestValue, highestValue, h.sigfigs)
	}
	_ = r.latency.RecordValue(min(max(v, 0), highestValue))
	h.mu.Unlock()
}

// drainInto adds this handle's records to dst and resets them.
func (h *Handle) drainInto(dst *[graph.NumOps]opRec) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.ops {
		src := &h.ops[i]
		if src.empty() {
			continue
		}
		dst[i].merge(src, h.sigfigs)
		src.reset()
	}
}
