package stats

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
)

func TestExporterServesMetrics(t *testing.T) {
	e := NewExporter("request")
	if err := e.Serve("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := NewCollector(3, false, time.Unix(0, 0))
	e.WatchHistograms(c)
	h := c.NewHandle()
	for i := 0; i < 10; i++ {
		h.Record(graph.GetNode, 2e6, 2e6, false, 1)
	}
	e.Observe(c.Tick(time.Unix(1, 0)))
	e.SetProgress(0.5)
	resp, err := http.Get("http://" + e.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`linkbench_ops_total{op="GET_NODE",phase="request"} 10`,
		`linkbench_retries_total{op="GET_NODE",phase="request"} 10`,
		`linkbench_latency_seconds{op="GET_NODE",phase="request",quantile="0.5"} 0.002`,
		`linkbench_progress_ratio{phase="request"} 0.5`,
		`linkbench_latency_histogram_seconds_bucket{op="GET_NODE",phase="request",le="0.001"} 0`,
		`linkbench_latency_histogram_seconds_bucket{op="GET_NODE",phase="request",le="0.005"} 10`,
		`linkbench_latency_histogram_seconds_count{op="GET_NODE",phase="request"} 10`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
