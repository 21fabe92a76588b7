package netconn

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pair returns a blocking client connection and the server's end of it.
func pair(t *testing.T, network string) (client net.Conn, server net.Conn) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := Dialer{Mode: Blocking, Timeout: 5 * time.Second}.DialContext(context.Background(), network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*blockingConn); !ok {
		t.Fatalf("dialled a %T, want a blocking connection", c)
	}
	s, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}

// within fails the test when f does not return in d (a hang would
// otherwise stop the whole test binary).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			c, s := pair(t, network)
			go io.Copy(s, s)           // echo
			msg := make([]byte, 1<<20) // larger than a socket buffer: partial writes
			for i := range msg {
				msg[i] = byte(i)
			}
			go func() {
				if _, err := c.Write(msg); err != nil {
					t.Error(err)
				}
			}()
			got := make([]byte, len(msg))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != msg[i] {
					t.Fatalf("byte %d: got %d, want %d", i, got[i], msg[i])
				}
			}
			if network == "tcp" && (c.LocalAddr() == nil || c.RemoteAddr().String() != s.LocalAddr().String()) {
				t.Fatalf("addresses: local %v remote %v, server %v", c.LocalAddr(), c.RemoteAddr(), s.LocalAddr())
			}
		})
	}
}

func TestEOFWhenPeerCloses(t *testing.T) {
	c, s := pair(t, "tcp")
	s.Close()
	var err error
	within(t, 5*time.Second, "read", func() { _, err = c.Read(make([]byte, 10)) })
	if err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want EOF", err)
	}
}

func TestReadDeadline(t *testing.T) {
	c, _ := pair(t, "tcp")
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var err error
	within(t, 5*time.Second, "read with a deadline", func() { _, err = c.Read(make([]byte, 10)) })
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
}

// A deadline set in the past from another goroutine is how pgx interrupts
// a statement when its context is cancelled; the connection must work
// again once the deadline is cleared.
func TestPastDeadlineWakesBlockedRead(t *testing.T) {
	c, s := pair(t, "tcp")
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		errc <- err
	}()
	c.SetDeadline(time.Now().Add(-time.Second))
	var err error
	within(t, 5*time.Second, "the blocked read", func() { err = <-errc })
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("blocked read after a past deadline: %v, want a timeout", err)
	}
	c.SetDeadline(time.Time{})
	if _, err := s.Write([]byte("after")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 5)
	within(t, 5*time.Second, "read after the deadline was cleared", func() { _, err = io.ReadFull(c, b) })
	if err != nil || string(b) != "after" {
		t.Fatalf("read after the deadline was cleared: %q, %v", b, err)
	}
}

// Arm: closing the armed channel ends a blocked read as a past deadline
// does; after Disarm a closed channel no longer matters.
func TestArmedChannelWakesBlockedRead(t *testing.T) {
	c, s := pair(t, "tcp")
	ic := c.(Interruptible)
	done := make(chan struct{})
	ic.Arm(done)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		errc <- err
	}()
	close(done)
	var err error
	within(t, 5*time.Second, "the blocked read", func() { err = <-errc })
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("blocked read after the armed channel closed: %v, want a deadline error", err)
	}
	ic.Disarm()
	if _, err := s.Write([]byte("after")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 5)
	within(t, 5*time.Second, "read after Disarm", func() { _, err = io.ReadFull(c, b) })
	if err != nil || string(b) != "after" {
		t.Fatalf("read after Disarm: %q, %v", b, err)
	}
	// Arming again with the same channel reuses its holder.
	ic.Arm(done)
	before := testing.AllocsPerRun(100, func() { ic.Arm(done); ic.Disarm() })
	if before != 0 {
		t.Fatalf("Arm with the same channel allocated %v times per call, want 0", before)
	}
}

func TestCloseWakesBlockedRead(t *testing.T) {
	c, _ := pair(t, "tcp")
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		errc <- err
	}()
	within(t, 5*time.Second, "Close", func() { c.Close() })
	var err error
	within(t, 5*time.Second, "the blocked read", func() { err = <-errc })
	if err == nil {
		t.Fatal("read on a closed connection succeeded")
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after Close: %v, want net.ErrClosed", err)
	}
}

// Goroutines waiting in the kernel, one per reserved P: the collector must
// still be able to stop the world and finish a cycle.
func TestCollectorStopsBlockedReaders(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	release := Reserve(4)
	defer release()
	var conns, servers []net.Conn
	for range 4 {
		c, s := pair(t, "tcp")
		conns, servers = append(conns, c), append(servers, s)
	}
	got := make(chan string, len(conns))
	for _, c := range conns {
		go func() {
			b := make([]byte, 5)
			if _, err := io.ReadFull(c, b); err != nil {
				got <- err.Error()
				return
			}
			got <- string(b)
		}()
	}
	within(t, 20*time.Second, "runtime.GC with readers blocked", runtime.GC)
	for _, s := range servers {
		s.Write([]byte("hello"))
	}
	for range conns {
		if s := <-got; s != "hello" {
			t.Fatalf("reader got %q", s)
		}
	}
}

// A goroutine waiting in a read is in the system-call state, so the
// collector scans its stack without interrupting the read. With a raw
// system call the runtime took it for a running goroutine: every
// collection and preemption cut the wait short with a signal, and on a
// busy machine mark phases waited seconds for the readers to yield while
// a load's COPY stood still mid-stream.
func TestCollectorLeavesWaitingReadsAlone(t *testing.T) {
	c, s := pair(t, "tcp")
	bc := c.(*blockingConn)
	got := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		got <- err
	}()
	if !eventually(10*time.Second, waitsInSyscall) {
		t.Fatal("the waiting reader never showed in the system-call state: the runtime takes it for running, so the collector must interrupt it")
	}
	before := bc.interrupts.Load()
	const collections = 50
	for range collections {
		runtime.GC()
	}
	n := bc.interrupts.Load() - before
	s.Write([]byte{1})
	if err := <-got; err != nil {
		t.Fatalf("read: %v", err)
	}
	// Any other signal to the process may land on the reader's thread,
	// rarely: a few are tolerated, one per collection is the bug.
	if n > 3 {
		t.Fatalf("%d collections interrupted the waiting read %d times", collections, n)
	}
}

// waitsInSyscall reports whether a goroutine waits in the system-call
// state inside a blocking connection's read or write.
func waitsInSyscall() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, " [syscall") && strings.Contains(g, "(*blockingConn).rw") {
			return true
		}
	}
	return false
}

// eventually reports whether cond holds within d, looking every few ms.
func eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func TestReserve(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	r1 := Reserve(3)
	r2 := Reserve(2)
	if got := runtime.GOMAXPROCS(0); got != base+5 {
		t.Fatalf("GOMAXPROCS with 5 reserved: %d, want %d", got, base+5)
	}
	r1()
	r1()
	if got := runtime.GOMAXPROCS(0); got != base+2 {
		t.Fatalf("GOMAXPROCS after one release (twice): %d, want %d", got, base+2)
	}
	r2()
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Fatalf("GOMAXPROCS after both releases: %d, want %d", got, base)
	}
}

// Poller connections get up to autoLimitPerCPU Ps per CPU, never more
// than their users, and an explicit GOMAXPROCS is kept.
func TestSpread(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	t.Setenv("GOMAXPROCS", "")
	release := Spread(3)
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Fatalf("GOMAXPROCS for 3 users: %d, want 3", got)
	}
	release()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS after release: %d, want 1", got)
	}
	limit := autoLimitPerCPU * runtime.NumCPU()
	release = Spread(limit * 4)
	if got := runtime.GOMAXPROCS(0); got != limit {
		t.Fatalf("GOMAXPROCS for %d users: %d, want %d", limit*4, got, limit)
	}
	release()
	Spread(1)()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS for 1 user: %d, want 1", got)
	}
	t.Setenv("GOMAXPROCS", "1")
	release = Spread(3)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS=1 in the environment, 3 users: %d, want 1", got)
	}
	release()
}

func TestParseMode(t *testing.T) {
	many := autoLimitPerCPU*runtime.NumCPU() + 1
	for _, tc := range []struct {
		v        string
		conc     int
		requests bool
		want     Mode
		err      bool
	}{
		{"", 1, false, Blocking, false},
		{"auto", 4, false, Blocking, false},
		{"auto", many, false, Poller, false},
		// A request phase's requesters wait for one answer each: twice
		// the limit.
		{"auto", many, true, Blocking, false},
		{"", requestLimitPerCPU * runtime.NumCPU(), true, Blocking, false},
		{"", requestLimitPerCPU*runtime.NumCPU() + 1, true, Poller, false},
		{"poller", many, true, Poller, false},
		{"blocking", many, false, Blocking, false},
		{"Poller", 1, false, Poller, false},
		{"epoll", 1, false, Poller, true},
	} {
		got, err := ParseMode(tc.v, tc.conc, tc.requests, "test")
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseMode(%q, %d, requests %v) = %v, %v; want %v, error %v", tc.v, tc.conc, tc.requests, got, err, tc.want, tc.err)
		}
	}
}

func TestDialRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = Dialer{Mode: Blocking, Timeout: 5 * time.Second}.DialContext(context.Background(), "tcp", addr)
	if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial of a closed port: %v, want connection refused", err)
	}
}

// go-sql-driver checks a pooled connection by reading a byte from its
// socket, expecting "would block" from a live one.
func TestSyscallConnLiveness(t *testing.T) {
	c, s := pair(t, "tcp")
	probe := func() (n int, err error, called bool) {
		rc, err := c.(syscall.Conn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var buf [1]byte
		rerr := rc.Read(func(fd uintptr) bool {
			called = true
			n, err = syscall.Read(int(fd), buf[:])
			return true
		})
		if rerr != nil {
			t.Fatal(rerr)
		}
		return n, err, called
	}
	var called bool
	within(t, 5*time.Second, "liveness check of a quiet connection", func() { _, _, called = probe() })
	if called {
		t.Fatal("a quiet connection's check called the read")
	}
	s.Close()
	var n int
	var err error
	within(t, 5*time.Second, "liveness check of a closed connection", func() { n, err, called = probe() })
	if !called || n != 0 || err != nil {
		t.Fatalf("check after the peer closed: called %v, n %d, err %v; want a read of 0 bytes (end of stream)", called, n, err)
	}
}
