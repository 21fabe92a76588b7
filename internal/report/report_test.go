package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/sysmon"
)

func sampleResults(store string, scale float64) *Results {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := &Results{SchemaVersion: SchemaVersion, Phase: "request", ToolVersion: "test", StartedAt: start, ElapsedSec: 3,
		Store: store, StoreVersion: store + " 1.0", StoreSettings: map[string]string{"sync": "on"},
		Config: []ConfigEntry{{Key: "maxid1", Value: "100001", Origin: "-D"}}, Environment: Environment{Hostname: "h", OS: "linux", Arch: "amd64", CPUs: 2},
		Totals: Totals{Requests: 300, OpsPerSec: 100 * scale}}
	for i := 1; i <= 12; i++ {
		wobble := 1 + 0.05*float64(i%3-1) // a little per-interval noise
		n := int64(100 * scale * wobble)
		iv := stats.Interval{Start: time.Duration(i-1) * time.Second, End: time.Duration(i) * time.Second, EndTime: start.Add(time.Duration(i) * time.Second),
			DurationSec: 1, Count: n, OpsPerSec: float64(n)}
		for _, op := range []graph.Op{graph.GetNode, graph.AddLink} {
			s := stats.OpSummary{Op: op, Name: op.String(), Count: n / 2, OpsPerSec: float64(n / 2)}
			s.Min, s.P25, s.P50, s.P75, s.P90, s.P95 = 0.05*wobble*scale, 0.08*wobble*scale, 0.1*wobble*scale, 0.15*wobble*scale, 0.3*wobble*scale, 0.5*wobble*scale
			s.P99, s.P999, s.Max = 1*wobble*scale, 1.5*wobble*scale, 2*wobble*scale
			iv.Ops = append(iv.Ops, s)
		}
		r.Intervals = append(r.Intervals, iv)
		r.Resources = append(r.Resources, sysmon.Sample{Time: iv.EndTime, DriverCPUPct: 50 * wobble, UserPct: 30, WriteKBPerSec: 100})
	}
	r.Ops = r.Intervals[0].Ops
	h := hdr.New(1, 3600e9, 3)
	for v := int64(1); v <= 1000; v++ {
		h.RecordValue(v * 1000)
	}
	r.Curves = PercentileCurves(map[graph.Op]*hdr.Histogram{graph.GetNode: h})
	r.Efficiency = &sysmon.PerOp{DriverCPUUs: 5, WriteKB: 0.5}
	return r
}

func TestHTMLReportHasEveryChart(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, []*Results{sampleResults("sqlite", 1)}, []string{"run"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, id := range []string{"throughput", "latency", "throughput-per-op", "latency-per-op", "distribution", "mix", "errors", "cpu", "disk"} {
		i := strings.Index(page, ` id="`+id+`"`)
		if i < 0 {
			t.Errorf("chart %s missing", id)
			continue
		}
		end := "</svg>"
		if strings.HasSuffix(page[:i], `<div class="panels"`) {
			end = "</div></div>"
		}
		chart := page[i : i+strings.Index(page[i:], end)]
		if !strings.Contains(chart, "<polyline") && !strings.Contains(chart, `class="bar"`) {
			t.Errorf("chart %s is empty", id)
		}
	}
	for _, want := range []string{"latency (ms, log)", "time since measurement began (s)", "maxid1", "Efficiency (per request)", "<!DOCTYPE html>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Error("the report references the network")
	}
}

func TestComparisonPage(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, []*Results{sampleResults("sqlite", 1), sampleResults("pebble", 2)}, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"LinkBench comparison", "B against A", "+100.0%", "beyond within-run noise, better", "one run per side, so only the noise within each run is known",
		`<svg id="throughput"`, `data-run="B"`, "⚠ store differs"} {
		if !strings.Contains(page, want) {
			t.Errorf("comparison lacks %q", want)
		}
	}
	if strings.Contains(page, "SIGNIFICANT") {
		t.Error("a comparison of one run per side calls a change significant")
	}
	// Two runs a side: the spread between them is measured, and a doubled
	// throughput is significant.
	b.Reset()
	sides := []Side{{Name: "a", Runs: []*Results{sampleResults("sqlite", 1), sampleResults("sqlite", 1.02)}, RunNames: []string{"a1", "a2"}},
		{Name: "b", Runs: []*Results{sampleResults("sqlite", 2), sampleResults("sqlite", 2.02)}, RunNames: []string{"b1", "b2"}}}
	if err := WriteComparisonHTML(&b, sides); err != nil {
		t.Fatal(err)
	}
	page = b.String()
	for _, want := range []string{"B (2 runs) against A (2 runs): the noise is the spread between runs", "SIGNIFICANT, better", `data-run="A2"`, `data-run="B1"`} {
		if !strings.Contains(page, want) {
			t.Errorf("comparison of two runs a side lacks %q", want)
		}
	}
}

// TestResultsJSONSchema checks the documented keys and types of summary.json.
func TestResultsJSONSchema(t *testing.T) {
	dir, err := WriteBundle(t.TempDir(), sampleResults("memory", 1), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"schema_version": "number", "phase": "string", "tool_version": "string", "started_at": "string",
		"elapsed_sec": "number", "store": "string", "config": "array", "environment": "object", "totals": "object",
		"ops": "array", "intervals": "array", "percentile_curves": "object", "resources": "array", "efficiency": "object"}
	for k, typ := range want {
		if got := jsonType(doc[k]); got != typ {
			t.Errorf("%s: %s, want %s", k, got, typ)
		}
	}
	op := doc["ops"].([]any)[0].(map[string]any)
	for _, k := range []string{"op", "count", "errors", "retries", "ops_per_sec", "p25_ms", "p50_ms", "p75_ms", "p95_ms", "p99_ms", "p99_9_ms", "max_ms", "mean_ms"} {
		if jsonType(op[k]) == "missing" {
			t.Errorf("ops[0].%s missing", k)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Error("bundle lacks report.html")
	}
	back, err := ReadBundle(dir)
	if err != nil || back.Store != "memory" || len(back.Intervals) != 12 {
		t.Fatalf("ReadBundle: %v %+v", err, back)
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "missing"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case bool:
		return "bool"
	}
	return "?"
}

func TestFormatAndLines(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.00123456: "0.00123", 1.23456: "1.23", 123.456: "123", 12345.6: "12346"} {
		if got := FormatMs(v); got != want {
			t.Errorf("FormatMs(%v) = %q, want %q", v, got, want)
		}
	}
	if got := LoadLine(100, 100, 4600, 200, 2*time.Second, true); got != "LOAD PHASE COMPLETED.  Loaded 100 nodes (Expected 100). Loaded 4600 links (46.00 links per node).  Took 2.0 seconds.  Links/second = 2300" {
		t.Errorf("upstream load line %q", got)
	}
	// The maintained reference's default format (LinkBenchDriver.load).
	if got := LoadLine(100, 100, 4601, 200, 2*time.Second, false); got != "LOAD PHASE COMPLETED. Loaded 100 nodes (Expected 100), 4601 links (46.01 /node), 200 counts (2.00 /node). 2.0 seconds, 2301 Links/s, 2401 (link+count)/s, 2451 (link+count+node)/s" {
		t.Errorf("load line %q", got)
	}
	if got := RequestLine(1000, 2500*time.Millisecond); got != "REQUEST PHASE COMPLETED. 1000 requests done in 2 seconds. Requests/second = 400" {
		t.Errorf("request line %q", got)
	}
	if got := RedactURL("postgres://u:secret@h:1/db"); got != "postgres://u:******@h:1/db" {
		t.Errorf("redact %q", got)
	}
}
