package workload

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestExpectedLinksEstimateAndCancel: a graph too large to walk before a
// load is estimated within 1% of the exact count, and the count of a large
// graph is a sample, done in moments, that stops when its context ends
// (before, maxid1 = 1e18 spun for hours ignoring SIGINT).
// Reliability(input): a large graph (up to `maxid1` = 1e12) | the load's count of the links to write logs its progress and stops at Ctrl-C; above 2^24 ids it is estimated from 2^20 ids (within 1%), so the load starts at once
func TestExpectedLinksEstimateAndCancel(t *testing.T) {
	cfg, data := testConfig(t, "maxid1=4000001", "loader_chunk_size=2048")
	p := &LoadPhase{Config: cfg, Graph: testGraph(t, cfg, data)}
	exact, nodes, err := p.expected(context.Background(), 1)
	if err != nil || nodes != 4000000 {
		t.Fatal(nodes, err)
	}
	est, estNodes, err := p.estimated(context.Background(), 1)
	if err != nil || estNodes != nodes {
		t.Fatal(estNodes, err)
	}
	if rel := math.Abs(float64(est-exact)) / float64(exact); rel > 0.01 {
		t.Fatalf("estimate %d, exact %d: off by %.2f%%", est, exact, 100*rel)
	}

	// A trillion ids: the count is a sample, done in moments, and a
	// cancelled one stops at once.
	cfg, data = testConfig(t, "maxid1=1000000000000")
	p = &LoadPhase{Config: cfg, Graph: testGraph(t, cfg, data)}
	start := time.Now()
	if _, nodes, err := p.expected(context.Background(), 1); err != nil || nodes != 999999999999 {
		t.Fatal(nodes, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the count of 1e12 ids took %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := p.expected(ctx, 1); err == nil {
		t.Fatal("a cancelled count of 1e12 ids did not stop")
	}
}
