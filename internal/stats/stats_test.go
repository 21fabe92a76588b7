package stats

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
)

func TestCollectorMergesHandles(t *testing.T) {
	start := time.Unix(1000, 0)
	c := NewCollector(3, false, start)
	const workers, perWorker = 4, 10000
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		h := c.NewHandle()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= perWorker; i++ {
				// Latencies 1..10000 µs, uniform: p50 = 5 ms, p99 = 9.9 ms.
				h.Record(graph.GetNode, int64(i)*1000, int64(i)*1000, false, 0)
			}
			h.Record(graph.AddLink, 0, 0, true, 3)
		}()
	}
	wg.Wait()
	iv := c.Tick(start.Add(2 * time.Second))
	if iv.Count != workers*perWorker || iv.Errors != workers {
		t.Fatalf("interval count=%d errors=%d, want %d and %d", iv.Count, iv.Errors, workers*perWorker, workers)
	}
	if math.Abs(iv.OpsPerSec-float64(workers*perWorker)/2) > 1 {
		t.Errorf("ops/s = %f", iv.OpsPerSec)
	}
	sum := c.Summary()
	byName := map[string]OpSummary{}
	for _, s := range sum {
		byName[s.Name] = s
	}
	g := byName["GET_NODE"]
	if g.Count != workers*perWorker {
		t.Fatalf("GET_NODE count %d", g.Count)
	}
	// 3 significant digits: relative error below 0.1%.
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", g.P50, 5.0}, {"p99", g.P99, 9.9}, {"max", g.Max, 10.0}, {"mean", g.Mean, 5.0005}} {
		if math.Abs(c.got-c.want)/c.want > 0.002 {
			t.Errorf("%s = %v ms, want %v", c.name, c.got, c.want)
		}
	}
	a := byName["ADD_LINK"]
	if a.Errors != workers || a.Retries != 3*workers || a.Count != 0 {
		t.Errorf("ADD_LINK %+v", a)
	}
	// A second tick with nothing recorded keeps the cumulative figures.
	iv2 := c.Tick(start.Add(3 * time.Second))
	if iv2.Count != 0 || len(c.Summary()) != 2 || len(c.Series()) != 2 {
		t.Errorf("second tick: count %d, %d ops, %d intervals", iv2.Count, len(c.Summary()), len(c.Series()))
	}
}

func TestServiceTimeTrackedSeparately(t *testing.T) {
	c := NewCollector(3, true, time.Unix(0, 0))
	h := c.NewHandle()
	for i := 0; i < 100; i++ {
		h.Record(graph.GetNode, 50e6, 2e6, false, 0) // 50 ms late, 2 ms service
	}
	c.Tick(time.Unix(1, 0))
	s := c.Summary()[0]
	if s.Service == nil || math.Abs(s.Service.P50-2) > 0.01 || math.Abs(s.P50-50) > 0.1 {
		t.Fatalf("latency p50 %v, service %+v", s.P50, s.Service)
	}
}

func TestRangeSizeIsACount(t *testing.T) {
	c := NewCollector(3, false, time.Unix(0, 0))
	h := c.NewHandle()
	for _, v := range []int64{0, 10, 10000} {
		h.RecordValue(graph.RangeSize, v)
	}
	c.Tick(time.Unix(1, 0))
	s := c.Summary()[0]
	if s.Name != "RANGE_SIZE" || s.Count != 3 || s.Max < 9990 || s.Max > 10010 {
		t.Fatalf("%+v", s)
	}
}

// TestTakeWindowMergesEveryOp: a window's p50/p99 are over every op
// together (RANGE_SIZE, a list length, left out), its counts cover the
// ticks since the previous window, and reconnects are counted.
func TestTakeWindowMergesEveryOp(t *testing.T) {
	c := NewCollector(3, false, time.Unix(0, 0))
	h := c.NewHandle()
	for i := 0; i < 98; i++ {
		h.Record(graph.GetNode, 1e6, 1e6, false, 0) // 1 ms
	}
	h.Record(graph.AddLink, 50e6, 50e6, false, 2) // 50 ms
	h.Record(graph.AddLink, 50e6, 50e6, false, 0)
	h.Record(graph.AddLink, 0, 0, true, 0)
	h.RecordReconnect(graph.AddLink)
	h.RecordValue(graph.RangeSize, 100000)
	c.Tick(time.Unix(1, 0))
	h.Record(graph.GetNode, 1e6, 1e6, false, 0)
	c.Tick(time.Unix(2, 0))
	w := c.TakeWindow()
	if w.Seconds != 2 || w.Count != 101 || w.Errors != 1 || w.Retries != 2 || w.Reconnects != 1 || w.OpsPerSec != 50.5 {
		t.Errorf("window %+v", w)
	}
	if w.All.P50 < 0.99 || w.All.P50 > 1.01 || w.All.P99 < 49 || w.All.P99 > 51 {
		t.Errorf("p50 %v p99 %v ms, want 1 and 50 (RANGE_SIZE must not count)", w.All.P50, w.All.P99)
	}
	if c.Reconnects() != 1 {
		t.Errorf("reconnects %d", c.Reconnects())
	}
	c.Tick(time.Unix(3, 0))
	if w := c.TakeWindow(); w.Seconds != 1 || w.Count != 0 {
		t.Errorf("second window %+v", w)
	}
}

// TestWorkersKeepNoHistograms: the memory a worker's handle takes does not
// depend on the histograms' range. With a histogram per op per worker, 64
// requesters doing every op took 64 × 11 × 256 KiB (180 MiB) before the
// first tick.
func TestWorkersKeepNoHistograms(t *testing.T) {
	start := time.Unix(1000, 0)
	c := NewCollector(3, true, start)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const workers = 64
	for w := 0; w < workers; w++ {
		h := c.NewHandle()
		for op := graph.Op(0); op < graph.Op(graph.NumRequestOps); op++ {
			for i := 0; i < 100; i++ {
				h.Record(op, int64(i+1)*1000, int64(i+1)*1000, false, 0)
			}
		}
		h.RecordValue(graph.RangeSize, 7)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > workers*64<<10 {
		t.Errorf("%d handles allocated %d KiB, want at most 64 KiB each", workers, grew>>10)
	}
	iv := c.Tick(start.Add(time.Second))
	if want := int64(workers * graph.NumRequestOps * 100); iv.Count != want {
		t.Errorf("interval count %d, want %d", iv.Count, want)
	}
}

// TestPercentilesScanGivesMinAndMax: the 0th and 100th percentiles of the
// one scan are what the histogram's own Min and Max walks give, for
// latencies, for list lengths that start at 0, and for single values.
func TestPercentilesScanGivesMinAndMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 200; trial++ {
		h := histOf(nil, 3)
		n := 1 + rng.IntN(1000)
		for i := 0; i < n; i++ {
			var v int64
			switch trial % 3 {
			case 0: // latencies, ns, log-normal around 0.3 ms
				v = clamp(int64(3e5 * math.Exp(2*rng.NormFloat64())))
			case 1: // list lengths, 0 included
				v = int64(rng.IntN(10001))
			default: // one value repeated
				v = int64(trial) * 12345
			}
			_ = h.RecordValue(v)
		}
		p := percentiles(h, 1)
		if p.Min != float64(h.Min()) || p.Max != float64(h.Max()) {
			t.Fatalf("trial %d: scan min %v max %v, walks %d and %d", trial, p.Min, p.Max, h.Min(), h.Max())
		}
	}
}

// TestSpillsLandInTheirTick: a batch a worker hands over when it fills is
// in the next tick's interval (not the one after), counted once in the
// run, and gone after a Restart.
func TestSpillsLandInTheirTick(t *testing.T) {
	start := time.Unix(0, 0)
	c := NewCollector(3, false, start)
	h := c.NewHandle()
	record := func(n int, ns int64) {
		for i := 0; i < n; i++ {
			h.Record(graph.GetNode, ns, ns, false, 0)
		}
	}
	record(3*batchSize+5, 1e6) // three spills and 5 kept by the handle
	iv := c.Tick(start.Add(time.Second))
	if iv.Count != 3*batchSize+5 || iv.Ops[0].P50 < 0.99 || iv.Ops[0].P50 > 1.01 {
		t.Fatalf("first interval: count %d, p50 %v ms", iv.Count, iv.Ops[0].P50)
	}
	record(batchSize, 2e6) // one spill
	iv = c.Tick(start.Add(2 * time.Second))
	if iv.Count != batchSize || iv.Ops[0].Min < 1.99 || iv.Ops[0].Max > 2.01 {
		t.Fatalf("second interval: count %d, min %v max %v ms, want only the 2 ms batch", iv.Count, iv.Ops[0].Min, iv.Ops[0].Max)
	}
	if s := c.Summary()[0]; s.Count != 4*batchSize+5 || s.P50 > 1.01 || s.Max < 1.99 {
		t.Fatalf("run: %+v", s)
	}
	record(batchSize+1, 9e6) // spilled and kept before the warm-up ends
	c.Restart(start.Add(2 * time.Second))
	record(2, 3e6)
	iv = c.Tick(start.Add(3 * time.Second))
	if iv.Count != 2 || iv.Ops[0].Max > 3.01 {
		t.Fatalf("after the restart: count %d, max %v ms, want 2 ops of 3 ms", iv.Count, iv.Ops[0].Max)
	}
	if s := c.Summary()[0]; s.Count != 2 || s.Max > 3.01 {
		t.Fatalf("run after the restart: %+v", s)
	}
}

// TestRunSpansWindows: the run's figures (Summary, Histograms, Counters,
// Reconnects) cover the windows already taken and the open one, and
// reading them changes nothing.
func TestRunSpansWindows(t *testing.T) {
	start := time.Unix(0, 0)
	c := NewCollector(3, false, start)
	h := c.NewHandle()
	for i := 0; i < 10; i++ {
		h.Record(graph.GetNode, 1e6, 1e6, false, 0)
	}
	h.RecordReconnect(graph.AddLink)
	h.Record(graph.AddLink, 0, 0, true, 1)
	c.Tick(start.Add(time.Second))
	if w := c.TakeWindow(); w.Count != 10 {
		t.Fatalf("first window: %d ops", w.Count)
	}
	for i := 0; i < 5; i++ {
		h.Record(graph.GetNode, 4e6, 4e6, false, 0)
	}
	c.Tick(start.Add(2 * time.Second))
	for round := 0; round < 2; round++ {
		s := c.Summary()
		if len(s) != 2 || s[1].Name != "GET_NODE" || s[1].Count != 15 || s[1].Max < 3.99 || s[1].P50 > 1.01 || s[0].Errors != 1 {
			t.Fatalf("read %d: summary %+v", round, s)
		}
		if hs := c.Histograms(); len(hs) != 1 || hs[graph.GetNode].TotalCount() != 15 {
			t.Fatalf("read %d: histograms %v", round, hs)
		}
		if n := c.Counters(); n[graph.GetNode].Count != 15 || n[graph.AddLink].Errors != 1 || n[graph.AddLink].Retries != 1 || c.Reconnects() != 1 {
			t.Fatalf("read %d: counters %+v, reconnects %d", round, n, c.Reconnects())
		}
	}
	if w := c.TakeWindow(); w.Count != 5 || w.All.P50 < 3.99 {
		t.Fatalf("second window: %+v", w)
	}
	if s := c.Summary(); s[1].Count != 15 {
		t.Fatalf("after the second window: %+v", s)
	}
}
