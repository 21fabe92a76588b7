package workload

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/gen"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/memory"
)

// BenchmarkRequestMix measures the driver's cost per request: the 2017
// mix against the in-memory store, with the shipped distribution data at
// maxid1 = 100001, 4 requesters. Reports requests/s.
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
	for _, q := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := 0; i < per; i++ {
				start := time.Now()
				op := q.nextOp()
				err := q.do(ctx, op)
				end := time.Now()
				q.handle.Record(op, int64(end.Sub(start)), int64(end.Sub(start)), err != nil, q.lastRetries)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(per*len(reqs))/b.Elapsed().Seconds(), "requests/s")
}
