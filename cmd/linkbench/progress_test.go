package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/workload"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestProgressLineGolden fixes the format of the progress lines: one
// compact line per interval (elapsed of the limit, ops/s, p50 and p99 over
// every op, errors/s, retries/s, reconnects), the per-op block on request,
// and the load's status in its insert and finishing stages: an index
// build with the rows done of rows total, the part done and an ETA where
// the store says how far it got (or estimates it), its rows where not.
func TestProgressLineGolden(t *testing.T) {
	w := stats.Window{Seconds: 10, Count: 126670, Errors: 12, Retries: 31, Reconnects: 2, OpsPerSec: 12667,
		All: stats.Percentiles{P50: 0.2134, P99: 1.934},
		Ops: []stats.OpSummary{
			{Op: graph.GetLinksList, Name: "GET_LINKS_LIST", OpsPerSec: 6333, Percentiles: stats.Percentiles{P50: 0.31, P99: 2.4}},
			{Op: graph.AddLink, Name: "ADD_LINK", OpsPerSec: 1140, Errors: 12, Percentiles: stats.Percentiles{P50: 1.05, P99: 12.7}},
			{Op: graph.RangeSize, Name: "RANGE_SIZE", Percentiles: stats.Percentiles{P50: 3, P99: 9000}},
		}}
	var lines []string
	for _, c := range []struct {
		p       workload.Progress
		maxTime time.Duration
		total   int64
		perOp   bool
	}{
		{workload.Progress{Elapsed: 10 * time.Second, Window: w, Requesters: 4}, 60 * time.Second, 0, false},
		{workload.Progress{Elapsed: 3610 * time.Second, Window: stats.Window{Seconds: 10}}, 3600 * time.Second, 0, false},
		{workload.Progress{Elapsed: 20 * time.Second, Done: 250000, Window: w, Backlog: 1520.4}, 90 * time.Second, 1000000, true},
		{workload.Progress{Elapsed: 30 * time.Second, Window: w, Behind: 4025 * time.Millisecond}, 60 * time.Second, 0, false},
		{workload.Progress{Elapsed: 40 * time.Second, Window: w, Behind: 900 * time.Millisecond}, 60 * time.Second, 0, false},
	} {
		l := progressLine(c.p, c.maxTime, c.total)
		if c.perOp {
			l += perOpBlock(c.p.Window)
		}
		lines = append(lines, l)
	}
	index := workload.LoadProgress{Elapsed: 84 * time.Second, Links: 4260000, LinksTotal: 4260000, Finishing: true, Stage: "build index id1_type",
		StageElapsed: 19 * time.Second, StageRows: 4260000, InsertElapsed: 62 * time.Second}
	scanning, loading, estimated := index, index, index
	scanning.Step, scanning.StepKnown = store.StepProgress{Done: 1278000, Total: 4260000, Fraction: 0.159, Phase: "scanning table"}, true
	loading.Step, loading.StepKnown = store.StepProgress{Done: 2130000, Total: 4260000, Fraction: 0.8, Phase: "loading tuples in tree"}, true
	estimated.Step, estimated.StepKnown = store.StepProgress{Done: 3000000, Total: 4260000, Fraction: 0.704, Estimated: true}, true
	for _, p := range []workload.LoadProgress{
		{Elapsed: 42 * time.Second, Links: 1234567, LinksTotal: 4260000, Nodes: 20000, NodesTotal: 20000, Counts: 11000},
		index, scanning, loading, estimated,
		{Elapsed: 90 * time.Second, Links: 4260000, LinksTotal: 4260000, Finishing: true, InsertElapsed: 62 * time.Second},
	} {
		l, r := loadStatus(p)
		lines = append(lines, l+" [bar] "+r)
		// The inserts ended: their figures are not repeated under a
		// finishing step, whose progress they would pass for.
		if p.Finishing && strings.Contains(r, "links/s") {
			t.Errorf("a finishing step repeats the inserts' figures: %q", r)
		}
	}
	got := strings.Join(lines, "\n") + "\n"
	for _, l := range strings.Split(got, "\n") {
		// With the log prefix ("INFO 2006-01-02 15:04:05.000: ", 30
		// columns) a line must not wrap at 160 columns.
		if len(l)+30 > 160 {
			t.Errorf("line of %d columns wraps at 160 with the log prefix: %q", len(l)+30, l)
		}
	}
	golden := filepath.Join("testdata", "progress.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestProgressLineGolden -update)", err)
	}
	if got != string(want) {
		t.Errorf("progress lines changed (go test -run TestProgressLineGolden -update if intended):\n--- got\n%s--- want\n%s", got, want)
	}
}
