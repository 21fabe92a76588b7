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
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	in := watchInterrupts(context.Background(), sigs, os.Stderr, os.Exit)
	defer in.stop()

	app := newApp(os.Stdout, os.Stderr)
	app.interrupts = in
	err := app.execute(in.ctx, args)
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
	if c := in.code(); c != 0 {
		return c
	}
	return code
}
