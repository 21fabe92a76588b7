package stats

import (
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

func scrape(t *testing.T, e *Exporter) string {
	t.Helper()
	resp, err := http.Get("http://" + e.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// serveExporter serves an exporter on a free loopback port until the test
// ends.
func serveExporter(t *testing.T) *Exporter {
	t.Helper()
	e := NewExporter("v1.2.3", "abc123")
	if err := e.Serve("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestExporterServesEveryPhase: a load's and a request phase's figures are
// served side by side under their phase label, read at scrape time;
// RANGE_SIZE is a histogram of list sizes, not an op; the names pass the
// Prometheus linter and are all listed by MetricNames.
func TestExporterServesEveryPhase(t *testing.T) {
	e := serveExporter(t)

	load := NewCollector(3, false, time.Unix(0, 0))
	lh := load.NewHandle()
	lh.Record(graph.LoadLinksBulk, 5e6, 5e6, false, 0)
	load.Tick(time.Unix(1, 0))
	e.BeginPhase("load", load, Live{
		Progress:   func() float64 { return 0.25 },
		LoadStages: func() map[string]bool { return map[string]bool{"links": true, "nodes": false} },
		LoadRows:   func() (int64, int64, int64) { return 10, 1024, 20 },
	})
	mid := scrape(t, e)
	e.EndPhase()

	req := NewCollector(3, false, time.Unix(0, 0))
	h := req.NewHandle()
	for i := 0; i < 10; i++ {
		h.Record(graph.GetNode, 2e6, 2e6, false, 1)
	}
	h.Record(graph.AddLink, 1e6, 1e6, true, 0)
	h.RecordReconnect(graph.AddLink)
	h.RecordValue(graph.RangeSize, 7)
	h.RecordValue(graph.RangeSize, 10000)
	req.Tick(time.Unix(1, 0))
	e.BeginPhase("request", req, Live{
		Progress:    func() float64 { return 0.5 },
		Requesters:  func() int { return 4 },
		ScheduleLag: func() float64 { return 0.25 },
		Backlog:     func() float64 { return 100 },
	})
	body := scrape(t, e)

	for _, want := range []string{
		`linkbench_load_stage{phase="load",stage="links"} 1`,
		`linkbench_load_rows_total{phase="load",table="links"} 1024`,
		`linkbench_progress_ratio{phase="load"} 0.25`,
		`linkbench_phase_running{phase="load"} 1`,
	} {
		if !strings.Contains(mid, want) {
			t.Errorf("during the load, metrics lack %q", want)
		}
	}
	for _, want := range []string{
		`linkbench_build_info{goversion="go`, `revision="abc123",version="v1.2.3"} 1`,
		`linkbench_phase_running{phase="load"} 0`,
		`linkbench_phase_running{phase="request"} 1`,
		`linkbench_ops_total{op="LOAD_LINKS_BULK",phase="load"} 1`,
		`linkbench_load_stage{phase="load",stage="links"} 0`,
		`linkbench_ops_total{op="GET_NODE",phase="request"} 10`,
		`linkbench_retries_total{op="GET_NODE",phase="request"} 10`,
		`linkbench_errors_total{op="ADD_LINK",phase="request"} 1`,
		`linkbench_reconnects_total{phase="request"} 1`,
		`linkbench_interval_latency_seconds{op="GET_NODE",percentile="50",phase="request"} 0.002`,
		`linkbench_interval_ops_per_second{phase="request"} 10`,
		`linkbench_progress_ratio{phase="request"} 0.5`,
		`linkbench_requesters{phase="request"} 4`,
		`linkbench_schedule_lag_seconds{phase="request"} 0.25`,
		`linkbench_schedule_backlog_requests{phase="request"} 100`,
		`linkbench_op_latency_seconds_bucket{op="GET_NODE",phase="request",le="0.001"} 0`,
		`linkbench_op_latency_seconds_bucket{op="GET_NODE",phase="request",le="0.005"} 10`,
		`linkbench_op_latency_seconds_count{op="GET_NODE",phase="request"} 10`,
		`linkbench_list_size_links_bucket{phase="request",le="10"} 1`,
		`linkbench_list_size_links_count{phase="request"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(body, "RANGE_SIZE") {
		for _, l := range strings.Split(body, "\n") {
			if strings.Contains(l, `"RANGE_SIZE"`) {
				t.Errorf("RANGE_SIZE is exported as an op: %s", l)
			}
		}
	}
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	// Every name served is listed (dashboards are checked against the list).
	listed := map[string]bool{}
	for _, n := range MetricNames() {
		listed[n] = true
	}
	var missing []string
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") || !strings.HasPrefix(line, "linkbench_") {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		if !listed[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("served but not in MetricNames: %v", missing)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:9090": true, "localhost:9090": true, "[::1]:9090": true,
		":9090": false, "0.0.0.0:9090": false, "[::]:9090": false, "10.1.2.3:9090": false, "nonsense": false} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestPacedRunHasALagAndNoBacklog: a requestrate run exports how far its
// requesters are behind their pace as the schedule's lag, and no backlog
// gauge, which only an open loop has.
func TestPacedRunHasALagAndNoBacklog(t *testing.T) {
	e := serveExporter(t)
	req := NewCollector(3, true, time.Unix(0, 0))
	req.Tick(time.Unix(1, 0))
	e.BeginPhase("request", req, Live{ScheduleLag: func() float64 { return 4.025 }})
	body := scrape(t, e)
	if !strings.Contains(body, `linkbench_schedule_lag_seconds{phase="request"} 4.025`) {
		t.Errorf("no lag of 4.025 s:\n%s", body)
	}
	if strings.Contains(body, `linkbench_schedule_backlog_requests{`) {
		t.Errorf("a paced run exports a backlog:\n%s", body)
	}
}
