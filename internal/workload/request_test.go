package workload

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
	_ "github.com/linkbench/linkbench/internal/store/memory" // registers the memory store
)

func TestOpMixMatchesConfig(t *testing.T) {
	cfg, data := testConfig(t)
	g := testGraph(t, cfg, data)
	gens, err := NewGens(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &RequestPhase{Config: cfg, Graph: g, Data: data, Gens: gens}
	q, err := p.newRequester(0, stats.NewCollector(3, false, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	const n = 200000
	var hits [graph.NumRequestOps]int
	for i := 0; i < n; i++ {
		hits[q.nextOp()]++
	}
	for op, want := range cfg.Mix {
		got := 100 * float64(hits[op]) / n
		if math.Abs(got-want) > 0.5 {
			t.Errorf("%s: %.3f%% of requests, config says %.3f%%", graph.Op(op), got, want)
		}
	}
}

func openMemory(t *testing.T) store.Store {
	t.Helper()
	d, err := store.Lookup("memory")
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Open(context.Background(), store.Options{Props: store.MapProps{}, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func loadMemory(t *testing.T, st store.Store, overrides ...string) *RequestPhase {
	t.Helper()
	cfg, data := testConfig(t, overrides...)
	g := testGraph(t, cfg, data)
	lp := &LoadPhase{Config: cfg, Store: st.(store.BulkLoader), Graph: g, Retry: store.DefaultRetryPolicy}
	if _, err := lp.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	gens, err := NewGens(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &RequestPhase{Config: cfg, Store: st, Graph: g, Data: data, Gens: gens, Retry: store.DefaultRetryPolicy}
}

func TestRequestPhaseRunsTheMixAndKeepsCounts(t *testing.T) {
	st := openMemory(t)
	p := loadMemory(t, st, "requesters=4", "requests=5000", "maxtime=60", "warmup_time=0",
		"addlink=30", "deletelink=20", "updatelink=30", "countlink=0", "getlink=0", "getlinklist=20",
		"getnode=0", "addnode=0", "updatenode=0", "deletenode=0")
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 4*5000 || res.Errors != 0 {
		t.Fatalf("%d requests, %d errors; want 20000 and 0", res.Requests, res.Errors)
	}
	var ops int64
	for _, s := range res.Summary {
		if s.Op < graph.Op(graph.NumRequestOps) {
			ops += s.Count
		}
	}
	if ops != res.Requests {
		t.Fatalf("per-op counts sum to %d, requests %d", ops, res.Requests)
	}
	// Every count row equals the visible links after the write-heavy run.
	sc := st.(store.Scanner)
	visible := map[[2]int64]int64{}
	if err := sc.ScanVisibleLinkCounts(context.Background(), func(id1, lt, n int64) error {
		visible[[2]int64{id1, lt}] = n
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	bad := 0
	if err := sc.ScanCounts(context.Background(), func(c graph.Count) error {
		if visible[[2]int64{c.ID1, c.LinkType}] != c.Count {
			bad++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if bad > 0 {
		t.Fatalf("%d count rows disagree with the visible links", bad)
	}
}

func TestRequestPhaseStopsAtMaxtimeAndCancel(t *testing.T) {
	st := openMemory(t)
	p := loadMemory(t, st, "requesters=2", "requests=0", "maxtime=1", "warmup_time=0")
	start := time.Now()
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second || res.Requests == 0 {
		t.Fatalf("ran %s with %d requests", el, res.Requests)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p2 := loadMemory(t, openMemory(t), "requesters=2", "requests=0", "maxtime=3600", "warmup_time=0")
	p2.OnInterval = func(stats.Interval) { cancel() }
	res, err = p2.Run(ctx)
	if err != nil || !res.Interrupted || res.Requests == 0 {
		t.Fatalf("cancelled run: err %v, interrupted %v, %d requests", err, res != nil && res.Interrupted, res.Requests)
	}
}

// failingStore fails every operation with a non-transient error.
type failingStore struct{ store.Store }

func (failingStore) GetNode(context.Context, int32, int64) (graph.Node, bool, error) {
	return graph.Node{}, false, errFail
}

var errFail = &failure{}

type failure struct{}

func (*failure) Error() string { return "boom" }

// Reliability(server): more failures than `max_failed_requests` | the requester stops, results are printed and written, exit 1 naming the last error
func TestMaxFailedRequests(t *testing.T) {
	st := openMemory(t)
	p := loadMemory(t, st, "requesters=1", "requests=0", "maxtime=30", "warmup_time=0", "max_failed_requests=5",
		"addlink=0", "deletelink=0", "updatelink=0", "countlink=0", "getlink=0", "getlinklist=0",
		"getnode=100", "addnode=0", "updatenode=0", "deletenode=0")
	p.Store = failingStore{st}
	res, err := p.Run(context.Background())
	if err != ErrTooManyFailures || !res.FailedLimit || res.Errors != 6 {
		t.Fatalf("err %v, failed limit %v, errors %d", err, res.FailedLimit, res.Errors)
	}
}

// outageStore refuses every GET_NODE with a connection error until until.
type outageStore struct {
	store.Store
	until time.Time
}

func (o outageStore) GetNode(ctx context.Context, t int32, id int64) (graph.Node, bool, error) {
	if time.Now().Before(o.until) {
		return graph.Node{}, false, graph.Connection(errors.New("connection refused"))
	}
	return o.Store.GetNode(ctx, t, id)
}

// Reliability(server): connection errors for 0.5 s | a handful of counted failures, the run continues
func TestOutageBacksOffAndContinues(t *testing.T) {
	st := openMemory(t)
	p := loadMemory(t, st, "requesters=2", "requests=0", "maxtime=1.5", "warmup_time=0", "max_failed_requests=40",
		"addlink=0", "deletelink=0", "updatelink=0", "countlink=0", "getlink=0", "getlinklist=0",
		"getnode=100", "addnode=0", "updatenode=0", "deletenode=0")
	p.Store = outageStore{Store: st, until: time.Now().Add(500 * time.Millisecond)}
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatalf("the run did not survive a 0.5 s outage: %v (errors %d)", err, res.Errors)
	}
	// With backoff (50 ms doubling to 1 s) each requester fails a handful of
	// times during the outage; without it, thousands of times.
	if res.Errors == 0 || res.Errors > 20 || res.Requests < 1000 {
		t.Fatalf("errors %d, requests %d", res.Errors, res.Requests)
	}
}

// slowGen is a payload generator that takes a known time per payload.
type slowGen struct{ d time.Duration }

func (g slowGen) Fill(_ *rand.Rand, dst []byte) {
	time.Sleep(g.d) // the cost of drawing the arguments, not a synchronisation
	clear(dst)
}

// TestTimedRegionIsTheStoreCall: an op is timed from its store call, as
// the reference times it, not from the draw of its arguments (here a
// payload that takes 20 ms to make). The memory store's ADD_NODE takes
// microseconds, so its mean stays far below the generator's 20 ms.
func TestTimedRegionIsTheStoreCall(t *testing.T) {
	const gen = 20 * time.Millisecond
	for _, rate := range []string{"0", "1000"} {
		t.Run("requestrate="+rate, func(t *testing.T) {
			p := loadMemory(t, openMemory(t), "requesters=1", "requests=10", "maxtime=60", "warmup_time=0", "requestrate="+rate,
				"addlink=0", "deletelink=0", "updatelink=0", "countlink=0", "getlink=0", "getlinklist=0",
				"getnode=0", "addnode=100", "updatenode=0", "deletenode=0")
			p.Gens.NodeAdd = slowGen{gen}
			res, err := p.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range res.Summary {
				if s.Op != graph.AddNode {
					continue
				}
				if s.Count != 10 {
					t.Fatalf("%d ADD_NODE recorded, want 10", s.Count)
				}
				timed, what := s.Percentiles, "latency"
				if s.Service != nil {
					timed, what = *s.Service, "service time"
				} else if rate != "0" {
					t.Fatal("a throttled run reports no service time")
				}
				if timed.Mean >= float64(gen/time.Millisecond)/2 {
					t.Errorf("ADD_NODE mean %s %.3f ms: the %s payload draw was timed", what, timed.Mean, gen)
				}
				return
			}
			t.Fatal("no ADD_NODE in the summary")
		})
	}
}

// TestPacedRunThatFallsBehind: requesters paced at 1,000 ops/s whose every
// op takes 5 ms to draw cannot keep their schedule. The ops they send
// after the warm-up that were due during it are not recorded but counted
// in PaceUncounted, the progress reports say how far behind they are,
// and the run says it fell behind. Ops drawn at once
// keep a pace of 200/s: over 2 s, only a wake-up 20 ms late at the end of
// the warm-up would leave 1 % of them uncounted.
func TestPacedRunThatFallsBehind(t *testing.T) {
	for _, slow := range []bool{true, false} {
		rate, measured := "1000", 300*time.Millisecond
		if !slow {
			rate, measured = "200", 2*time.Second
		}
		p := loadMemory(t, openMemory(t), "requesters=2", "maxtime=60", "warmup_time=0", "requestrate="+rate,
			"addlink=0", "deletelink=0", "updatelink=0", "countlink=0", "getlink=0", "getlinklist=0",
			"getnode=0", "addnode=100", "updatenode=0", "deletenode=0")
		p.Config.WarmupTime, p.Config.MaxTime = 100*time.Millisecond, measured
		if slow {
			p.Gens.NodeAdd = slowGen{5 * time.Millisecond}
		}
		var behind time.Duration // the most the progress reports said
		p.Tick, p.ProgressEvery = 20*time.Millisecond, 50*time.Millisecond
		p.OnProgress = func(pr Progress) { behind = max(behind, pr.Behind) }
		res, err := p.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if slow && behind < 100*time.Millisecond {
			t.Errorf("behind: the progress reports said at most %s behind, while the run ended %s behind", behind, res.PaceLag)
		}
		if !slow {
			if res.FellBehind() {
				t.Errorf("on time: reported behind (%d uncounted of %d, lag %s)", res.PaceUncounted, res.Requests, res.PaceLag)
			}
			continue
		}
		// 2 requesters sent about 20 ops each in the warm-up, due in its
		// first 20 ms, and about 60 each after it, all due in the warm-up.
		if res.PaceUncounted < 20 || res.Requests > res.PaceUncounted {
			t.Errorf("behind: %d ops uncounted, %d counted; want most of the measured time's sends uncounted", res.PaceUncounted, res.Requests)
		}
		if !res.FellBehind() {
			t.Errorf("behind: not reported (%d uncounted of %d, lag %s)", res.PaceUncounted, res.Requests, res.PaceLag)
		}
	}
}
