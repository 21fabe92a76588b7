package workload

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/graph"
)

// phaseCounts are the request phase's totals, kept beside the
// requesters' own so that a requester abandoned mid-operation still
// counts: done is bumped once per recorded request, the others only on
// failures.
type phaseCounts struct {
	// done is written by every requester on every request: a cache line
	// of its own, away from the phase's read-mostly fields.
	_                [64]byte
	done             atomic.Int64
	_                [56]byte
	failed, timedOut atomic.Int64
}

// abandonWait is how long the phase waits, after cancelling every
// operation at its hard end, for the requesters to return before it
// leaves the ones that do not behind. The stores' drivers return at once
// when cancelled, so this is a safety net for one that would not.
const abandonWait = 2 * time.Second

// hardStop ends a request phase at maxtime + maxtime_grace even when
// operations are still waiting for a store that does not answer.
type hardStop struct {
	ended     chan struct{} // closed when the requesters returned or were given up
	timer     *time.Timer
	mu        sync.Mutex
	busy      []graph.Op
	abandoned int
}

// hardEnd arms the phase's hard end: at deadline + maxtime_grace the
// operations in flight are cancelled (cause ErrHardEnd) and counted as
// timed out; requesters that have not returned abandonWait later are
// abandoned.
func (p *RequestPhase) hardEnd(deadline time.Time, stop context.CancelCauseFunc, reqs []*requester, finished <-chan struct{}) *hardStop {
	h := &hardStop{ended: make(chan struct{})}
	giveUp := make(chan struct{})
	h.timer = time.AfterFunc(time.Until(deadline.Add(p.Config.MaxTimeGrace)), func() {
		var busy []graph.Op
		for _, q := range reqs {
			if op, _, ok := q.watch.current(); ok && !q.returned.Load() {
				busy = append(busy, op)
			}
		}
		h.mu.Lock()
		h.busy = busy
		h.mu.Unlock()
		stop(ErrHardEnd)
		t := time.NewTimer(abandonWait)
		defer t.Stop()
		select {
		case <-finished:
		case <-t.C:
			h.abandon(p, reqs)
		}
		close(giveUp)
	})
	go func() {
		select {
		case <-finished:
		case <-giveUp:
		}
		close(h.ended)
	}()
	return h
}

// abandon counts the operation of every requester still blocked as
// failed (timed out), in its statistics handle (safe from here: handles
// lock) unless the requester got to it first.
func (h *hardStop) abandon(p *RequestPhase, reqs []*requester) {
	n := 0
	for _, q := range reqs {
		if q.returned.Load() {
			continue
		}
		n++
		if op, _, ok := q.watch.current(); ok && q.watch.claim.CompareAndSwap(false, true) {
			q.handle.Record(op, 0, 0, true, 0)
			p.counts.done.Add(1)
			p.counts.failed.Add(1)
			p.counts.timedOut.Add(1)
		}
	}
	h.mu.Lock()
	h.abandoned = n
	h.mu.Unlock()
}

func (h *hardStop) stop() { h.timer.Stop() }

// result is what the hard end found: the operations in flight when it
// fired (none when the phase ended in time) and the requesters abandoned.
func (h *hardStop) result() ([]graph.Op, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.busy, h.abandoned
}

// LostServer describes a store that stopped answering and did not come
// back before the end of the phase.
type LostServer struct {
	// Silent is how long before the end of the phase the last request
	// succeeded (the whole phase when none did).
	Silent time.Duration
	// Failures counts the requests that failed after the last success.
	Failures int64
	// LastError is the most recent failure.
	LastError error
}

// lostServer decides whether the store was lost for good: the requests of
// the last lostWindow of the phase all failed with connection errors (or
// timed out), and none succeeded after. A server that came back, however
// late, is not lost; neither is one that fails for another reason (a
// schema or a constraint error says what is wrong by itself).
func lostServer(reqs []*requester, cfg *config.Config) *LostServer {
	var lastOK, lastFail, end time.Time
	var lastErr error
	var failures int64
	for _, q := range reqs {
		if !q.returned.Load() {
			continue
		}
		if q.lastOK.After(lastOK) {
			lastOK = q.lastOK
		}
		if q.lastFail.After(lastFail) {
			lastFail, lastErr = q.lastFail, q.lastFailErr
		}
		failures += q.failStreak
	}
	end = lastFail
	window := min(5*time.Second, cfg.MaxTime/2)
	if lastFail.IsZero() || !lastFail.After(lastOK) || !errors.Is(lastErr, graph.ErrConnection) {
		return nil
	}
	silent := end.Sub(lastOK)
	if lastOK.IsZero() {
		silent = cfg.MaxTime
	}
	if silent < window {
		return nil
	}
	return &LostServer{Silent: silent, Failures: failures, LastError: lastErr}
}
