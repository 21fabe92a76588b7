package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// files lists what dir holds, recursively.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// TestRunOnAnEmptyStoreNamesLoad: run, sweep and check on a store with
// nothing loaded name one command that works, `linkbench load`, and leave
// nothing behind: no empty database, lock files or results directory.
// Reliability(load): `run`, `sweep` or `check` in a fresh directory, after `init`, or on a database file without tables | exit 1 with one line naming `linkbench load` (not `init`, which would only lead to a second refusal); nothing is left behind: no empty database, lock files or empty results directory
func TestRunOnAnEmptyStoreNamesLoad(t *testing.T) {
	refused := func(t *testing.T, dir string, args ...string) string {
		t.Helper()
		_, errOut, code := runCLI(t, dir, args...)
		if code != 1 || !strings.Contains(errOut, "`linkbench load`") || strings.Contains(errOut, "linkbench init") ||
			strings.Count(strings.TrimSpace(errOut), "\n") > 2 {
			t.Errorf("%v: exit %d:\n%s", args, code, errOut)
		}
		return errOut
	}
	for _, args := range [][]string{{"run"}, {"sweep", "--rates", "100"}, {"check"}, {"-r"}, {"run", "-D", "store=pebble"}} {
		dir := t.TempDir()
		refused(t, dir, args...)
		if left := files(t, dir); len(left) > 0 {
			t.Errorf("%v in a fresh directory left %v", args, left)
		}
	}
	// After init: the tables are there, the graph is not.
	dir := t.TempDir()
	if _, errOut, code := runCLI(t, dir, "init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	before := map[string]bool{}
	for _, f := range files(t, dir) {
		before[f] = true
	}
	refused(t, dir, "run")
	for _, f := range files(t, dir) {
		// The database's own files and its lock files stay beside it.
		if !before[f] && !strings.HasPrefix(f, filepath.Join("linkbench-data", "linkbench.db")) {
			t.Errorf("run after init left %s", f)
		}
	}
	// A database file without tables (made by another tool, or empty).
	dir = t.TempDir()
	os.Mkdir(filepath.Join(dir, "linkbench-data"), 0o755)
	os.WriteFile(filepath.Join(dir, "linkbench-data", "linkbench.db"), nil, 0o644)
	if out := refused(t, dir, "run"); !strings.Contains(out, "table linktable is missing") {
		t.Errorf("run on an empty database file: %s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "linkbench-results")); err == nil {
		t.Error("a refused run left a results directory")
	}
}
