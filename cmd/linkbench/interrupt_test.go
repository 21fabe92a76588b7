//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestCtrlCOnATerminal types Ctrl-C on the terminal of a real load, run
// and sweep, as in an interactive shell (a pseudo-terminal: the load draws
// its progress bar), and checks that each stops as it does with its
// output redirected: at once, exit 130, the results of what ran printed
// and written. A second Ctrl-C stops at once.
// Reliability(load): Ctrl-C on a terminal (the load's progress bar drawn), once or twice | the first stops the phase and writes the results of what ran, exit 130, as with the output redirected; a second stops at once, exit 130 (SIGTERM: 143)
func TestCtrlCOnATerminal(t *testing.T) {
	bin := buildBinary(t)
	bundles := func(dir, kind string) []string {
		b, _ := filepath.Glob(filepath.Join(dir, "linkbench-results", "*-"+kind, "*.json"))
		return b
	}
	barMoving := regexp.MustCompile(`inserting links [1-9]`)
	// The load is far from done when its bar first shows links written.
	bigLoad := []string{"load", "-D", "maxid1=400001", "-D", "nlinks_func=const", "-D", "nlinks_default=10", "-D", "progressfreq=1"}

	t.Run("load", func(t *testing.T) {
		dir := t.TempDir()
		p := startOnTTY(t, dir, bin, bigLoad...)
		p.waitFor("a progress bar with links written", barMoving.MatchString, 60*time.Second)
		p.ctrlC()
		if code := p.exit(30 * time.Second); code != 130 {
			t.Fatalf("exit %d, want 130:\n%s", code, tail(p.output(), 3000))
		}
		out := p.output()
		for _, want := range []string{"LOAD PHASE INTERRUPTED", "`linkbench load --resume`", "results written to"} {
			if !strings.Contains(out, want) {
				t.Errorf("the terminal does not show %q:\n%s", want, tail(out, 3000))
			}
		}
		if len(bundles(dir, "load")) == 0 {
			t.Error("no results bundle")
		}
	})

	t.Run("load twice", func(t *testing.T) {
		dir := t.TempDir()
		p := startOnTTY(t, dir, bin, bigLoad...)
		p.waitFor("a progress bar with links written", barMoving.MatchString, 60*time.Second)
		p.ctrlC()
		p.ctrlC()
		if code := p.exit(10 * time.Second); code != 130 {
			t.Fatalf("exit %d, want 130:\n%s", code, tail(p.output(), 3000))
		}
	})

	graph := []string{"-D", "maxid1=2001", "-D", "nlinks_func=const", "-D", "nlinks_default=3", "-D", "warmup_time=0", "--progress-interval", "0.2"}
	dir := t.TempDir()
	if _, errOut, code := runCLI(t, dir, append([]string{"load"}, graph...)...); code != 0 {
		t.Fatalf("load: %s", errOut)
	}
	for _, c := range []struct {
		name, bundle string
		args         []string
		printed      string
	}{
		{"run", "request", []string{"run", "-D", "maxtime=600"}, "REQUEST PHASE COMPLETED"},
		{"sweep", "sweep", []string{"sweep", "--rates", "100,200", "--point-time", "600"}, "SWEEP INTERRUPTED. 1 point. 600 s each"},
	} {
		t.Run(c.name, func(t *testing.T) {
			results := t.TempDir()
			p := startOnTTY(t, dir, bin, append(append(c.args, graph...), "--results-dir", results)...)
			p.waitFor("a progress line", contains(" ops/s  p50 "), 60*time.Second)
			p.ctrlC()
			if code := p.exit(30 * time.Second); code != 130 {
				t.Fatalf("exit %d, want 130:\n%s", code, tail(p.output(), 3000))
			}
			if !strings.Contains(p.output(), c.printed) {
				t.Errorf("the terminal does not show %q:\n%s", c.printed, tail(p.output(), 3000))
			}
			if b, _ := filepath.Glob(filepath.Join(results, "*-"+c.bundle, "*.json")); len(b) == 0 {
				t.Errorf("no %s bundle", c.bundle)
			}
		})
	}
}

// TestCtrlCDuringCheckOnATerminal types Ctrl-C on the terminal of a check
// that is waiting for PostgreSQL (the test holds a lock on the link
// table, so the check is under way, whatever its speed): it stops at once
// with exit 130 and one line saying that nothing was verified.
// Reliability(load): Ctrl-C on a terminal during `check` | it stops at once: "check interrupted before it finished: nothing was verified", exit 130
func TestCtrlCDuringCheckOnATerminal(t *testing.T) {
	url := pgURL(t)
	bin := buildBinary(t)
	schema := fmt.Sprintf("lbtty_%d", os.Getpid())
	args := []string{"-c", repoConfig(t, "LinkConfigPgsql.properties"), "-D", "url=" + url, "-D", "pg_schema=" + schema,
		"-D", "maxid1=2001", "-D", "nlinks_func=const", "-D", "nlinks_default=3", "--no-results"}
	t.Cleanup(func() { pgExec(t, url, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	dir := t.TempDir()
	if _, errOut, code := runCLI(t, dir, append([]string{"load"}, args...)...); code != 0 {
		t.Fatalf("load: %s", errOut)
	}
	ctx := context.Background()
	holder, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE "+schema+".linktable IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	p := startOnTTY(t, dir, bin, append([]string{"check"}, args...)...)
	// The check is under way once one of its queries waits for the lock.
	for waiting := 0; waiting == 0; time.Sleep(20 * time.Millisecond) {
		if err := holder.QueryRow(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE NOT l.granted AND n.nspname = $1`, schema).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.done:
			t.Fatalf("the check ended without waiting for the table:\n%s", p.output())
		default:
		}
	}
	p.ctrlC()
	if code := p.exit(30 * time.Second); code != 130 {
		t.Fatalf("exit %d, want 130:\n%s", code, p.output())
	}
	if out := p.output(); !strings.Contains(out, "check interrupted before it finished: nothing was verified") {
		t.Errorf("the terminal shows:\n%s", out)
	}
}
