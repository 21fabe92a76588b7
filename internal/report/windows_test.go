package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/sysmon"
)

// lognormalHist records n latencies of median ms (log-normal, sigma 1).
func lognormalHist(rng *rand.Rand, n int, median float64) *hdr.Histogram {
	h := hdr.New(1, 3600e9, 3)
	for i := 0; i < n; i++ {
		h.RecordValue(int64(median * 1e6 * math.Exp(rng.NormFloat64())))
	}
	return h
}

// TestMixtureEstimateFollowsTheMergedHistogram: the all-ops line of an
// interval is estimated from per-op summaries; against the exact
// percentiles of the merged histograms of three log-normal ops of
// medians 0.02, 0.3 and 5 ms it stays within 5%. The interpolation (log
// latency linear in the normal score) is exact for a log-normal, so what
// is left is the samples' own departure from it between summary points,
// about 1/sqrt(n) of a point's neighbourhood (2% measured). One op alone
// gives its own percentiles back.
func TestMixtureEstimateFollowsTheMergedHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	hists := map[graph.Op]*hdr.Histogram{
		graph.GetNode:      lognormalHist(rng, 60000, 0.02),
		graph.GetLinksList: lognormalHist(rng, 30000, 0.3),
		graph.AddLink:      lognormalHist(rng, 10000, 5),
	}
	var ops []stats.OpSummary
	for op, h := range hists {
		ops = append(ops, stats.OpSummary{Op: op, Name: op.String(), Count: h.TotalCount(), Percentiles: stats.PercentilesOf(op, h)})
	}
	exact := AllOpsSummary(hists, 1)
	qs := []float64{0.5, 0.9, 0.99, 0.999}
	est := MixtureQuantiles(ops, qs)
	for i, want := range []float64{exact.P50, exact.P90, exact.P99, exact.P999} {
		t.Logf("q%.3f: estimate %.4g ms, exact %.4g ms", qs[i], est[i], want)
		if math.Abs(est[i]/want-1) > 0.05 {
			t.Errorf("q%.3f: estimate %.4g ms, exact %.4g ms", qs[i], est[i], want)
		}
	}
	one := MixtureQuantiles(ops[:1], []float64{0.5, 0.99})
	if math.Abs(one[0]/ops[0].P50-1) > 1e-6 || math.Abs(one[1]/ops[0].P99-1) > 1e-6 {
		t.Errorf("one op: %v, its own p50 %v p99 %v", one, ops[0].P50, ops[0].P99)
	}
	if v := MixtureQuantiles(nil, []float64{0.5}); !math.IsNaN(v[0]) {
		t.Errorf("no ops: %v", v)
	}
}

// TestLoopWindowsFromCumulativeHistograms: the histogram of a window is
// the difference of the cumulative histograms at its ends, exactly.
func TestLoopWindowsFromCumulativeHistograms(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	first, second := lognormalHist(rng, 5000, 1), lognormalHist(rng, 7000, 10)
	cum1 := first
	cum2 := first.Clone()
	cum2.Merge(second)
	d := DiffHistograms(map[graph.Op]*hdr.Histogram{graph.GetNode: cum2}, map[graph.Op]*hdr.Histogram{graph.GetNode: cum1})
	got := d[graph.GetNode]
	if got.TotalCount() != second.TotalCount() || got.ValueAtQuantile(99) != second.ValueAtQuantile(99) || got.Max() != second.Max() || got.Min() != second.Min() {
		t.Fatalf("window: %d values, p99 %d (want %d values, p99 %d)", got.TotalCount(), got.ValueAtQuantile(99), second.TotalCount(), second.ValueAtQuantile(99))
	}
	ivs := []stats.Interval{
		{Ops: []stats.OpSummary{{Op: graph.GetNode, Name: "GET_NODE", Count: 4000, Errors: 1, Retries: 2}}},
		{Ops: []stats.OpSummary{{Op: graph.GetNode, Name: "GET_NODE", Count: 3000, Retries: 1}}},
	}
	ops := WindowOps(ivs, d, 2)
	if len(ops) != 1 || ops[0].Count != 7000 || ops[0].Errors != 1 || ops[0].Retries != 3 || ops[0].OpsPerSec != 3500 ||
		ops[0].P99 != float64(second.ValueAtQuantile(99))/1e6 {
		t.Fatalf("window ops %+v", ops)
	}
}

// TestSummaryLineFigures: the columns of the article computed from known
// usage: 20,000 requests in 10 s on 2 CPUs with 5 s of user+sys CPU, 400
// disk reads of 1,600 KB and 20,480 KB written.
func TestSummaryLineFigures(t *testing.T) {
	u := &sysmon.Usage{Available: true, Seconds: 10, MachineUserSec: 4, MachineSysSec: 1, DiskReads: 400, DiskReadKB: 1600, DiskWriteKB: 20480}
	ops := []stats.OpSummary{{Op: graph.UpdateNode, Name: "UPDATE_NODE", Count: 10, Percentiles: stats.Percentiles{P99: 2.5}},
		{Op: graph.GetNode, Name: "GET_NODE", Count: 10, Percentiles: stats.Percentiles{P99: 0.25}}}
	in := LineInput{Phase: "request", Loop: 2, Secs: 10, Count: 20000, Ops: ops, Usage: u, CPUs: 2, LocalData: true, SizeBytes: 3e9, MemBytes: 4.04e9, Engine: "mysql/InnoDB"}
	l := NewSummaryLine(in)
	cells := strings.Join(l.Cells(), " ")
	// tps 2000; r/t 0.02; rkb/t 0.08; wkb/t 1.024; cpu 25% so Mcpu/t = 25e6/2000 = 12500;
	// size 3 GB; rss 4.04 GB; un 2.5, gn 0.25, ul and gl unknown; r/s 40; rMB/s 0.156; wMB/s 2.
	want := "2 2000 0.0200 0.0800 1.02 12500 3.00 4.04 2.50 0.250 NA NA 40.0 0.156 2.00 25.0 10.0 mysql/InnoDB"
	if cells != want {
		t.Fatalf("cells\n%s\nwant\n%s", cells, want)
	}
	in.LocalData, in.SizeBytes, in.MemBytes = false, 0, 0
	remote := strings.Join(NewSummaryLine(in).Cells(), " ")
	if remote != "2 2000 NA NA NA NA NA NA 2.50 0.250 NA NA NA NA NA NA 10.0 mysql/InnoDB" {
		t.Fatalf("remote server: %s", remote)
	}
	load := NewSummaryLine(LineInput{Phase: "load", Secs: 10, Count: 20000, Usage: u, CPUs: 2, LocalData: true, SizeBytes: 3e9, MemBytes: 1.7e8, Engine: "sqlite"})
	if got := strings.Join(load.Cells(), " "); got != "2000 0.0200 0.0800 1.02 12500 3.00 0.170 2.00 25.0 40.0 0.156 10.0 sqlite" {
		t.Fatalf("load line %s", got)
	}
	var tsv strings.Builder
	if err := WriteSummaryTSV(&tsv, []SummaryLine{l, l}); err != nil || strings.Count(tsv.String(), "\n") != 3 || !strings.HasPrefix(tsv.String(), "loop\ttps\tr/t\t") {
		t.Fatalf("tsv %q %v", tsv.String(), err)
	}
}

// TestSettingsThatMakeRunsIncomparable: a different graph, load or mix is
// a warning; a server setting is a difference an A/B test may vary.
func TestSettingsThatMakeRunsIncomparable(t *testing.T) {
	a, b := sampleResults("postgres", 1), sampleResults("postgres", 1)
	b.Config = []ConfigEntry{{Key: "maxid1", Value: "20001"}, {Key: "addlink", Value: "10"}}
	b.StoreSettings = map[string]string{"sync": "off"}
	b.ElapsedSec = 60
	var text strings.Builder
	if err := WriteComparisonText(&text, []*Results{a, b}, []string{"base", "other"}); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{"WARNING: maxid1 differs (A: 100001, B: 20001): the graphs differ",
		"WARNING: addlink differs (A: (unset), B: 10): the request mix differs",
		"WARNING: measured duration differs", "differs: store: sync (A: on, B: off)", "B against A", "throughput"} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "WARNING: store: sync") {
		t.Errorf("a server setting is warned about:\n%s", out)
	}
}

// TestLinkWritesMakeRunsIncomparable: runs whose link writes reached the
// server as the reference's statements and as calls of a routine
// (link_writes) are not comparable, whether the key was set or only
// described by the store.
func TestLinkWritesMakeRunsIncomparable(t *testing.T) {
	a, b := sampleResults("postgres", 1), sampleResults("postgres", 1)
	a.StoreSettings = map[string]string{"link_writes": "reference"}
	b.StoreSettings = map[string]string{"link_writes": "routine (SELECT linkdb0.linkbench_write_linktable(...))"}
	b.Config = []ConfigEntry{{Key: "link_writes", Value: "routine"}}
	var text strings.Builder
	if err := WriteComparisonText(&text, []*Results{a, b}, []string{"base", "other"}); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{"WARNING: link_writes differs (A: (unset), B: routine)", "WARNING: store: link_writes differs", "different workloads"} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
}
