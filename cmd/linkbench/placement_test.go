package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRefusesAnOldPlacement: a graph loaded by a linkbench that placed
// degrees on other ids (no placement_version, or another one) is refused
// by run with one line naming load --truncate; after a reload it runs.
func TestRunRefusesAnOldPlacement(t *testing.T) {
	dir := t.TempDir()
	small := []string{"-D", "nlinks_func=const", "-D", "nlinks_default=3", "-D", "maxid1=1001", "-D", "maxtime=1", "-D", "requesters=1", "--no-results"}
	if _, errOut, code := runCLI(t, dir, append([]string{"load"}, small...)...); code != 0 {
		t.Fatalf("load: %s", errOut)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "linkbench-data", "linkbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, change := range []string{
		"DELETE FROM linkbench_meta WHERE k = 'placement_version'",
		"INSERT INTO linkbench_meta (k, v) VALUES ('placement_version', '7')",
	} {
		if _, err := db.Exec(change); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := runCLI(t, dir, append([]string{"run"}, small...)...)
		_, msg, _ := strings.Cut(errOut, "linkbench: ")
		if code != 1 || !strings.Contains(msg, "load --truncate") || !strings.Contains(msg, "placement_version") ||
			strings.Count(strings.TrimSpace(msg), "\n") != 0 {
			t.Fatalf("after %q: exit %d, stderr %q; want exit 1 and one line naming load --truncate", change, code, errOut)
		}
	}
	// (never_change=true prints the upstream LOAD line, as the reference.)
	out, errOut, code := runCLI(t, dir, append([]string{"load", "--truncate", "-D", "never_change=true"}, small...)...)
	if code != 0 || !strings.Contains(out, "LOAD PHASE COMPLETED.  Loaded 1000 nodes (Expected 1000). Loaded 2000 links (2.00 links per node).  Took ") {
		t.Fatalf("reload: exit %d\n%s\n%s", code, out, errOut)
	}
	// The run prints its semantics and records them in its bundle.
	out, errOut, code = runCLI(t, dir, append([]string{"run", "-D", "workload_semantics=corrected"}, small[:len(small)-1]...)...)
	if code != 0 || !strings.Contains(out, "REQUEST PHASE COMPLETED") || !strings.Contains(errOut, "workload semantics: corrected") {
		t.Fatalf("run after the reload: exit %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(latestBundle(t, dir, "request"))
	if err != nil || !strings.Contains(string(b), `"workload_semantics": "corrected"`) {
		t.Fatalf("summary.json does not record the semantics (%v)", err)
	}
}
