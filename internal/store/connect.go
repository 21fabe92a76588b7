package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/linkbench/linkbench/internal/secret"
)

// DefaultConnectTimeout is connect_timeout's default.
const DefaultConnectTimeout = 10 * time.Second

// ConnectTimeout reads connect_timeout: the seconds a connection to a
// server may take, from the dial through TLS, the handshake and
// authentication to the answer of its first query (default 10 s; at
// most a year, as the config checks; 0 is the default).
func ConnectTimeout(p Props) (time.Duration, error) {
	v := String(p, "connect_timeout", "")
	if v == "" {
		return DefaultConnectTimeout, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > (365*24*time.Hour).Seconds() {
		return 0, fmt.Errorf("connect_timeout (%s): %q is not seconds between 0 and a year", p.Where("connect_timeout"), v)
	}
	if f == 0 {
		return DefaultConnectTimeout, nil
	}
	return time.Duration(f * float64(time.Second)), nil
}

// Peer names a server in the messages of Connect.
type Peer struct {
	// Kind is the server's kind ("PostgreSQL"), Addr its host:port.
	Kind, Addr string
}

// Connect is how every server store connects: connect runs the whole of
// it (the dial, TLS, the handshake and authentication, and the first
// query, each of which may wait for the server) under a deadline of
// bound. It returns when connect does or at the deadline, whichever comes
// first, so a driver that does not heed its context cannot hold the
// caller either. When connecting fails, undo releases what connect
// opened: at once, or, past the deadline, once connect has returned.
//
// A server that does not answer within bound (stopped with SIGSTOP, hung,
// cut off, or another program on its port) is named with its address and
// the bound; a cancelled ctx (Ctrl-C) says so. Before those, describe,
// the store's own reading of its driver's errors, may name the cause
// (authentication failed, connection refused; a driver that retries a
// refused connection until the bound still means refused); it returns
// nil when it has nothing to add.
func Connect(ctx context.Context, srv Peer, bound time.Duration, connect func(ctx context.Context) error, undo func(), describe func(error) error) error {
	cctx, cancel := context.WithTimeout(ctx, bound)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		done <- connect(cctx)
	}()
	var err error
	select {
	case err = <-done:
	case <-cctx.Done():
		select {
		case err = <-done:
		case <-time.After(100 * time.Millisecond):
			// connect ignores its context: leave it behind.
			go func() {
				<-done
				undo()
			}()
			return connectTimeout(ctx, srv, bound)
		}
	}
	if err == nil {
		return nil
	}
	undo()
	if ctx.Err() != nil {
		return connectTimeout(ctx, srv, bound)
	}
	if d := describe(err); d != nil {
		return d
	}
	// The driver's own timeouts are the same bound and may fire a hair
	// before the context's.
	if errors.Is(cctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return connectTimeout(ctx, srv, bound)
	}
	return fmt.Errorf("cannot connect to %s at %s: %s", srv.Kind, srv.Addr, secret.Text(err.Error()))
}

// connectTimeout is the error of a connection that did not finish.
func connectTimeout(ctx context.Context, srv Peer, bound time.Duration) error {
	if ctx.Err() != nil {
		return fmt.Errorf("cannot connect to %s at %s: interrupted while connecting: %w", srv.Kind, srv.Addr, context.Cause(ctx))
	}
	return &NoAnswerError{Server: srv, Bound: bound}
}

// NoAnswerError is the error of a server that did not let a connection
// finish within connect_timeout.
type NoAnswerError struct {
	Server Peer
	Bound  time.Duration
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("cannot connect to %s at %s: no answer within %s (connect_timeout): the server is stopped (SIGSTOP), hung, overloaded or cut off, or another program listens on that port; check host and port",
		e.Server.Kind, e.Server.Addr, Seconds(e.Bound))
}

// Unwrap makes it a deadline error for errors.Is.
func (e *NoAnswerError) Unwrap() error { return context.DeadlineExceeded }

// Seconds prints d as the seconds a user would have typed: "10 s", "0.5 s".
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// isTimeout reports an error that says it timed out (a net.Error's
// Timeout, as a dial or a read past its deadline returns).
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
