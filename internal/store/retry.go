package store

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
)

// RetryPolicy retries transient errors with capped, jittered exponential
// backoff. The zero value retries nothing.
type RetryPolicy struct {
	// MaxAttempts is the total number of tries (1 = no retry).
	MaxAttempts int
	// Base is the first backoff; each retry doubles it up to Max.
	Base, Max time.Duration
}

// DefaultRetryPolicy is used when the config does not say otherwise.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 10, Base: 2 * time.Millisecond, Max: 500 * time.Millisecond}

// Do runs fn until it succeeds, fails with a non-transient error, the
// attempts are used up or ctx ends. It returns fn's last error and the
// number of retries made. Only transient errors are retried; a connection
// error fails the operation and the store reconnects on its next call.
func (p RetryPolicy) Do(ctx context.Context, fn func() error) (retries int, err error) {
	attempts := max(p.MaxAttempts, 1)
	backoff := p.Base
	for i := 0; ; i++ {
		err = fn()
		if err == nil || i+1 >= attempts || !graph.IsTransient(err) {
			return i, err
		}
		// Full jitter: sleep U[backoff/2, backoff).
		d := backoff/2 + time.Duration(rand.Int64N(int64(backoff/2)+1))
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return i, err
		case <-t.C:
		}
		backoff = min(backoff*2, p.Max)
	}
}
