package workload

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/gen"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/memory"
)

// BenchmarkRequestMix measures the driver's cost per request: the 2017
// mix against the in-memory store, with the shipped distribution data at
// maxid1 = 100001, 4 requesters. Reports requests/s, and the mean time
// from the start of a request to its store call (the draw of the op and
// its arguments, which the timed region leaves out) per op and overall
// (draw-ns/OP, draw-ns/req).
func BenchmarkRequestMix(b *testing.B) {
	cfg, _, err := config.Load(config.Source{Defaults: map[string]string{"store": "memory", "workload_file": "config/FBWorkload.properties"},
		Overrides: []string{"maxid1=100001", "load_random_seed=1", "request_random_seed=2", "requesters=4", "loaders=2"}})
	if err != nil {
		b.Fatal(err)
	}
	data, err := cfg.LoadData()
	if err != nil {
		b.Fatal(err)
	}
	g, err := gen.NewGraph(gen.GraphSpec{StartID1: cfg.StartID1, MaxID1: cfg.MaxID1, LinkTypeCount: cfg.LinkTypeCount,
		NLinks: cfg.NLinks, Data: data, LinkDataSize: cfg.LinkDataSize, NodeDataSize: cfg.NodeDataSize,
		LinkGen: cfg.LinkAddGen, NodeGen: cfg.NodeAddGen, Seed: 1, NowMs: time.Now().UnixMilli()})
	if err != nil {
		b.Fatal(err)
	}
	st := memory.New()
	lp := &LoadPhase{Config: cfg, Store: st, Graph: g, Retry: store.DefaultRetryPolicy}
	if _, err := lp.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	gens, _ := NewGens(cfg)
	p := &RequestPhase{Config: cfg, Store: st, Graph: g, Data: data, Gens: gens, Retry: store.DefaultRetryPolicy}
	c := stats.NewCollector(3, false, time.Now())
	var reqs []*requester
	for i := 0; i < cfg.Requesters; i++ {
		q, err := p.newRequester(i, c)
		if err != nil {
			b.Fatal(err)
		}
		reqs = append(reqs, q)
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N/len(reqs) + 1
	type drawn struct {
		d [graph.NumRequestOps]time.Duration
		n [graph.NumRequestOps]int64
	}
	draws := make([]drawn, len(reqs))
	for w, q := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for range per {
				start := time.Now()
				op := q.nextOp()
				err := q.do(ctx, op)
				end := time.Now()
				draws[w].d[op] += q.sent.Sub(start)
				draws[w].n[op]++
				q.handle.Record(op, int64(end.Sub(q.sent)), int64(end.Sub(q.sent)), err != nil, q.lastRetries)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(per*len(reqs))/b.Elapsed().Seconds(), "requests/s")
	var all time.Duration
	for op := range graph.Op(graph.NumRequestOps) {
		var d time.Duration
		var n int64
		for _, w := range draws {
			d, n = d+w.d[op], n+w.n[op]
		}
		all += d
		if n > 0 {
			b.ReportMetric(float64(d)/float64(n), "draw-ns/"+op.String())
		}
	}
	b.ReportMetric(float64(all)/float64(per*len(reqs)), "draw-ns/req")
}
