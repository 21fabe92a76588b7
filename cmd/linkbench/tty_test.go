//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair with the kernel's default line
// discipline (Ctrl-C sends SIGINT to the foreground process group) and a
// window of 40 x 160.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	ioctl := func(req uintptr, arg unsafe.Pointer) error {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), req, uintptr(arg)); e != 0 {
			return e
		}
		return nil
	}
	var unlock int32
	var n uint32
	if err := ioctl(syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Fatalf("unlock the pty: %v", err)
	}
	if err := ioctl(syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Fatalf("pty number: %v", err)
	}
	ws := struct{ rows, cols, x, y uint16 }{40, 160, 0, 0}
	if err := ioctl(syscall.TIOCSWINSZ, unsafe.Pointer(&ws)); err != nil {
		t.Fatalf("pty size: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatalf("open the pty's terminal: %v", err)
	}
	return m, s
}

// ttyProcess is the binary running on a terminal of its own, as in an
// interactive shell: stdin, stdout and stderr are the terminal, which is
// its controlling terminal, and its process group is the foreground one.
type ttyProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File
	done   chan struct{}

	mu  sync.Mutex
	out bytes.Buffer
	// seen is signalled on every read of the terminal.
	seen chan struct{}
}

func startOnTTY(t *testing.T, dir, bin string, args ...string) *ttyProcess {
	t.Helper()
	master, slave := openPTY(t)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	p := &ttyProcess{t: t, cmd: cmd, master: master, done: make(chan struct{}), seen: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			select {
			case p.seen <- struct{}{}:
			default:
			}
			if err != nil { // EIO once the process and its terminal are gone
				close(p.done)
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		master.Close()
	})
	return p
}

// output is everything the terminal showed so far.
func (p *ttyProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor waits until the terminal shows text for which match holds.
func (p *ttyProcess) waitFor(what string, match func(string) bool, limit time.Duration) {
	p.t.Helper()
	deadline := time.After(limit)
	for !match(p.output()) {
		select {
		case <-p.seen:
		case <-p.done:
			if !match(p.output()) {
				p.t.Fatalf("the process ended before %s:\n%s", what, p.output())
			}
			return
		case <-deadline:
			p.t.Fatalf("no %s within %s:\n%s", what, limit, tail(p.output(), 3000))
		}
	}
}

// ctrlC types Ctrl-C on the terminal.
func (p *ttyProcess) ctrlC() {
	p.t.Helper()
	if _, err := p.master.Write([]byte{3}); err != nil {
		p.t.Fatal(err)
	}
}

// exit waits for the process to end, at most limit, and returns its exit
// code; a process that does not end is a failure.
func (p *ttyProcess) exit(limit time.Duration) int {
	p.t.Helper()
	ended := make(chan error, 1)
	go func() { ended <- p.cmd.Wait() }()
	select {
	case err := <-ended:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			p.t.Fatal(err)
		}
		<-p.done
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		p.t.Fatalf("the process did not stop within %s of Ctrl-C on its terminal:\n%s", limit, tail(p.output(), 3000))
	}
	return -1
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// contains is a matcher for waitFor.
func contains(subs ...string) func(string) bool {
	return func(s string) bool {
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				return false
			}
		}
		return true
	}
}
