package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
)

// Errors that end a worker's operation from outside: the operation took
// longer than op_timeout, or the request phase reached maxtime plus
// maxtime_grace. Both are the causes of the worker contexts' cancellation.
var (
	ErrOpTimeout = errors.New("op_timeout reached")
	ErrHardEnd   = errors.New("maxtime + maxtime_grace reached")
)

// TimeoutError is the failure recorded for an operation abandoned because
// the store did not answer in time.
type TimeoutError struct {
	Op graph.Op
	// What names the call abandoned when it is not an operation (the
	// load's journal write); empty for Op.
	What  string
	After time.Duration
	Cause error // ErrOpTimeout or ErrHardEnd
}

func (e *TimeoutError) Error() string {
	what := e.What
	if what == "" {
		what = e.Op.String()
	}
	if errors.Is(e.Cause, ErrHardEnd) {
		return fmt.Sprintf("%s abandoned after %s without an answer from the store, at the end of the phase (maxtime + maxtime_grace)", what, e.After.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s abandoned after %s without an answer from the store (op_timeout)", what, e.After.Round(time.Millisecond))
}

// Unwrap makes a timeout a connection error for the runner's policy
// (back off, then try again).
func (e *TimeoutError) Unwrap() []error { return []error{graph.ErrConnection, e.Cause} }

// OpError names the operation of a failed request, whatever the store
// says (a server's statement timeout message names no operation).
type OpError struct {
	Op  graph.Op
	Err error
}

func (e *OpError) Error() string { return e.Op.String() + ": " + e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }

// watch is one worker's view for the watchdog: the start of its current
// operation (0 when idle) and the context its operations run under. The
// worker pays two atomic stores per operation; no timer or goroutine.
type watch struct {
	// state is the current operation: its start on the watchdog's
	// monotonic clock (ns since its epoch, plus 256 so that it is never
	// 0) with the op in the low 8 bits (a start 256 ns early does not
	// matter), 0 when idle.
	// It has a cache line of its own: the watches of the requesters are
	// written by different cores on every operation.
	_      [64]byte
	state  atomic.Int64
	_      [56]byte
	ctx    context.Context // written by the worker (renew) only
	cancel context.CancelCauseFunc
	parent context.Context
	d      *watchdog
	// claim decides who counts an operation abandoned at the hard end:
	// the requester when it returns, or the phase when it gives up on it.
	claim atomic.Bool
}

// begin marks the start of an operation at now, a reading of time.Now:
// its monotonic reading counts, not the wall clock, which may be stepped.
func (w *watch) begin(op graph.Op, now time.Time) {
	w.state.Store((int64(now.Sub(w.d.epoch))&^0xff + 0x100) | int64(op))
}

// end marks the operation over.
func (w *watch) end() { w.state.Store(0) }

// current returns the operation in progress and its start on the
// watchdog's clock (ok false when the worker is between operations).
func (w *watch) current() (op graph.Op, start time.Duration, ok bool) {
	s := w.state.Load()
	return graph.Op(s & 0xff), time.Duration(s&^0xff - 0x100), s != 0
}

// expired reports whether the worker's current operation was stopped
// from outside, and why; the worker then calls renew before its next
// operation (when the phase goes on).
func (w *watch) expired() (bool, error) {
	if w.ctx.Err() == nil {
		return false, nil
	}
	return true, context.Cause(w.ctx)
}

// stopped reports whether the worker's context was cancelled (the
// operation may have finished anyway); cheap enough for every operation.
func (w *watch) stopped() bool {
	select {
	case <-w.ctx.Done():
		return true
	default:
		return false
	}
}

// watchdog cancels the context of any worker whose operation has run for
// longer than its timeout. One goroutine serves a whole phase. Its
// arithmetic is on the monotonic clock: durations since epoch, which a
// step of the wall clock (NTP, a suspended VM) does not change.
type watchdog struct {
	timeout time.Duration
	epoch   time.Time
	// since is the time since epoch on the monotonic clock (tests step
	// a fake one).
	since func() time.Duration
	mu    sync.Mutex
	ws    []*watch
	stop  chan struct{}
	done  chan struct{}
}

// newWatchdog starts a watchdog; a zero timeout watches nothing.
func newWatchdog(timeout time.Duration) *watchdog {
	epoch := time.Now()
	return startWatchdog(timeout, epoch, func() time.Duration { return time.Since(epoch) })
}

// startWatchdog starts a watchdog whose clock reads since.
func startWatchdog(timeout time.Duration, epoch time.Time, since func() time.Duration) *watchdog {
	d := &watchdog{timeout: timeout, epoch: epoch, since: since, stop: make(chan struct{}), done: make(chan struct{})}
	if timeout <= 0 {
		close(d.done)
		return d
	}
	go d.loop()
	return d
}

// add registers a worker whose operations run under a child of parent.
func (d *watchdog) add(parent context.Context) *watch {
	w := &watch{parent: parent, d: d}
	w.renew()
	d.mu.Lock()
	d.ws = append(d.ws, w)
	d.mu.Unlock()
	return w
}

// renew gives the worker a fresh context after an op timeout.
func (w *watch) renew() {
	ctx, cancel := context.WithCancelCause(w.parent)
	w.d.mu.Lock()
	w.ctx, w.cancel = ctx, cancel
	w.d.mu.Unlock()
}

func (d *watchdog) loop() {
	defer close(d.done)
	every := min(max(d.timeout/8, 10*time.Millisecond), time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.check()
		}
	}
}

// check cancels the operations that started more than the timeout ago.
func (d *watchdog) check() {
	limit := d.since() - d.timeout
	d.mu.Lock()
	for _, w := range d.ws {
		if _, start, ok := w.current(); ok && start < limit {
			w.cancel(ErrOpTimeout)
		}
	}
	d.mu.Unlock()
}

// close stops the watchdog.
func (d *watchdog) close() {
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	<-d.done
}
