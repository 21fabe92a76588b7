// Package netconn dials the server stores' connections in one of two ways
// of waiting for the server: Go's network poller (the default net.Conn), or
// a connection whose reads block their thread in the kernel, as a Java
// client's do.
//
// Why the second exists: a requester spends most of its time waiting for
// one answer. With the poller, every answer wakes a parked goroutine: the
// runtime's poller notices the socket is readable, a thread is woken (or
// leaves its spin) to run the goroutine, and the thread that ran it looks
// for work before it sleeps again. On a machine with few cores and few
// requesters that bookkeeping costs more CPU than the query's own system
// calls. A blocking connection instead waits in read(2) on its own thread:
// the kernel wakes that very thread when the answer arrives, and it takes
// back the P it left in the system-call state (the runtime's monitor leaves
// such a P alone while the wait is short and other Ps are idle). The price
// is one P per waiting connection, so the caller reserves them (Reserve),
// and more threads than cores when many requesters wait at once, where the
// poller is cheaper again.
//
// The wait is a system call the runtime accounts as one, so the garbage
// collector scans a waiting goroutine's stack where it is, and neither a
// collection nor a preemption has to interrupt the read.
package netconn

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Mode is how a connection waits for the server.
type Mode int

const (
	// Poller is Go's network poller: a goroutine parks while it waits.
	Poller Mode = iota
	// Blocking reads block the goroutine's thread in the kernel.
	Blocking
)

// String is the io_mode value of m.
func (m Mode) String() string {
	if m == Blocking {
		return "blocking"
	}
	return "poller"
}

// autoLimitPerCPU is how many concurrent users per CPU io_mode=auto still
// serves with blocking connections. Above it the threads that wait in the
// kernel outnumber the cores so much that the poller's shared wake-ups are
// cheaper (measured in docs/performance.md).
const autoLimitPerCPU = 4

// few reports whether users goroutines that use a store flat out are at
// most autoLimitPerCPU per CPU: few enough for io_mode=auto's blocking
// connections.
func few(users int) bool { return users <= autoLimitPerCPU*runtime.NumCPU() }

// Blocks reports whether io_mode=auto gives blocking connections to
// concurrency goroutines; requests says they are the requesters of a
// request phase run alone (see ParseMode).
func Blocks(concurrency int, requests bool) bool {
	return few(concurrency) || requests && concurrency <= requestLimitPerCPU*runtime.NumCPU()
}

// requestLimitPerCPU is the limit for the requesters of a request phase
// run alone (Options.Requests), flat out or paced. A requester waits for
// one answer at a time, and at 8 per CPU blocking connections still served
// more requests than the poller at less driver CPU (a closed loop of 16
// requesters on 2 CPUs, both servers), while a load of 11 goroutines on 2
// CPUs, whose batches keep the poller's threads busy, was slower on them;
// at 32 requesters per CPU the poller served more (docs/performance.md).
const requestLimitPerCPU = 8

// ParseMode reads an io_mode value: poller, blocking, or auto (blocking
// when concurrency, the number of goroutines that use the store, is at
// most autoLimitPerCPU per CPU, or requestLimitPerCPU when they are the
// requesters of a request phase alone; else poller). where names the
// key's origin for the error message.
func ParseMode(v string, concurrency int, requests bool, where string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "auto":
		if Blocks(concurrency, requests) {
			return Blocking, nil
		}
		return Poller, nil
	case "poller":
		return Poller, nil
	case "blocking":
		return Blocking, nil
	}
	return Poller, fmt.Errorf("io_mode (%s): %q is not a mode; use auto, blocking or poller", where, v)
}

// Dialer opens connections in one mode.
type Dialer struct {
	Mode Mode
	// Timeout bounds connection establishment (0: 30 s).
	Timeout time.Duration
	// KeepAlive is the TCP keep-alive period (0: 15 s; negative: off).
	KeepAlive time.Duration
}

// DialContext connects to addr ("host:port" for tcp, a path for unix).
func (d Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	ka := d.KeepAlive
	if ka == 0 {
		ka = 15 * time.Second
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if d.Mode != Blocking {
		nd := net.Dialer{Timeout: timeout, KeepAlive: ka}
		return nd.DialContext(ctx, network, addr)
	}
	return dialBlocking(ctx, network, addr, timeout, ka)
}

// Interruptible is a connection whose waits also end when a channel is
// closed, checked where its deadlines are (a blocking connection: at every
// tick). A driver that arms it with the context's Done channel for one
// statement can hand the driver library a context that is never cancelled,
// which spares the library's per-statement context watching (a callback
// registered on and removed from the context every statement). Arm and
// Disarm are called by the connection's user, one at a time; the wait
// sees them from any goroutine.
type Interruptible interface {
	net.Conn
	// Arm makes a waiting read or write fail with os.ErrDeadlineExceeded
	// once done is closed, until Disarm.
	Arm(done <-chan struct{})
	Disarm()
}

// reserved counts the Ps added by Reserve, so overlapping reservations
// (two stores in one process) add up and give back exactly what they took.
var reserved struct {
	sync.Mutex
	n, base int
}

// Reserve takes the Ps that connections of mode m need: one per connection
// (conns) when they block (Reserve), and for the poller enough for its
// users goroutines (Spread). The returned function gives them back.
func (m Mode) Reserve(conns, users int) (release func()) {
	if m == Blocking {
		return Reserve(conns)
	}
	return Spread(users)
}

// Spread raises GOMAXPROCS for a store whose users goroutines wait on
// poller connections, to min(users, autoLimitPerCPU per CPU) Ps in all when
// it is lower, and returns the function that gives them back. The kernel
// shares the CPUs between threads: with the server on the same machine and
// many of its processes runnable, a driver of one thread per CPU gets a
// small share of them, and the answers that arrived wait in its run queues
// while its threads wait for a core. More Ps give those answers more
// threads to be run on, as a Java client has one per user (measured in
// docs/performance.md). A GOMAXPROCS set in the environment is kept.
func Spread(users int) (release func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	return Reserve(min(users, autoLimitPerCPU*runtime.NumCPU()) - runtime.GOMAXPROCS(0))
}

// Reserve raises GOMAXPROCS by n for blocking connections: each connection
// that waits in the kernel holds a P, and the other goroutines (timers,
// statistics, the garbage collector) must still find one. The returned
// function gives them back. Poller mode needs none; callers reserve only
// for Blocking.
func Reserve(n int) (release func()) {
	if n <= 0 {
		return func() {}
	}
	reserved.Lock()
	if reserved.n == 0 {
		reserved.base = runtime.GOMAXPROCS(0)
	}
	reserved.n += n
	runtime.GOMAXPROCS(reserved.base + reserved.n)
	reserved.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			reserved.Lock()
			reserved.n -= n
			runtime.GOMAXPROCS(reserved.base + reserved.n)
			reserved.Unlock()
		})
	}
}
