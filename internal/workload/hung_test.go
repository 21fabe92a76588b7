package workload

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// hangStore stops answering GET_NODE from a given time: it blocks until
// its context ends (as the real drivers do when cancelled), or for good
// when deaf is set (a driver that ignores cancellation), until release.
type hangStore struct {
	store.Store
	from    time.Time
	until   time.Time // zero = for good
	deaf    bool
	release chan struct{}
	once    *atomic.Bool // hang only the first call after from
}

func (h hangStore) GetNode(ctx context.Context, t int32, id int64) (graph.Node, bool, error) {
	now := time.Now()
	hang := now.After(h.from) && (h.until.IsZero() || now.Before(h.until))
	if hang && h.once != nil {
		hang = h.once.CompareAndSwap(false, true)
	}
	if hang {
		if h.deaf {
			<-h.release
			return graph.Node{}, false, errors.New("released")
		}
		select {
		case <-ctx.Done():
			return graph.Node{}, false, ctx.Err()
		case <-h.release:
		}
	}
	return h.Store.GetNode(ctx, t, id)
}

var getNodeOnly = []string{"requests=0", "warmup_time=0", "max_failed_requests=-1",
	"addlink=0", "deletelink=0", "updatelink=0", "countlink=0", "getlink=0", "getlinklist=0",
	"getnode=100", "addnode=0", "updatenode=0", "deletenode=0"}

// TestHardEndStopsAHungStore: a store that stops answering mid-run no
// longer keeps the phase past maxtime: at maxtime + maxtime_grace the
// operations in flight are cancelled and counted as timed out, and the
// result says which were waiting; a driver that ignores the cancellation
// is abandoned 2 s later. Before, the phase waited for as long as the
// server stayed stopped.
// Reliability(server): a store that stops answering, also through a driver that ignores cancellation | the phase ends at maxtime + `maxtime_grace`; a requester still blocked 2 s after the cancellation is left behind, its operation counted as timed out
func TestHardEndStopsAHungStore(t *testing.T) {
	for _, deaf := range []bool{false, true} {
		st := openMemory(t)
		p := loadMemory(t, st, append([]string{"requesters=3", "maxtime=1", "maxtime_grace=0.5", "op_timeout=0"}, getNodeOnly...)...)
		release := make(chan struct{})
		defer close(release)
		p.Store = hangStore{Store: st, from: time.Now().Add(300 * time.Millisecond), deaf: deaf, release: release}
		start := time.Now()
		res, err := p.Run(context.Background())
		took := time.Since(start)
		limit := 5 * time.Second // maxtime + grace is 1.5 s; the rest is headroom on a busy machine
		if deaf {
			limit += abandonWait
		}
		if err != nil || took > limit {
			t.Fatalf("deaf=%v: returned after %v (limit %v): %v", deaf, took, limit, err)
		}
		if len(res.HardEnd) != 3 || res.TimedOut != 3 || res.Errors != 3 || res.Requests < 100 {
			t.Fatalf("deaf=%v: hard end %v, timed out %d, errors %d, requests %d", deaf, res.HardEnd, res.TimedOut, res.Errors, res.Requests)
		}
		if want := map[bool]int{false: 0, true: 3}[deaf]; res.Abandoned != want {
			t.Fatalf("deaf=%v: %d abandoned, want %d", deaf, res.Abandoned, want)
		}
		var errs int64
		for _, o := range res.Summary {
			errs += o.Errors
		}
		if errs != 3 {
			t.Fatalf("deaf=%v: the summary counts %d errors, want the 3 timed-out operations", deaf, errs)
		}
	}
}

// TestOpTimeoutRecovers: one operation that hangs is abandoned after
// op_timeout, counted as a timed-out failure, and its requester goes on;
// the phase ends at maxtime with no hard end.
// Reliability(server): one operation that never returns | abandoned after `op_timeout` (default 60 s), counted as a failure naming the op; the requester goes on
func TestOpTimeoutRecovers(t *testing.T) {
	st := openMemory(t)
	p := loadMemory(t, st, append([]string{"requesters=2", "maxtime=1.5", "maxtime_grace=5", "op_timeout=0.2"}, getNodeOnly...)...)
	release := make(chan struct{})
	defer close(release)
	p.Store = hangStore{Store: st, from: time.Now().Add(200 * time.Millisecond), release: release, once: new(atomic.Bool)}
	start := time.Now()
	res, err := p.Run(context.Background())
	if err != nil || time.Since(start) > 4*time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	if res.TimedOut != 1 || res.Errors != 1 || len(res.HardEnd) != 0 || res.Lost != nil || res.Requests < 1000 {
		t.Fatalf("timed out %d, errors %d, hard end %v, lost %v, requests %d", res.TimedOut, res.Errors, res.HardEnd, res.Lost, res.Requests)
	}
	var te *TimeoutError
	if !errors.As(res.LastError, &te) || te.Op != graph.GetNode || te.After < 200*time.Millisecond {
		t.Fatalf("last error %v", res.LastError)
	}
}

// TestLostServerIsReported: a store whose connection errors go on to the
// end of the phase is reported lost; one that comes back is not.
// Reliability(server): connection errors to the end of the phase | the result says the store was lost (for how long, failures since the last success, the last error named by its op); a store that comes back, however late, is not lost
func TestLostServerIsReported(t *testing.T) {
	for _, back := range []bool{false, true} {
		st := openMemory(t)
		p := loadMemory(t, st, append([]string{"requesters=2", "maxtime=2.5"}, getNodeOnly...)...)
		o := outageStore{Store: st, until: time.Now().Add(time.Hour)}
		if back {
			o.until = time.Now().Add(time.Second)
		}
		p.Store = o
		res, err := p.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if back != (res.Lost == nil) {
			t.Fatalf("back=%v: lost %+v", back, res.Lost)
		}
		// The error names its operation, whatever the store said.
		if !back && (res.Lost.Failures == 0 || !errors.Is(res.Lost.LastError, graph.ErrConnection) || res.Lost.Silent < 2*time.Second ||
			!strings.HasPrefix(res.Lost.LastError.Error(), "GET_NODE: ")) {
			t.Fatalf("lost %+v", res.Lost)
		}
	}
}
