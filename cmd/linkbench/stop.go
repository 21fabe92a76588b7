package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/store"
)

// withStuck adds, to the error err that ends the command (nil when it
// succeeded), the store that did not close in time: the command then
// exits 1 whatever else happened.
func (a *app) withStuck(err error) error {
	if a.stuck == nil {
		return err
	}
	msg := a.stuck.Error()
	if a.lastBundle != "" {
		msg += "; results are written"
	}
	if err == nil {
		return &exitError{code: 1, err: fmt.Errorf("%s", msg)}
	}
	code := 1
	if ee, ok := err.(*exitError); ok && ee.code != 0 {
		code = ee.code
	}
	return &exitError{code: code, err: fmt.Errorf("%v; and %s", err, msg)}
}

// earlyStopBound takes close_timeout from a -D before any file is read: a
// file that never opens (a FIFO, a hung network file system) must not keep
// the process past the user's bound after a signal. The config checks the
// value again, with the others.
func (a *app) earlyStopBound() {
	for _, o := range a.opts.overrides {
		k, v, _ := strings.Cut(o, "=")
		if strings.TrimSpace(k) != "close_timeout" {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f > 0 && f <= config.MaxDuration.Seconds() {
			a.stopBound.Store(int64(f * float64(time.Second)))
		}
	}
}

// signalCode is the exit code of a process ended by sig.
func signalCode(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return 143
	}
	return 130
}

// signalName is SIGINT or SIGTERM.
func signalName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// stopWatch bounds the time the process lingers after SIGINT or SIGTERM.
// The first signal cancels the command's context (the command stops its
// work, prints and writes what it has, closes the store); when the
// process has not ended bound after it, because a disk or a server holds
// a call that heeds no context (a write or fsync in the kernel, a driver),
// it exits anyway, saying so. A second signal exits at once.
type stopWatch struct {
	sigs   <-chan os.Signal
	cancel func()
	// bound is the time allowed after the first signal (close_timeout).
	bound  func() time.Duration
	exit   func(code int)
	stderr io.Writer
	first  atomic.Value // the first signal, os.Signal
	done   chan struct{}
}

// start watches for signals until finish.
func (w *stopWatch) start() {
	w.done = make(chan struct{})
	go func() {
		var sig os.Signal
		select {
		case sig = <-w.sigs:
		case <-w.done:
			return
		}
		w.first.Store(sig)
		w.cancel()
		bound := w.bound()
		t := time.NewTimer(bound)
		defer t.Stop()
		select {
		case <-w.done:
		case again := <-w.sigs:
			fmt.Fprintf(w.stderr, "linkbench: %s after %s: exiting at once\n", signalName(again), signalName(sig))
			w.exit(signalCode(again))
		case <-t.C:
			fmt.Fprintf(w.stderr, "linkbench: not stopped %s after %s (disk or server stuck; close_timeout): exiting; what was written is kept\n", store.Seconds(bound), signalName(sig))
			w.exit(signalCode(sig))
		}
	}()
}

// finish ends the watch; it returns the first signal received, or nil.
func (w *stopWatch) finish() os.Signal {
	close(w.done)
	if s, ok := w.first.Load().(os.Signal); ok {
		return s
	}
	return nil
}
