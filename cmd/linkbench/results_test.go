package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/linkbench/linkbench/internal/report"
)

// runApp runs a command line without changing directory (every path given
// is absolute), so several can run at once.
func runApp(args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	err := newApp(&out, &errb).execute(context.Background(), args)
	return out.String(), errb.String(), err
}

// onlyBundle is the one request bundle under dir.
func onlyBundle(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*-request"))
	if len(m) != 1 {
		t.Fatalf("request bundles in %s: %v", dir, m)
	}
	return m[0]
}

// TestComparisonKnowsItsNoise: two runs of the same config are within
// the noise within runs for most op figures, and two runs of
// requesters=1 against two of requesters=4 are a significant throughput
// difference beyond the spread between runs. The runs pace their
// requests (requestrate per requester), so throughput is set by the
// config, not by the machine; and the four run side by side, so that
// they share the machine's conditions (docs/results.md: alternate runs).
// Each config's two runs write into one directory: a side of the
// comparison.
func TestComparisonKnowsItsNoise(t *testing.T) {
	base := t.TempDir()
	common := []string{"-c", repoConfig(t, "LinkConfigMemory.properties"), "-D", "maxid1=5001", "-D", "nlinks_func=const", "-D", "nlinks_default=5",
		"-D", "maxtime=10", "-D", "warmup_time=2", "-D", "requestrate=250", "-l", "-r"}
	requesters := []string{"4", "4", "1", "1"}
	sides := []string{filepath.Join(base, "four"), filepath.Join(base, "one")}
	errs := make([]string, len(requesters))
	var wg sync.WaitGroup
	for i, r := range requesters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, errOut, err := runApp(append([]string{"--results-dir", sides[i/2], "-D", "requesters=" + r}, common...)...); err != nil {
				errs[i] = fmt.Sprintf("%v\n%s", err, errOut)
			}
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Fatalf("run %d: %s", i, e)
		}
	}
	var runs []*report.Results
	for _, side := range sides {
		bundles, _ := filepath.Glob(filepath.Join(side, "*-request*"))
		if len(bundles) != 2 {
			t.Fatalf("request bundles in %s: %v", side, bundles)
		}
		for _, d := range bundles {
			r, err := report.ReadBundle(d)
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, r)
		}
	}
	same := report.Compare(runs[:2])[0]
	within, opFigures := 0, 0
	for _, d := range same.Deltas {
		if d.Significant() {
			t.Errorf("one run per side: %s called significant", d.Metric)
		}
		if d.Op == "" {
			continue
		}
		opFigures++
		if !d.Beyond() {
			within++
		}
	}
	t.Logf("same config: %d of %d op figures within noise", within, opFigures)
	if opFigures < 20 || 2*within <= opFigures {
		t.Errorf("same config: only %d of %d op figures within noise", within, opFigures)
	}
	fewer := report.CompareSides([]report.Side{{Runs: runs[:2], RunNames: []string{"a", "b"}}, {Runs: runs[2:], RunNames: []string{"c", "d"}}})[0]
	tput := fewer.Deltas[0]
	t.Logf("requesters 4 -> 1: throughput %.0f -> %.0f (%+.1f%%, noise ±%.1f%%): %s", tput.Base, tput.Value, 100*tput.Change, 100*tput.NoiseWidth(), tput.Verdict())
	if tput.Metric != "throughput" || tput.Verdict() != "SIGNIFICANT, worse" {
		t.Errorf("requesters=1 against 4: %+v", tput)
	}
	// The terminal table says the same and warns about the setting.
	out, errOut, err := runApp("report", sides[0], sides[1], "-o", filepath.Join(base, "cmp.html"))
	if err != nil {
		t.Fatalf("report: %v %s", err, errOut)
	}
	for _, want := range []string{"WARNING: requesters differs (A1: 4, A2: 4, B1: 1, B2: 1): the offered load differs", "B (2 runs) against A (2 runs)", "SIGNIFICANT, worse", "within noise"} {
		if !strings.Contains(out, want) {
			t.Errorf("report output lacks %q:\n%s", want, out)
		}
	}
}

// TestLoopsWriteOneSummaryLineEach: a 3-loop run of 20 s loops writes one
// summary line per loop with every column measured, on SQLite and on the
// PostgreSQL server of scripts/postgres.sh (whose memory, CPU and disk
// are read from /proc as it runs on this machine), and the load writes
// its line. The two stores run side by side.
func TestLoopsWriteOneSummaryLineEach(t *testing.T) {
	graph := []string{"-D", "maxid1=2001", "-D", "nlinks_func=const", "-D", "nlinks_default=5"}
	cases := []struct {
		name string
		args func(t *testing.T, dir string) []string
	}{
		{"sqlite", func(t *testing.T, dir string) []string {
			return []string{"-c", repoConfig(t, "LinkConfigSqlite.properties"), "-D", "data_dir=" + filepath.Join(dir, "data")}
		}},
		{"postgres", func(t *testing.T, dir string) []string {
			url := pgURL(t)
			schema := fmt.Sprintf("lbloops_%d", os.Getpid())
			t.Cleanup(func() { pgExec(t, url, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
			return []string{"-c", repoConfig(t, "LinkConfigPgsql.properties"), "-D", "url=" + url, "-D", "pg_schema=" + schema}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			common := append(c.args(t, dir), graph...)
			common = append(common, "--results-dir", filepath.Join(dir, "results"))
			t.Parallel()
			if _, errOut, err := runApp(append([]string{"load", "--truncate"}, common...)...); err != nil {
				t.Fatalf("load: %v\n%s", err, errOut)
			}
			out, errOut, err := runApp(append([]string{"run", "-D", "loops=3", "-D", "maxtime=20", "-D", "warmup_time=1", "-D", "requesters=2"}, common...)...)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, errOut)
			}
			lines := summaryTSV(t, onlyBundle(t, filepath.Join(dir, "results")), 3)
			for i, l := range lines {
				if l[0] != fmt.Sprint(i+1) {
					t.Errorf("line %d is loop %s", i+1, l[0])
				}
				var secs float64
				fmt.Sscan(l[16], &secs)
				if secs < 19 || secs > 21.5 {
					t.Errorf("loop %d lasted %s s, want 20", i+1, l[16])
				}
			}
			if !strings.Contains(out, "SUMMARY") {
				t.Errorf("the run printed no summary:\n%s", out)
			}
			loads, _ := filepath.Glob(filepath.Join(dir, "results", "*-load"))
			if len(loads) != 1 {
				t.Fatalf("load bundles %v", loads)
			}
			summaryTSV(t, loads[0], 1)
			var r report.Results
			b, _ := os.ReadFile(filepath.Join(onlyBundle(t, filepath.Join(dir, "results")), "summary.json"))
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, l := range r.Loops {
				sum += l.Totals.Requests
			}
			if len(r.Loops) != 3 || sum != r.Totals.Requests {
				t.Errorf("%d loops with %d requests; the run had %d", len(r.Loops), sum, r.Totals.Requests)
			}
		})
	}
}

// summaryTSV reads a bundle's summary.tsv, checks it has n lines under
// its header with every column filled (no NA), and returns the lines.
func summaryTSV(t *testing.T, bundle string, n int) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bundle, "summary.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(rows) != n+1 {
		t.Fatalf("%s: %d lines, want a header and %d:\n%s", bundle, len(rows), n, b)
	}
	header := strings.Split(rows[0], "\t")
	var out [][]string
	for _, row := range rows[1:] {
		cells := strings.Split(row, "\t")
		if len(cells) != len(header) {
			t.Fatalf("%s: %d cells under %d columns: %q", bundle, len(cells), len(header), row)
		}
		for i, c := range cells {
			if c == "" || c == report.Unknown {
				t.Errorf("%s: column %s is %q in %q", bundle, header[i], c, row)
			}
		}
		out = append(out, cells)
	}
	t.Logf("%s\n%s", filepath.Base(bundle), b)
	return out
}

// TestPaceFallenBehindIsReported: a requester asked for ten million ops a
// second cannot keep its schedule, so the run warns that it fell behind,
// names what the store served beside what was counted, and its results
// bundle says so.
func TestPaceFallenBehindIsReported(t *testing.T) {
	dir := t.TempDir()
	_, errOut, err := runApp("--results-dir", dir, "-c", repoConfig(t, "LinkConfigMemory.properties"), "-D", "maxid1=5001",
		"-D", "nlinks_func=const", "-D", "nlinks_default=5", "-D", "requesters=1", "-D", "maxtime=1", "-D", "warmup_time=1", "-D", "requestrate=10000000", "-l", "-r")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "the requesters fell behind their pace (1 × requestrate 10000000 = 10000000 requests/s): ops went out up to ") ||
		!strings.Contains(errOut, "Lower requestrate") {
		t.Errorf("no warning that the pace was lost:\n%s", errOut)
	}
	r, err := report.ReadBundle(onlyBundle(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if !r.PaceFellBehind || r.PaceUncounted == 0 || r.PaceLagSec < 0.5 {
		t.Errorf("results: pace_fell_behind %v, pace_uncounted %d, pace_lag_sec %v; want true, the ops due in the warm-up, and the second they lagged by",
			r.PaceFellBehind, r.PaceUncounted, r.PaceLagSec)
	}
}
