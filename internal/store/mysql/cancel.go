package mysql

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/linkbench/linkbench/internal/store/netconn"
)

// go-sql-driver watches the context of every statement with a goroutine
// per connection: it hands the context to that goroutine before the
// statement and waits for it to take a "finished" signal after, two
// goroutine switches per statement. On the project's 2-core machine that
// was 6 of the 37 µs of driver CPU a request cost. The request operations
// therefore give the driver a context that cannot be cancelled (detach),
// and cancellation of the caller's context while a statement is in flight
// aborts the store's sockets instead (sockets.abort): the statement fails
// at once, the operation returns the context's error, and the pools open
// new connections for what comes next. In this program a request's context
// is cancelled only when the whole phase stops (Ctrl-C, max_failed_requests),
// when every connection's statements should stop too.

// sockets are the store's open connections, for abort.
type sockets struct {
	dialer  netconn.Dialer
	mu      sync.Mutex
	m       map[*trackedConn]struct{}
	aborted atomic.Bool // abort has run at least once
}

// driverLog is go-sql-driver's logger: its own format on stderr, without
// the "use of closed network connection" lines of statements an abort
// stopped (the driver stays quiet about its own cancellations too).
type driverLog struct {
	set *sockets
	out *log.Logger
}

// Print implements gomysql.Logger.
func (l driverLog) Print(v ...any) {
	if l.set.aborted.Load() && strings.Contains(fmt.Sprint(v...), net.ErrClosed.Error()) {
		return
	}
	l.out.Print(v...)
}

// trackedConn is a driver connection's socket, registered while open.
type trackedConn struct {
	net.Conn
	set     *sockets
	aborted atomic.Bool
}

// Close unregisters the socket and closes it. An aborted socket is
// already closed; saying so would only make the driver log it.
func (c *trackedConn) Close() error {
	c.set.mu.Lock()
	delete(c.set.m, c)
	c.set.mu.Unlock()
	if c.aborted.Load() {
		return nil
	}
	return c.Conn.Close()
}

// Write fails on an aborted socket before sending a byte, so the driver
// reports the connection bad and the pool retries the statement on another
// one (the driver's log line about it is dropped by driverLog).
func (c *trackedConn) Write(b []byte) (int, error) {
	if c.aborted.Load() {
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}
	}
	return c.Conn.Write(b)
}

// SyscallConn keeps go-sql-driver's liveness check of pooled connections:
// after a server restart it finds the connections the server dropped
// before a statement is sent on them (TestReconnectAfterRestart).
func (c *trackedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, syscall.EINVAL
	}
	return sc.SyscallConn()
}

// dial is the connector's dial function: a connection of the store's
// io_mode (TCP keep-alive included) with the socket registered.
func (s *sockets) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := s.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, set: s}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[*trackedConn]struct{}{}
	}
	s.m[tc] = struct{}{}
	s.mu.Unlock()
	return tc, nil
}

// abort closes every open socket; blocked reads and writes fail at once.
func (s *sockets) abort() {
	s.aborted.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.m {
		c.aborted.Store(true)
		c.Conn.Close()
	}
}

// detach returns the context to give the driver and the function to call
// when the operation is over; it reports the caller's cancellation as the
// operation's error, and in a session settles the connections after an
// error (session.settleErr).
//
// A session watches its requester's context once, not once per operation
// (registering a watch and removing it took about 2 µs of driver CPU a
// request at 4 requesters): it keeps the watch, and the context without
// cancellation, while its operations come with the same context, and an
// operation with a context already ended gets that context, so the driver
// stops it at once.
func (s *Store) detach(ctx context.Context) (context.Context, func(error) error) {
	if ctx.Done() == nil {
		if s.sess != nil {
			return ctx, s.sess.settle
		}
		return ctx, func(err error) error { return err }
	}
	if ss := s.sess; ss != nil {
		if ctx.Err() != nil {
			return ctx, ss.settle
		}
		ss.watch(ctx, s.socks)
		return ss.detached, ss.settleWatched
	}
	stop := context.AfterFunc(ctx, s.socks.abort)
	return context.WithoutCancel(ctx), func(err error) error {
		stop()
		if s.sess != nil {
			s.sess.settle(err)
		}
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
}

func newDriverLog(s *sockets) driverLog {
	return driverLog{set: s, out: log.New(os.Stderr, "[mysql] ", log.Ldate|log.Ltime)}
}

// watch makes socks abort when ctx ends, unless the session watches ctx
// already; a context it watched before is no longer watched. (Its caller
// passes socks rather than the method value socks.abort, which would be
// made anew at every call.)
func (ss *session) watch(ctx context.Context, socks *sockets) {
	if ss.watched == ctx {
		return
	}
	ss.unwatch()
	ss.watched, ss.detached = ctx, context.WithoutCancel(ctx)
	ss.stopWatch = context.AfterFunc(ctx, socks.abort)
}

// unwatch ends the session's watch of its context, if any.
func (ss *session) unwatch() {
	if ss.stopWatch != nil {
		ss.stopWatch()
	}
	ss.watched, ss.detached, ss.stopWatch = nil, nil, nil
}

// settleWatchedErr is settleErr for an operation run detached from the
// watched context: an error of an operation whose context ended is that
// context's.
func (ss *session) settleWatchedErr(err error) error {
	ss.settleErr(err)
	if err != nil && ss.watched != nil && ss.watched.Err() != nil {
		return ss.watched.Err()
	}
	return err
}
