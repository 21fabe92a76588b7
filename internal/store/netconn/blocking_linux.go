package netconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// tick is the socket's receive and send timeout: how often a read or write
// that waits returns to look at its deadline.
const tick = 250 * time.Millisecond

// blockingConn is a connected socket in blocking mode, read and written
// with system calls that wait in the kernel (see the package comment). It
// is safe for one reader and one writer at a time, plus Close and the
// deadline setters from any goroutine, like a net.Conn.
type blockingConn struct {
	fd            int
	network       string
	local, remote net.Addr

	// io is held shared by each read and write system call and exclusively
	// by Close before it releases the descriptor, so a number that the
	// kernel reuses is never read by a late call.
	io     sync.RWMutex
	closed atomic.Bool

	// readDeadline and writeDeadline are on the monotonic clock (see
	// deadline), 0 = none.
	readDeadline, writeDeadline atomic.Int64

	// armed is the channel whose closing ends a wait (Arm), nil when none;
	// last is the holder Arm made most recently, reused while the channel
	// is the same (a requester's context lives for many statements), so
	// arming allocates nothing. last is only touched by Arm's caller.
	armed atomic.Pointer[doneCh]
	last  *doneCh

	// interrupts counts the waits a signal cut short (EINTR).
	interrupts atomic.Int64
}

type doneCh struct{ c <-chan struct{} }

// Arm implements Interruptible.
func (c *blockingConn) Arm(done <-chan struct{}) {
	if c.last == nil || c.last.c != done {
		c.last = &doneCh{done}
	}
	c.armed.Store(c.last)
}

// Disarm implements Interruptible.
func (c *blockingConn) Disarm() { c.armed.Store(nil) }

// interrupted reports whether the armed channel is closed.
func (c *blockingConn) interrupted() bool {
	d := c.armed.Load()
	if d == nil {
		return false
	}
	select {
	case <-d.c:
		return true
	default:
		return false
	}
}

func dialBlocking(ctx context.Context, network, addr string, timeout, keepAlive time.Duration) (net.Conn, error) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	if timeout <= 0 {
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.ErrDeadlineExceeded}
	}
	sa, family, err := sockaddr(ctx, network, addr)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("socket", err)}
	}
	fail := func(op string, err error) (net.Conn, error) {
		syscall.Close(fd)
		if errors.Is(err, syscall.EINPROGRESS) || errors.Is(err, syscall.EAGAIN) {
			err = os.ErrDeadlineExceeded
		} else {
			err = os.NewSyscallError(op, err)
		}
		return nil, &net.OpError{Op: "dial", Net: network, Addr: addrOf(network, addr), Err: err}
	}
	// Linux bounds a blocking connect by the send timeout.
	if err := setTimeout(fd, syscall.SO_SNDTIMEO, timeout); err != nil {
		return fail("setsockopt", err)
	}
	for {
		err = syscall.Connect(fd, sa)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return fail("connect", err)
	}
	if family != syscall.AF_UNIX {
		if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
			return fail("setsockopt", err)
		}
		if keepAlive > 0 {
			secs := max(int(keepAlive/time.Second), 1)
			for _, o := range [][3]int{{syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1}, {syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, secs}, {syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, secs}} {
				if err := syscall.SetsockoptInt(fd, o[0], o[1], o[2]); err != nil {
					return fail("setsockopt", err)
				}
			}
		}
	}
	for _, o := range []int{syscall.SO_RCVTIMEO, syscall.SO_SNDTIMEO} {
		if err := setTimeout(fd, o, tick); err != nil {
			return fail("setsockopt", err)
		}
	}
	c := &blockingConn{fd: fd, network: network}
	if lsa, err := syscall.Getsockname(fd); err == nil {
		c.local = netAddr(network, lsa)
	}
	if rsa, err := syscall.Getpeername(fd); err == nil {
		c.remote = netAddr(network, rsa)
	}
	return c, nil
}

func setTimeout(fd, opt int, d time.Duration) error {
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	return syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, opt, &tv)
}

// sockaddr resolves addr to a socket address and its family.
func sockaddr(ctx context.Context, network, addr string) (syscall.Sockaddr, int, error) {
	switch network {
	case "unix":
		return &syscall.SockaddrUnix{Name: addr}, syscall.AF_UNIX, nil
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, 0, fmt.Errorf("blocking connections support tcp and unix, not %q", network)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, 0, err
	}
	p, err := net.DefaultResolver.LookupPort(ctx, "tcp", port)
	if err != nil {
		return nil, 0, err
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, 0, err
	}
	for _, ip := range ips {
		if ip.Unmap().Is4() && network != "tcp6" {
			return &syscall.SockaddrInet4{Port: p, Addr: ip.Unmap().As4()}, syscall.AF_INET, nil
		}
	}
	for _, ip := range ips {
		if ip.Is6() && network != "tcp4" {
			return &syscall.SockaddrInet6{Port: p, Addr: ip.As16()}, syscall.AF_INET6, nil
		}
	}
	return nil, 0, fmt.Errorf("no address of %s for %s", host, network)
}

func netAddr(network string, sa syscall.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	case *syscall.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	case *syscall.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: network}
	}
	return nil
}

func addrOf(network, addr string) net.Addr {
	if network == "unix" {
		return &net.UnixAddr{Name: addr, Net: network}
	}
	a, _ := net.ResolveTCPAddr(network, addr)
	return a
}

// Read reads with read(2) on the blocking socket: the thread waits in the
// kernel until the server answers.
func (c *blockingConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := c.rw(false, b, &c.readDeadline)
	if err == nil && n == 0 {
		return 0, io.EOF
	}
	return n, err
}

// Write writes all of b (a blocking socket may take part of it at a time).
func (c *blockingConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := c.rw(true, b[done:], &c.writeDeadline)
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// rw makes one read or write system call that transfers at least a byte
// (or reports end of stream), waiting in the kernel. It returns to the
// runtime at every tick to look at the deadline, and when a signal
// interrupts the call.
//
// The call is one the runtime accounts as a system call (syscall.Syscall6,
// not RawSyscall6): the goroutine is in the syscall state while it waits,
// so the garbage collector scans its stack where it is. A raw call looks
// to the runtime like a goroutine that runs: every collection and every
// preemption must interrupt it with a signal and wait for it to yield,
// which on a busy machine stretched mark phases from milliseconds to
// seconds and held goroutines in GC assists mid-COPY (docs/performance.md).
//
// Writes use send(2) with MSG_NOSIGNAL: a server that went away makes the
// write fail with EPIPE instead of raising SIGPIPE.
func (c *blockingConn) rw(write bool, b []byte, deadline *atomic.Int64) (int, error) {
	op, trap, flags := "read", uintptr(syscall.SYS_READ), uintptr(0)
	if write {
		op, trap, flags = "write", syscall.SYS_SENDTO, syscall.MSG_NOSIGNAL
	}
	c.io.RLock()
	defer c.io.RUnlock()
	for {
		if c.closed.Load() {
			return 0, c.opError(op, net.ErrClosed)
		}
		if passed(deadline) || c.interrupted() {
			return 0, c.opError(op, os.ErrDeadlineExceeded)
		}
		n, _, errno := syscall.Syscall6(trap, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), flags, 0, 0)
		switch errno {
		case 0:
			return int(n), nil
		case syscall.EINTR, syscall.EAGAIN:
			// A tick passed, or a signal arrived: look at the deadline,
			// wait again. A restarted read waits a whole tick again, so the
			// deadline is checked here and not left to the socket's
			// timeout.
			if errno == syscall.EINTR {
				c.interrupts.Add(1)
			}
			if passed(deadline) || c.interrupted() {
				return 0, c.opError(op, os.ErrDeadlineExceeded)
			}
		default:
			if c.closed.Load() {
				return 0, c.opError(op, net.ErrClosed)
			}
			return 0, c.opError(op, os.NewSyscallError(op, errno))
		}
	}
}

func (c *blockingConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.network, Source: c.local, Addr: c.remote, Err: err}
}

// Close shuts the socket down, which wakes a read or write waiting on it,
// then releases the descriptor once no call uses it.
func (c *blockingConn) Close() error {
	if c.closed.Swap(true) {
		return c.opError("close", net.ErrClosed)
	}
	syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	c.io.Lock()
	defer c.io.Unlock()
	return os.NewSyscallError("close", syscall.Close(c.fd))
}

// LocalAddr implements net.Conn.
func (c *blockingConn) LocalAddr() net.Addr { return c.local }

// RemoteAddr implements net.Conn.
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline implements net.Conn.
func (c *blockingConn) SetDeadline(t time.Time) error {
	c.setDeadline(&c.readDeadline, t)
	c.setDeadline(&c.writeDeadline, t)
	return nil
}

// SetReadDeadline implements net.Conn.
func (c *blockingConn) SetReadDeadline(t time.Time) error {
	c.setDeadline(&c.readDeadline, t)
	return nil
}

// SetWriteDeadline implements net.Conn.
func (c *blockingConn) SetWriteDeadline(t time.Time) error {
	c.setDeadline(&c.writeDeadline, t)
	return nil
}

// setDeadline records t. A waiting read or write looks at it at least
// every tick, so a deadline already past (how pgx interrupts a statement
// when its context is cancelled) ends the wait within a tick, and the
// connection stays usable once the deadline is moved, as with net.Conn.
func (c *blockingConn) setDeadline(d *atomic.Int64, t time.Time) {
	if t.IsZero() {
		d.Store(0)
		return
	}
	d.Store(deadline(t))
}

// epoch is the origin of the deadlines' monotonic clock, set once.
var epoch = time.Now()

// deadline is t on the monotonic clock: ns since epoch (never 0, which
// means none). A t from time.Now() carries a monotonic reading, so a step
// of the wall clock between setting the deadline and reaching it does not
// move it (before, a forward step of an hour timed out every wait and a
// backward step none); a t without one (pgx's time.Unix(1, 0), a deadline
// long past) is compared by its wall time, which is as meant.
func deadline(t time.Time) int64 {
	if d := int64(t.Sub(epoch)); d != 0 {
		return d
	}
	return 1
}

// passed reports whether the deadline in d (0: none) has passed.
func passed(d *atomic.Int64) bool {
	dl := d.Load()
	return dl != 0 && int64(time.Since(epoch)) >= dl
}

// SyscallConn gives access to the socket for liveness checks such as
// go-sql-driver's, which reads one byte from a pooled connection expecting
// "would block" from a live one. The socket blocks, so Read calls f only
// when a read cannot block (data or end of stream is there); for a live,
// quiet connection it returns without calling f, which such a check takes
// as alive.
func (c *blockingConn) SyscallConn() (syscall.RawConn, error) {
	return peekConn{c}, nil
}

type peekConn struct{ c *blockingConn }

// Control implements syscall.RawConn.
func (p peekConn) Control(f func(fd uintptr)) error {
	p.c.io.RLock()
	defer p.c.io.RUnlock()
	if p.c.closed.Load() {
		return net.ErrClosed
	}
	f(uintptr(p.c.fd))
	return nil
}

// Read implements syscall.RawConn (see SyscallConn).
func (p peekConn) Read(f func(fd uintptr) bool) error {
	p.c.io.RLock()
	defer p.c.io.RUnlock()
	if p.c.closed.Load() {
		return net.ErrClosed
	}
	var b [1]byte
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RECVFROM, uintptr(p.c.fd), uintptr(unsafe.Pointer(&b[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	if errno == syscall.EAGAIN {
		return nil
	}
	f(uintptr(p.c.fd))
	return nil
}

// Write implements syscall.RawConn.
func (p peekConn) Write(f func(fd uintptr) bool) error {
	return p.Control(func(fd uintptr) { f(fd) })
}
