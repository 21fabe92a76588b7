package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/workload"
)

// TestSweepOutputIsShort: a sweep prints one line per point and a final
// table with each point's achieved rate and p50 and p99 latency; its
// points' tables go to their bundles, at most one warning line per point
// reaches the terminal, no point far below saturation is said to fall
// behind the arrival schedule, and the warnings are in the sweep's
// report and sweep.json.
func TestSweepOutputIsShort(t *testing.T) {
	dir := t.TempDir()
	// The memory store in a new process has no graph: the sweep runs on
	// it anyway (--ignore-graph), its ops take microseconds, so 50 and
	// 100 requests/s are far below its saturation.
	out, errOut, code := runCLI(t, dir, "sweep", "-D", "store=memory", "-D", "requesters=2", "-D", "warmup_time=0", "--ignore-graph",
		"--rates", "50,100", "--point-time", "1", "--progress-interval", "60")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "sweep point 1 of 2: 50 requests/s offered, ") ||
		!strings.HasPrefix(lines[2], "SWEEP COMPLETED. 2 points. 1 s each.") || strings.Join(strings.Fields(lines[3]), " ") != "point offered/s achieved/s p50 ms p99 ms errors warnings" {
		t.Errorf("stdout is not two point lines and the final table:\n%s", out)
	}
	warns := map[string]int{}
	for _, l := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(l, "WARN") {
			if strings.Contains(l, "fell behind") {
				t.Errorf("a point far below saturation fell behind: %s", l)
			}
			if _, rest, ok := strings.Cut(l, ": sweep point "); ok {
				warns[rest[:6]]++
			}
		}
	}
	for p, n := range warns {
		if n > 1 {
			t.Errorf("%d warning lines for sweep point %s:\n%s", n, p, errOut)
		}
	}
	sweeps, _ := filepath.Glob(filepath.Join(dir, "linkbench-results", "*-sweep"))
	if len(sweeps) != 1 {
		t.Fatalf("sweep bundles %v", sweeps)
	}
	b, err := os.ReadFile(filepath.Join(sweeps[0], "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sw report.Sweep
	if err := json.Unmarshal(b, &sw); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(sweeps[0], "report.html"))
	for i, p := range sw.Points {
		// 50 to 100 requests in a point of 1 s: too few for a p99.
		if len(p.Warnings) == 0 || !strings.Contains(p.Warnings[len(p.Warnings)-1], "p99 of every op and all requests") {
			t.Errorf("point %d: warnings %q", i+1, p.Warnings)
		}
		for _, w := range p.Warnings {
			if !strings.Contains(string(page), w) {
				t.Errorf("the sweep's report lacks point %d's warning %q", i+1, w)
			}
		}
	}
}

// TestBehindScheduleOnlyWhenTrue: an open-loop run falls behind its
// arrival schedule when it served fewer requests than were due by more
// than the arrivals' noise, not when a burst left requests waiting for a
// moment.
func TestBehindScheduleOnlyWhenTrue(t *testing.T) {
	for _, c := range []struct {
		offered  float64
		requests int64
		backlog  float64
		want     bool
	}{
		{0, 1000, 0, false},          // closed loop
		{2000, 1985, 43, false},      // a burst queued 43 for a moment
		{2000, 2040, 5, false},       // Poisson noise above the mean
		{2000, 1800, 200, true},      // 10 % short: 4.5 standard deviations
		{14462, 13108, 1392, true},   // 9 % short
		{100000, 98900, 3000, false}, // 1.1 % short: within 1 % + 4 sd
	} {
		res := &workload.RequestResult{Offered: c.offered, Requests: c.requests, MaxBacklog: c.backlog, Elapsed: 8 * time.Second}
		if got := behindSchedule(res); got != c.want {
			t.Errorf("offered %.0f, served %d, backlog %.0f: behind %v, want %v", c.offered, c.requests, c.backlog, got, c.want)
		}
	}
}
