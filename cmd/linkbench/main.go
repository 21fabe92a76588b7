// Command linkbench is the LinkBench social-graph database benchmark: it
// loads a synthetic graph into a store and drives the production request
// mix against it. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/linkbench/linkbench/internal/store"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitError carries a specific exit code for main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func main() {
	os.Exit(exitCode(os.Args[1:]))
}

// exitCode executes the command line and returns the process exit code.
func exitCode(args []string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	app := newApp(os.Stdout, os.Stderr)
	// After a signal the process lingers at most close_timeout (its
	// default until the config is read).
	watch := &stopWatch{sigs: sigs, cancel: cancel, exit: os.Exit, stderr: os.Stderr, bound: func() time.Duration {
		if d := time.Duration(app.stopBound.Load()); d > 0 {
			return d
		}
		return store.DefaultCloseTimeout
	}}
	watch.start()
	err := app.execute(ctx, args)
	sig := watch.finish()
	code := 0
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
			if ee.err != nil {
				fmt.Fprintln(os.Stderr, app.errorText(ee.err))
			}
		} else {
			code = 1
			fmt.Fprintln(os.Stderr, app.errorText(err))
		}
	}
	if sig != nil {
		return signalCode(sig)
	}
	return code
}
