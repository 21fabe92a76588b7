package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/memory"
)

// stuckStoreName is a store, for these tests only, whose Close never
// returns, as SQLite's does while a disk holds the fsync of a statement in
// flight and Pebble's while it holds a commit.
const stuckStoreName = "linkbench-test-stuck-close"

// stuckClose is the memory store with a Close that waits for released.
type stuckClose struct {
	*memory.Store
	released <-chan struct{}
}

func (s stuckClose) Close() error { <-s.released; return nil }

var stuckReleased = make(chan struct{})

func init() {
	drv, err := store.Lookup("memory")
	if err != nil {
		panic(err)
	}
	d := *drv
	d.Name, d.Aliases = stuckStoreName, nil
	d.Open = func(context.Context, store.Options) (store.Store, error) {
		return stuckClose{memory.New(), stuckReleased}, nil
	}
	store.Register(d)
}

// TestStuckCloseEndsTheCommand: a store whose Close does not return (a
// disk that holds an fsync) cannot hold the process: past close_timeout
// the command says so and exits 1, the results printed and written.
// Before, a SQLite run printed its results at maxtime + grace and exited
// only when the fsync returned.
// Reliability(server): a store whose close does not return (a disk that holds an fsync, 90 s or forever; a server that does not answer the goodbye) | closing runs with a deadline, `close_timeout` (default 30 s): past it "the store did not close in N s (disk or server stuck); results are written", exit 1; the results were printed and written before
func TestStuckCloseEndsTheCommand(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	out, errOut, code := runCLI(t, dir, "-c", repoConfig(t, "LinkConfigMemory.properties"), "-D", "store="+stuckStoreName, "-D", "maxid1=1001",
		"-D", "nlinks_func=const", "-D", "nlinks_default=2", "-D", "maxtime=1", "-D", "requesters=1", "-D", "close_timeout=1", "-l", "-r")
	took := time.Since(start)
	if code != 1 || !strings.Contains(errOut, "the store did not close in 1 s (disk or server stuck); results are written") ||
		!strings.Contains(out, "REQUEST PHASE COMPLETED") || took > 8*time.Second {
		t.Fatalf("exit %d after %v\n%s\n%s", code, took, out, excerpt(errOut, ""))
	}
	if _, err := os.Stat(latestBundle(t, dir, "request")); err != nil {
		t.Fatal(err)
	}
}

// TestStopWatch: after a signal the command's context is cancelled; a
// process still running close_timeout later exits with the signal's code
// and a line saying why, and a second signal exits at once.
func TestStopWatch(t *testing.T) {
	type exited struct {
		code  int
		after time.Duration
	}
	run := func(bound time.Duration, sigs ...os.Signal) (exited, string, bool) {
		ch := make(chan os.Signal, 2)
		exits := make(chan int, 2)
		var stderr syncBuffer
		cancelled := make(chan struct{})
		w := &stopWatch{sigs: ch, cancel: func() { close(cancelled) }, bound: func() time.Duration { return bound }, exit: func(c int) { exits <- c }, stderr: &stderr}
		w.start()
		start := time.Now()
		ch <- sigs[0]
		<-cancelled
		for _, s := range sigs[1:] {
			ch <- s
		}
		select {
		case c := <-exits:
			return exited{c, time.Since(start)}, stderr.String(), w.finish() == sigs[0]
		case <-time.After(bound + 5*time.Second):
			return exited{-1, time.Since(start)}, stderr.String(), false
		}
	}
	if e, msg, first := run(300*time.Millisecond, syscall.SIGTERM); e.code != 143 || e.after < 300*time.Millisecond || !first ||
		!strings.Contains(msg, "not stopped 0.3 s after SIGTERM (disk or server stuck; close_timeout)") {
		t.Errorf("one SIGTERM: %+v %q", e, msg)
	}
	if e, msg, _ := run(time.Minute, syscall.SIGINT, syscall.SIGTERM); e.code != 143 || e.after > time.Second || !strings.Contains(msg, "SIGTERM after SIGINT: exiting at once") {
		t.Errorf("two signals: %+v %q", e, msg)
	}
	// A command that ends in time is not cut short.
	ch := make(chan os.Signal, 1)
	w := &stopWatch{sigs: ch, cancel: func() {}, bound: func() time.Duration { return time.Millisecond }, exit: func(int) { t.Error("exited") }, stderr: os.Stderr}
	w.start()
	if w.finish() != nil {
		t.Error("a signal without one")
	}
}

// syncBuffer is a bytes.Buffer for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// blockedIn waits until a thread of process pid waits in the kernel
// function fn (its /proc wchan), for at most 10 s.
func blockedIn(t *testing.T, pid int, fn string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
		for _, p := range tasks {
			if b, err := os.ReadFile(p); err == nil && string(b) == fn {
				return
			}
		}
		time.Sleep(20 * time.Millisecond) // polling the kernel's state
	}
	t.Fatalf("process %d never waited in %s", pid, fn)
}

// TestSignalEndsAProcessHeldByAFile: a process whose main goroutine waits
// in the kernel for a file that never opens (a FIFO without a writer, as a
// hung network file system or a stalled disk holds a read) ends within
// close_timeout of SIGTERM, and at once on a second signal. Before, the
// signal only cancelled a context nobody looked at: a Pebble open on a
// stalled disk ignored SIGTERM for 10 minutes.
// Reliability(server): SIGINT or SIGTERM while the process waits for a disk or a file that does not answer (a stalled fsync, a hung network file system, a FIFO as `-c`) | the process ends `close_timeout` after the signal at the latest (a `-D close_timeout` counts before any file is read), saying it was stuck, exit 130 / 143; a second signal ends it at once
func TestSignalEndsAProcessHeldByAFile(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs /proc")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "config.properties")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		name  string
		bound string
		sigs  []syscall.Signal
		code  int
		min   time.Duration
		max   time.Duration
		want  string
	}{
		{"SIGTERM", "2", []syscall.Signal{syscall.SIGTERM}, 143, 2 * time.Second, 3500 * time.Millisecond, "not stopped 2 s after SIGTERM (disk or server stuck; close_timeout)"},
		// Two signals of one kind sent at once are one for the kernel. Two
		// kinds sent back to back may be taken in either order: the exit
		// code is the second's (below).
		{"two signals", "600", []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}, 143, 0, 1500 * time.Millisecond, "exiting at once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, "check", "-c", fifo, "-D", "close_timeout="+c.bound)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			blockedIn(t, cmd.Process.Pid, "wait_for_partner") // opening the FIFO
			start := time.Now()
			for _, s := range c.sigs {
				cmd.Process.Signal(s)
			}
			select {
			case <-done:
			case <-time.After(c.max + 10*time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running %v after the signal", time.Since(start))
			}
			took := time.Since(start)
			code := c.code
			if strings.Contains(stderr.String(), "SIGINT after SIGTERM") {
				code = 130
			}
			if got := cmd.ProcessState.ExitCode(); got != code || took < c.min || took > c.max || !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("exit %d after %v (want %d within [%v, %v]): %s", got, took, code, c.min, c.max, stderr.String())
			}
		})
	}
}
