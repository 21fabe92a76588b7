package workload

import (
	"context"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
)

// TestWatchdogCountsMonotonicTime steps a fake monotonic clock under the
// watchdog: an operation is abandoned once op_timeout has passed on it,
// and only then, whatever the wall clock does meanwhile (the watchdog
// never reads it; before, it compared UnixNano wall readings, so a forward
// step of an hour cancelled every operation in flight).
func TestWatchdogCountsMonotonicTime(t *testing.T) {
	epoch := time.Now()
	var mono time.Duration
	d := &watchdog{timeout: 10 * time.Second, epoch: epoch, since: func() time.Duration { return mono }}
	w := d.add(context.Background())
	// The requester reads time.Now for the start: its monotonic reading
	// is what counts.
	w.begin(graph.GetNode, epoch.Add(time.Second))
	for _, c := range []struct {
		mono      time.Duration
		cancelled bool
	}{{time.Second, false}, {10 * time.Second, false}, {10*time.Second + 900*time.Millisecond, false}, {11*time.Second + 100*time.Millisecond, true}} {
		mono = c.mono
		d.check()
		if got := w.ctx.Err() != nil; got != c.cancelled {
			t.Fatalf("at %s after the epoch (op started at 1 s, op_timeout 10 s): cancelled %v", c.mono, got)
		}
	}
	if ok, err := w.expired(); !ok || err != ErrOpTimeout {
		t.Fatalf("expired %v, %v", ok, err)
	}
	// An operation started at the epoch itself is still an operation.
	w.renew()
	w.begin(graph.AddLink, epoch)
	if op, start, ok := w.current(); !ok || op != graph.AddLink || start < -256 || start > 0 {
		t.Fatalf("current %v %s %v", op, start, ok)
	}
	w.end()
	if _, _, ok := w.current(); ok {
		t.Fatal("an idle worker has an operation")
	}
}
