package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var tallyRE = regexp.MustCompile(`(?m)^\d+ of (\d+) figures changed`)

// flagged counts the figures a comparison's output calls significant, and
// the figures compared.
func flagged(t *testing.T, out string) (n, of int) {
	t.Helper()
	ms := tallyRE.FindAllStringSubmatch(out, -1)
	if len(ms) == 0 {
		t.Fatalf("no tally in:\n%s", out)
	}
	for _, m := range ms {
		k, _ := strconv.Atoi(m[1])
		of += k
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "SIGNIFICANT") {
			t.Logf("flagged: %s", l)
			n++
		}
	}
	return n, of
}

// TestIdenticalRunsAreNotSignificant: three runs of one configuration,
// one after the other on one SQLite graph as a user makes them, compared
// pairwise, call at most 1 figure in 20 significant (two identical 60 s
// SQLite runs were "SIGNIFICANT" on 25 of 39 figures, issue 68; three
// 8 s runs like these on 33 of 113). One run per side measures nothing of what
// differs between runs: the comparison says so and calls nothing
// significant. Two of the runs as one side measure the spread between
// runs, and the third run is within it.
func TestIdenticalRunsAreNotSignificant(t *testing.T) {
	base := t.TempDir()
	common := []string{"-c", repoConfig(t, "LinkConfigSqlite.properties"), "-D", "data_dir=" + filepath.Join(base, "data"),
		"-D", "maxid1=5001", "-D", "nlinks_func=const", "-D", "nlinks_default=5"}
	if _, errOut, err := runApp(append([]string{"load", "--truncate", "--no-results"}, common...)...); err != nil {
		t.Fatalf("load: %v\n%s", err, errOut)
	}
	dirs := make([]string, 3)
	for i := range dirs {
		dirs[i] = filepath.Join(base, fmt.Sprint("run", i))
		args := append([]string{"run", "-D", "maxtime=5", "-D", "warmup_time=1", "-D", "requesters=2", "--results-dir", dirs[i]}, common...)
		if _, errOut, err := runApp(args...); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, errOut)
		}
	}
	b := []string{onlyBundle(t, dirs[0]), onlyBundle(t, dirs[1]), onlyBundle(t, dirs[2])}
	html := filepath.Join(base, "cmp.html")
	total, figures := 0, 0
	var outs []string
	for _, pair := range [][]string{{b[0], b[1], b[2]}, {b[1], b[2]}} {
		out, errOut, err := runApp(append(append([]string{"report"}, pair...), "-o", html)...)
		if err != nil {
			t.Fatalf("report: %v\n%s", err, errOut)
		}
		n, of := flagged(t, out)
		total, figures = total+n, figures+of
		outs = append(outs, out)
	}
	t.Logf("identical runs compared pairwise: %d of %d figures called significant", total, figures)
	if figures < 60 || 20*total > figures {
		t.Errorf("identical runs compared pairwise: %d of %d figures called significant, more than 1 in 20:\n%s", total, figures, strings.Join(outs, "\n"))
	}
	if !strings.Contains(outs[0], "one run per side, so only the noise within each run is known") {
		t.Errorf("a comparison of one run per side does not say its noise is within runs only:\n%s", outs[0])
	}
	// Two runs on a side: the spread between runs is measured.
	side := filepath.Join(base, "sideA")
	if err := os.MkdirAll(side, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, r := range b[:2] {
		if err := os.Rename(r, filepath.Join(side, fmt.Sprint(i, "-", filepath.Base(r)))); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, err := runApp("report", side, b[2], "-o", html)
	if err != nil {
		t.Fatalf("report of a side of two runs: %v\n%s", err, errOut)
	}
	for _, want := range []string{"A1 ", "A2 ", "B (1 run) against A (2 runs): the noise is the spread between runs"} {
		if !strings.Contains(out, want) {
			t.Errorf("the comparison of two runs against one lacks %q:\n%s", want, out)
		}
	}
	if n, of := flagged(t, out); 20*n > of {
		t.Errorf("two identical runs against a third: %d of %d figures called significant:\n%s", n, of, out)
	}
}
