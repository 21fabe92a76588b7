package report

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
)

// sampleLoad is a 60 s load: 20 s of inserts, then a 30 s index build and
// 10 s of ANALYZE, its progress recorded every second throughout.
func sampleLoad() *Results {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := &Results{SchemaVersion: SchemaVersion, Phase: "load", ToolVersion: "test", StartedAt: start, ElapsedSec: 60, Store: "postgres", StoreVersion: "PostgreSQL 15.8",
		Config:      []ConfigEntry{{Key: "maxid1", Value: "5001"}, {Key: "loaders", Value: "4"}},
		Environment: Environment{Hostname: "h", OS: "linux", Arch: "amd64", CPUs: 2, CPUModel: "Xeon"},
		Totals:      Totals{Nodes: 5000, Links: 100000, Counts: 10000, LinksPerSec: 100000.0 / 60, InsertSec: 20, FinishSec: 40},
		LoadStages: []stats.Stage{
			{Name: "nodes", Kind: stats.StageInsert, EndSec: 5, Rows: 5000, RowsPerSec: 1000},
			{Name: "links", Kind: stats.StageInsert, EndSec: 20, Rows: 100000, RowsPerSec: 5000},
			{Name: "counts", Kind: stats.StageInsert, EndSec: 20, Rows: 10000, RowsPerSec: 500},
			{Name: "build index id1_type", Kind: stats.StageFinish, StartSec: 20, EndSec: 50, Rows: 100000, RowsPerSec: 100000.0 / 30},
			{Name: "analyze", Kind: stats.StageFinish, StartSec: 50, EndSec: 60},
		}}
	for s := 0; s <= 60; s++ {
		links := int64(min(s, 20)) * 5000
		r.LoadProgress = append(r.LoadProgress, LoadPoint{Sec: float64(s), Links: links, Nodes: int64(min(s, 5)) * 1000, Counts: links / 10})
	}
	for i := 1; i <= 20; i++ {
		op := stats.OpSummary{Op: graph.LoadLinksBulk, Name: graph.LoadLinksBulk.String(), Count: 10, OpsPerSec: 10, Percentiles: stats.Percentiles{P50: 5, P99: 9, P999: 12}}
		r.Intervals = append(r.Intervals, stats.Interval{Start: time.Duration(i-1) * time.Second, End: time.Duration(i) * time.Second,
			EndTime: start.Add(time.Duration(i) * time.Second), DurationSec: 1, Count: 10, OpsPerSec: 10, Ops: []stats.OpSummary{op}})
	}
	return r
}

func page(t *testing.T, r *Results) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, []*Results{r}, []string{"run"}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// chartOf is the SVG of the chart with the given id in a page.
func chartOf(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `<svg id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no chart %s", id)
	}
	return page[i : i+strings.Index(page[i:], "</svg>")]
}

var xTickRE = regexp.MustCompile(`data-axis="x" text-anchor="[a-z]+">([^<]+)<`)

// xTicks are the x tick labels of a chart, as numbers.
func xTicks(t *testing.T, svg string) []float64 {
	t.Helper()
	var out []float64
	for _, m := range xTickRE.FindAllStringSubmatch(svg, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("x tick %q", m[1])
		}
		out = append(out, v)
	}
	return out
}

// TestLoadReportShowsEveryStage: a load's page has a table of its stages
// (rows, seconds, rows/s) and the split of its time; its charts band the
// inserts and every step of the store's finishing work, the links/s line
// stops where the inserts ended instead of lying at 0 through the
// finishing work, and the time axes end where the load ended.
func TestLoadReportShowsEveryStage(t *testing.T) {
	r := sampleLoad()
	p := page(t, r)
	i := strings.Index(p, "<h2>Stages</h2>")
	if i < 0 {
		t.Fatal("the load report has no stage table")
	}
	table := p[i : i+strings.Index(p[i:], "</table>")]
	for _, want := range []string{
		`<td class="l">build index id1_type</td><td class="l">finishing</td><td>100,000</td><td>30.0</td><td>3,333</td>`,
		`<td class="l">links</td><td class="l">insert</td><td>100,000</td><td>20.0</td><td>5,000</td>`,
		`<td class="l">analyze</td><td class="l">finishing</td><td>-</td><td>10.0</td><td>-</td>`,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("stage table lacks %s:\n%s", want, table)
		}
	}
	if !strings.Contains(p, "Inserting rows 20.0 s (33%), the store's finishing work 40.0 s (67%).") {
		t.Error("the load report does not split its time between inserts and finishing work")
	}
	chart := chartOf(t, p, "throughput")
	for _, band := range []string{"insert nodes, links, counts", "build index id1_type", "analyze"} {
		if !strings.Contains(chart, "<title>"+band+"</title></rect>") {
			t.Errorf("the load rate chart has no band for %q", band)
		}
	}
	links, _, _ := loadRates(r)
	for i, x := range links.X {
		if x > 21 || links.Y[i] == 0 {
			t.Errorf("links/s at %.0f s is %.0f: the line runs into the finishing work", x, links.Y[i])
		}
	}
	if ticks := xTicks(t, chart); len(ticks) < 3 || ticks[len(ticks)-1] > 60 {
		t.Errorf("x axis of a 60 s load: ticks %v", ticks)
	}
}

// TestTimeAxesEndWithTheRun: a 12 s run's time charts end at 12 s, not at
// the next round value (a 60 s run's ended at 80), and start where the
// warm-up started; the loop charts start at loop 1.
func TestTimeAxesEndWithTheRun(t *testing.T) {
	r := sampleResults("sqlite", 1)
	r.WarmupSec = 2
	// A resource sample taken just after the end is not drawn.
	last := r.Resources[len(r.Resources)-1]
	last.Time = last.Time.Add(700 * time.Millisecond)
	r.Resources = append(r.Resources, last)
	for _, c := range RequestCharts(r) {
		if !strings.Contains(c, "time since measurement began") {
			continue
		}
		ticks := xTicks(t, c)
		if len(ticks) < 3 || ticks[0] < -2 || ticks[len(ticks)-1] > 12 {
			t.Errorf("%.60s...: x ticks %v, want within the run's -2 to 12 s", c, ticks)
		}
	}
	for _, n := range []int{2, 7, 24} {
		r.SummaryLines = nil
		for i := 1; i <= n; i++ {
			r.SummaryLines = append(r.SummaryLines, SummaryLine{Phase: "request", Loop: i, Rate: 100 + float64(i%3), P99Ms: [4]*float64{some(1), some(2), some(3), some(4)}})
		}
		for _, c := range LoopCharts(r) {
			if ticks := xTicks(t, c); len(ticks) < 3 || ticks[0] != 1 || ticks[len(ticks)-1] > float64(max(n, 3)) {
				t.Errorf("%d loops: loop chart x ticks %v, want 1 to %d", n, ticks, n)
			}
		}
	}
}

// TestReportHeaderAndColumnLegend: the top of a report says what ran, on
// what, and how fast (store and version, requesters, graph, machine, the
// headline figures) before any table or chart, and the summary line's
// columns are explained on the page.
func TestReportHeaderAndColumnLegend(t *testing.T) {
	r := sampleResults("sqlite", 1)
	r.Config = append(r.Config, ConfigEntry{Key: "requesters", Value: "4"})
	r.Environment.CPUModel, r.Environment.MemoryBytes = "Xeon", 8e9
	r.AllOps = &stats.OpSummary{Percentiles: stats.Percentiles{P50: 0.1, P99: 1.5, P999: 4}}
	r.SummaryLines = []SummaryLine{{Phase: "request", Loop: 1, Rate: 100, Engine: "sqlite"}}
	r.StoreSettings = map[string]string{"link_writes": "reference"}
	p := page(t, r)
	top := p[:strings.Index(p, "<h2>")]
	for _, want := range []string{"sqlite · sqlite 1.0", "requesters</th><td>4</td>", "link writes</th><td>reference</td>", "100,000 nodes (ids 1 to 100000)", "2 CPUs (Xeon)", "8.0 GB memory",
		`<div class="v">100<span class="u"></span></div><div class="k">requests/s</div>`, `<div class="v">1.50<span class="u">ms</span></div><div class="k">p99</div>`} {
		if !strings.Contains(top, want) {
			t.Errorf("the top of the page lacks %q:\n%s", want, top)
		}
	}
	for _, c := range SummaryColumns("request") {
		if !strings.Contains(p, "<dt>"+c+"</dt><dd>") {
			t.Errorf("the summary line's column %s is not explained on the page", c)
		}
	}
	lp := page(t, sampleLoad())
	for _, c := range SummaryColumns("load") {
		if d := summaryColumnDocs("load")[c]; d == "" || strings.Contains(d, "request") {
			t.Errorf("load column %s: %q", c, d)
		}
	}
	if top := lp[:strings.Index(lp, "<h2>")]; !strings.Contains(top, "loaders</th><td>4</td>") || !strings.Contains(top, "5,000 nodes (ids 1 to 5000), 100,000 links, 10,000 counts") {
		t.Errorf("the top of the load report:\n%s", top)
	}
}
