package stats

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
)

// BenchmarkCollectorSecond prices what the collector costs a request: one
// iteration is one second of a run of 4 requesters at 18,000 requests/s
// with the default mix (the PostgreSQL 4 cell of docs/performance.md),
// every request recorded through its requester's handle, then the tick;
// a progress window is taken every 10 s. ns/req is the whole cost divided
// by the requests.
func BenchmarkCollectorSecond(b *testing.B) {
	const requesters, perSecond = 4, 18000
	mix := []struct {
		op  graph.Op
		pct float64
		ms  float64 // median latency
	}{
		{graph.AddLink, 9, 0.5}, {graph.DeleteLink, 3, 0.5}, {graph.UpdateLink, 8, 0.5},
		{graph.CountLink, 4.9, 0.08}, {graph.MultigetLink, 0.5, 0.15}, {graph.GetLinksList, 50.7, 0.2},
		{graph.AddNode, 2.6, 0.5}, {graph.UpdateNode, 7.4, 0.5}, {graph.DeleteNode, 1, 0.5},
		{graph.GetNode, 12.9, 0.07},
	}
	type req struct {
		op      graph.Op
		latency int64
		rows    int64
	}
	rng := rand.New(rand.NewPCG(1, 2))
	reqs := make([]req, perSecond)
	for i := range reqs {
		p := rng.Float64() * 100
		m := mix[len(mix)-1]
		for _, x := range mix {
			if p < x.pct {
				m = x
				break
			}
			p -= x.pct
		}
		// Log-normal around the median, sigma 1: a tail to tens of ms.
		reqs[i] = req{op: m.op, latency: int64(m.ms * 1e6 * math.Exp(rng.NormFloat64())), rows: int64(rng.IntN(200))}
	}
	start := time.Unix(1000, 0)
	c := NewCollector(3, false, start)
	handles := make([]*Handle, requesters)
	for i := range handles {
		handles[i] = c.NewHandle()
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i := range reqs {
			r := &reqs[i]
			h := handles[i%requesters]
			h.Record(r.op, r.latency, r.latency, false, 0)
			if r.op == graph.GetLinksList {
				h.RecordValue(graph.RangeSize, r.rows)
			}
		}
		c.Tick(start.Add(time.Duration(n+1) * time.Second))
		if n%10 == 9 {
			c.TakeWindow()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/perSecond, "ns/req")
}
