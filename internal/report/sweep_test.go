package report

import (
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/stats"
)

// TestSamplesWarning: one line per point naming which percentiles rest
// on fewer than 10 samples beyond them, by op (named when one or two) and
// for all requests together.
func TestSamplesWarning(t *testing.T) {
	op := func(name string, n int64) stats.OpSummary { return stats.OpSummary{Name: name, Count: n} }
	for _, c := range []struct {
		ops  []stats.OpSummary
		all  int64
		want string
	}{
		{[]stats.OpSummary{op("GET_NODE", 20000), op("ADD_LINK", 10000)}, 30000, ""},
		{[]stats.OpSummary{op("GET_NODE", 5000), op("ADD_LINK", 500), op("RANGE_SIZE", 3)}, 5500,
			"too few samples for p99 of ADD_LINK, p99.9 of GET_NODE and ADD_LINK and all requests (a percentile needs 10 samples beyond it; lengthen --point-time)"},
		{[]stats.OpSummary{op("GET_NODE", 900), op("ADD_LINK", 50), op("UPDATE_LINK", 40), op("DELETE_NODE", 0)}, 990,
			"too few samples for p99 of every op and all requests, p99.9 of every op and all requests (a percentile needs 10 samples beyond it; lengthen --point-time)"},
		{[]stats.OpSummary{op("GET_NODE", 20000), op("ADD_LINK", 9000), op("UPDATE_LINK", 900), op("COUNT_LINK", 800)}, 30700,
			"too few samples for p99 of UPDATE_LINK and COUNT_LINK, p99.9 of 3 of 4 ops (a percentile needs 10 samples beyond it; lengthen --point-time)"},
	} {
		p := SweepPoint{Ops: c.ops, AllOps: &stats.OpSummary{Count: c.all}}
		if got := SamplesWarning(p); got != c.want {
			t.Errorf("%v:\n got %q\nwant %q", c.ops, got, c.want)
		}
	}
}

// TestSweepPageShowsWarnings: the sweep's report lists each point's
// warnings under its number and rate, and marks the point in its table.
func TestSweepPageShowsWarnings(t *testing.T) {
	sw := &Sweep{Store: "sqlite", PointSec: 8, Points: []SweepPoint{
		{OfferedRate: 250, AchievedRate: 250},
		{OfferedRate: 1100, AchievedRate: 700, Warnings: []string{"the store fell behind the arrival schedule: it served 5600 of the 8800 requests due", "too few samples for p99.9 of GET_NODE"}},
	}}
	var b strings.Builder
	if err := WriteSweepHTML(&b, sw); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	want := "⚠ point 2 (1100 requests/s offered): the store fell behind the arrival schedule: it served 5600 of the 8800 requests due; too few samples for p99.9 of GET_NODE"
	if !strings.Contains(page, "<h2>Warnings</h2>") || !strings.Contains(page, want) || strings.Contains(page, "point 1 (250") {
		t.Errorf("the page's warnings:\n%s", page[strings.Index(page, "<h2>Points"):strings.Index(page, "<h2>Charts")])
	}
	if !strings.Contains(page, "<tr><td>2 ⚠</td><td>1100</td>") {
		t.Error("the warned point is not marked in the table")
	}
}
