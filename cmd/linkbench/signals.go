package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
)

// interrupts turns SIGINT and SIGTERM into the command's stop: the first
// cancels ctx (the phase stops, its results are printed and written, and
// the exit code is 130 or 143), a second ends the process at once with
// that code, whatever the first is still waiting for. It behaves the same
// whether the output is a terminal or not.
type interrupts struct {
	ctx    context.Context
	cancel context.CancelFunc
	quit   chan struct{}

	mu    sync.Mutex
	first os.Signal
	// note, when set, tells the user that the command is stopping (the
	// command's logger, which a progress bar may be drawing through).
	note func(format string, args ...any)
}

// watchInterrupts starts watching sigs. A second signal writes one line to
// stderr and calls exit with its code (os.Exit outside tests); stop ends
// the watch.
func watchInterrupts(parent context.Context, sigs <-chan os.Signal, stderr io.Writer, exit func(int)) *interrupts {
	ctx, cancel := context.WithCancel(parent)
	in := &interrupts{ctx: ctx, cancel: cancel, quit: make(chan struct{})}
	go func() {
		var s os.Signal
		select {
		case s = <-sigs:
		case <-in.quit:
			return
		}
		in.mu.Lock()
		in.first = s
		note := in.note
		in.mu.Unlock()
		if note != nil {
			note("%s: stopping (what ran is reported); %s again stops at once", signalName(s), signalName(s))
		}
		cancel()
		select {
		case s = <-sigs:
		case <-in.quit:
			return
		}
		fmt.Fprintf(stderr, "\nlinkbench: %s again: stopping at once, without the results of this phase\n", signalName(s))
		exit(signalCode(s))
	}()
	return in
}

// setNote sets where the first signal's notice goes.
func (in *interrupts) setNote(note func(format string, args ...any)) {
	if in == nil {
		return
	}
	in.mu.Lock()
	in.note = note
	in.mu.Unlock()
}

// code is the exit code of a command the first signal stopped (0 when no
// signal came).
func (in *interrupts) code() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.first == nil {
		return 0
	}
	return signalCode(in.first)
}

// stop ends the watch and releases ctx.
func (in *interrupts) stop() {
	close(in.quit)
	in.cancel()
}

// signalCode is the shell's exit code of a process ended by s.
func signalCode(s os.Signal) int {
	if s == syscall.SIGTERM {
		return 143
	}
	return 130
}

// signalName is how the user sent s.
func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "Ctrl-C"
}
