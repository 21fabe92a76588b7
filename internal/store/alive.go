package store

import (
	"context"
	"errors"
	"time"
)

// Pinger is a store that can ask its server whether it answers, on a
// connection of its own (not one a long statement holds).
type Pinger interface {
	Ping(ctx context.Context) error
}

// ErrNoAnswer is the cause of a context that WatchAlive cancelled.
var ErrNoAnswer = errors.New("the server stopped answering")

// WatchAlive returns a context for store calls that have no deadline of
// their own because they may rightly take long (building an index, a
// check's scans, TRUNCATE), and the function that ends the watch. While
// it runs, the store is pinged every timeout/4 (at least every second);
// a ping without an answer within timeout means the server hung (stopped,
// or cut off) rather than busy, and cancels the context with cause
// ErrNoAnswer. Stores without Ping, and a zero timeout, are not watched.
// One goroutine per watch; nothing per call.
func WatchAlive(ctx context.Context, st Store, timeout time.Duration) (context.Context, func()) {
	p, ok := st.(Pinger)
	if !ok || timeout <= 0 {
		return ctx, func() {}
	}
	wctx, cancel := context.WithCancelCause(ctx)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(max(timeout/4, time.Second))
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-wctx.Done():
				return
			case <-t.C:
			}
			pctx, pcancel := context.WithTimeout(wctx, timeout)
			err := p.Ping(pctx)
			silent := errors.Is(pctx.Err(), context.DeadlineExceeded)
			pcancel()
			if err != nil && silent {
				cancel(ErrNoAnswer)
				return
			}
		}
	}()
	return wctx, func() {
		close(stop)
		<-done
		cancel(nil)
	}
}

// NoAnswer reports whether ctx was cancelled by WatchAlive.
func NoAnswer(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrNoAnswer) }
