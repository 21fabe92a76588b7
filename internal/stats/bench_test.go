package stats

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/graph"
)

// BenchmarkCollectorSecond prices what the collector costs a request: one
// iteration is one second of a run of 4 requesters at 18,000 requests/s
// with the default mix (config/FBWorkload.properties; about the PostgreSQL
// 4 cell of docs/performance.md), every request recorded through its
// requester's handle, then the tick; a progress window is taken every
// 10 s. ns/req is the whole cost divided by the requests.
func BenchmarkCollectorSecond(b *testing.B) {
	const requesters, perSecond = 4, 18000
	cfg, _, err := config.Load(config.Source{Defaults: map[string]string{"store": "memory", "workload_file": "config/FBWorkload.properties"}})
	if err != nil {
		b.Fatal(err)
	}
	// Median latencies (ms), about those of that cell.
	medianMs := [graph.NumRequestOps]float64{}
	for op := range medianMs {
		medianMs[op] = 0.5 // writes
	}
	medianMs[graph.CountLink], medianMs[graph.MultigetLink], medianMs[graph.GetLinksList], medianMs[graph.GetNode] = 0.08, 0.15, 0.2, 0.07
	type req struct {
		op      graph.Op
		latency int64
		rows    int64
	}
	rng := rand.New(rand.NewPCG(1, 2))
	reqs := make([]req, perSecond)
	for i := range reqs {
		p := rng.Float64() * 100
		op := graph.Op(graph.NumRequestOps - 1)
		for o, pct := range cfg.Mix {
			if p < pct {
				op = graph.Op(o)
				break
			}
			p -= pct
		}
		// Log-normal around the median, sigma 1: a tail to tens of ms.
		reqs[i] = req{op: op, latency: int64(medianMs[op] * 1e6 * math.Exp(rng.NormFloat64())), rows: int64(rng.IntN(200))}
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
