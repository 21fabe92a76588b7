package workload

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
)

// slowStore serves every GET_NODE in a fixed 2 ms: a server with a known
// capacity of 500 requests/s for one worker.
type slowStore struct{ store.Store }

const serviceTime = 2 * time.Millisecond

func (slowStore) GetNode(ctx context.Context, _ int32, id int64) (graph.Node, bool, error) {
	t := time.NewTimer(serviceTime)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return graph.Node{}, false, ctx.Err()
	}
	return graph.Node{ID: id}, true, nil
}

func getNodeSummary(t *testing.T, rate float64) stats.OpSummary {
	t.Helper()
	st := openMemory(t)
	p := loadMemory(t, st, "requesters=1", "requests=0", "maxtime=1.5", "warmup_time=0",
		"addlink=0", "deletelink=0", "updatelink=0", "countlink=0", "getlink=0", "getlinklist=0",
		"getnode=100", "addnode=0", "updatenode=0", "deletenode=0")
	p.Store = slowStore{st}
	p.Schedule = NewSchedule(time.Now(), []Stage{{Rate: rate}}, true, 0, 3)
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Summary {
		if s.Op == graph.GetNode {
			if s.Service == nil {
				t.Fatal("no service time recorded in an open-loop run")
			}
			return s
		}
	}
	t.Fatal("no GET_NODE recorded")
	return stats.OpSummary{}
}

func TestOpenLoopAboveCapacityShowsQueueing(t *testing.T) {
	// 2,000 arrivals/s against a capacity of 500/s: the backlog grows for
	// the whole run, so latency from the intended start grows far beyond
	// the service time, which stays about 2 ms.
	s := getNodeSummary(t, 2000)
	if s.Service.P50 < 1.9 || s.Service.P50 > 6 {
		t.Errorf("service p50 %.2f ms, want about 2", s.Service.P50)
	}
	if s.P50 < 50 || s.P99 < 5*s.Service.P99 {
		t.Errorf("latency p50 %.1f ms p99 %.1f ms do not show the backlog (service p99 %.2f ms)", s.P50, s.P99, s.Service.P99)
	}
}

func TestOpenLoopBelowCapacityAgrees(t *testing.T) {
	// 50 arrivals/s: a request rarely waits for another, so latency and
	// service agree at the median up to the timer's wake-up delay, which on
	// a busy 2-core machine can reach a millisecond or two (against the
	// 50 ms and more of the overloaded case).
	s := getNodeSummary(t, 50)
	if s.Service.P50 < 1.9 || s.Service.P50 > 6 || s.P50-s.Service.P50 > 3 {
		t.Errorf("latency p50 %.2f ms, service p50 %.2f ms: want both about 2 ms", s.P50, s.Service.P50)
	}
}

func TestStagedRunReportsEachStage(t *testing.T) {
	st := openMemory(t)
	p := loadMemory(t, st, "requesters=2", "requests=0", "maxtime=3", "warmup_time=0")
	p.Schedule = NewSchedule(time.Now(), []Stage{{Rate: 200, Duration: 1500 * time.Millisecond}, {Rate: 1000, Duration: 1500 * time.Millisecond}}, true, 0, 5)
	p.Tick = 250 * time.Millisecond
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stages) != 2 {
		t.Fatalf("%d stages", len(res.Stages))
	}
	a, b := res.Stages[0], res.Stages[1]
	// Poisson counts: 1.5 s at 200/s is 300 ± 17 (one sigma); at 1000/s, 1500 ± 39.
	if a.OpsPerSec < 120 || a.OpsPerSec > 300 || b.OpsPerSec < 700 || b.OpsPerSec > 1300 {
		t.Fatalf("stage rates %.0f and %.0f requests/s, want about 200 and 1000", a.OpsPerSec, b.OpsPerSec)
	}
}

// countingStore counts the GET_NODEs it serves.
type countingStore struct {
	store.Store
	n *atomic.Int64
}

func (c countingStore) GetNode(ctx context.Context, t int32, id int64) (graph.Node, bool, error) {
	c.n.Add(1)
	return c.Store.GetNode(ctx, t, id)
}

// TestOpenLoopStartsWithThePhase: a schedule made a while before the
// phase runs (the phase's setup: the store's checks, its sessions) starts
// with the phase. Before, its arrivals from then on were all due at the
// phase's start: a burst the store served and, before the measured window,
// nobody counted (here 400 of them: 0.2 s of 2,000 arrivals/s).
func TestOpenLoopStartsWithThePhase(t *testing.T) {
	st := openMemory(t)
	p := loadMemory(t, st, "requesters=2", "requests=300", "maxtime=10", "warmup_time=0",
		"addlink=0", "deletelink=0", "updatelink=0", "countlink=0", "getlink=0", "getlinklist=0",
		"getnode=100", "addnode=0", "updatenode=0", "deletenode=0")
	var served atomic.Int64
	p.Store = countingStore{st, &served}
	p.Schedule = NewSchedule(time.Now().Add(-200*time.Millisecond), []Stage{{Rate: 2000}}, true, 0, 3)
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 600 || served.Load() != 600 || res.PaceUncounted != 0 {
		t.Fatalf("counted %d requests of the 600 asked for, the store served %d, %d uncounted; want 600, 600, 0", res.Requests, served.Load(), res.PaceUncounted)
	}
}
