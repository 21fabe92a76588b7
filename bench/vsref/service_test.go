package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/report"
)

// A throttled linkbench run's latencies come from its results bundle's
// service times, so they compare with the reference's (timed from the
// actual send); ops without service times keep what the output said.
func TestServiceTimesReplaceLatencies(t *testing.T) {
	dir := t.TempDir()
	p := Perf{Ops: map[string]OpPerf{
		"GET_NODE": {Count: 10, MeanMs: 17.05, P99Ms: 144.5},
		"ADD_LINK": {Count: 2, MeanMs: 17.55, P99Ms: 145},
	}}
	if err := serviceTimes(dir, &p); err == nil || !strings.Contains(err.Error(), "0 results bundles") {
		t.Fatalf("no bundle: err = %v", err)
	}
	bundle := filepath.Join(dir, "20261125-031423-request")
	if err := os.MkdirAll(bundle, 0o755); err != nil {
		t.Fatal(err)
	}
	// write stores a summary.json of this linkbench's schema with ops.
	write := func(ops string) {
		s := fmt.Sprintf(`{"schema_version": %d, "phase": "request", "ops": %s}`, report.SchemaVersion, ops)
		if err := os.WriteFile(filepath.Join(bundle, "summary.json"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`[{"op": "GET_NODE", "mean_ms": 17.05}]`)
	if err := serviceTimes(dir, &p); err == nil || !strings.Contains(err.Error(), "no service times") {
		t.Fatalf("unthrottled bundle: err = %v", err)
	}
	write(`[{"op": "GET_NODE", "mean_ms": 17.05, "service": {"mean_ms": 0.121, "p99_ms": 0.6}}, {"op": "ADD_LINK", "mean_ms": 17.55}]`)
	if err := serviceTimes(dir, &p); err != nil {
		t.Fatal(err)
	}
	if got := p.Ops["GET_NODE"]; got.MeanMs != 0.121 || got.P99Ms != 0.6 || got.Count != 10 {
		t.Errorf("GET_NODE = %+v, want the service times and the count kept", got)
	}
	if got := p.Ops["ADD_LINK"]; got.MeanMs != 17.55 {
		t.Errorf("ADD_LINK without service times = %+v, want it unchanged", got)
	}
	if !p.ServiceTime {
		t.Error("ServiceTime not set")
	}
}

// A paced linkbench run that fell behind its schedule sent ops in the
// measured time that were due in the warm-up; its output leaves them out,
// the reference counts every op sent after its warm-up, so its rate here
// counts them, and the table says the run fell behind.
func TestPacedRunBehindCountsItsSends(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "20261127-155633-request")
	if err := os.MkdirAll(bundle, 0o755); err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf(`{"schema_version": %d, "phase": "request", "pace_lag_sec": 4.2, "pace_uncounted": 250, "pace_fell_behind": true,
		"ops": [{"op": "GET_NODE", "mean_ms": 4060, "service": {"mean_ms": 3.4, "p99_ms": 13}}]}`, report.SchemaVersion)
	if err := os.WriteFile(filepath.Join(bundle, "summary.json"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Perf{Label: "linkbench", Requesters: 64, Requests: 1000, Seconds: 10, RequestsPerS: 100,
		Ops: map[string]OpPerf{"GET_NODE": {Count: 1000, MeanMs: 4060}}}
	if err := serviceTimes(dir, &p); err != nil {
		t.Fatal(err)
	}
	if p.RequestsPerS != 125 || p.Uncounted != 250 || !p.FellBehind {
		t.Fatalf("RequestsPerS %v, Uncounted %d, FellBehind %v; want 125 (1,250 sent in 10 s), 250, true", p.RequestsPerS, p.Uncounted, p.FellBehind)
	}
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "lb.json")
	if err := os.WriteFile(path, js, 0o644); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := perfTable(&b, "t", []string{path}); err != nil {
		t.Fatal(err)
	}
	if want := "linkbench, 64 requesters, run 1: fell behind its pace (ops sent up to 4.2 s after their intended start); the 250 ops"; !strings.Contains(b.String(), want) {
		t.Errorf("the table does not say the run fell behind:\n%s", b.String())
	}
}
