package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestMetricsServedDuringLoadAndRun scrapes --metrics-addr while the load
// and then the request phase of one -l -r process run: both phases are
// served, each under its label, with the load's stages and the
// requesters.
func TestMetricsServedDuringLoadAndRun(t *testing.T) {
	dir := t.TempDir()
	cfg := repoConfig(t, "LinkConfigMemory.properties")
	old, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(old)
	var out, errb bytes.Buffer
	a := newApp(&out, &errb)
	scraped := map[string]string{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.onPhase = func(phase string) {
		if phase == "request" {
			defer cancel() // scraped: the run need not go on
		}
		resp, err := http.Get("http://" + a.exp.Addr() + "/metrics")
		if err != nil {
			t.Errorf("scrape during the %s phase: %v", phase, err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		scraped[phase] = string(b)
	}
	err := a.execute(ctx, []string{"-c", cfg, "-D", "maxid1=2001",
		"-D", "nlinks_func=const", "-D", "nlinks_default=3", "-D", "maxtime=60", "-D", "requests=0", "-D", "warmup_time=0", "-D", "requesters=2",
		"--progress-interval", "1", "--no-results", "--metrics-addr", "127.0.0.1:0", "-l", "-r"})
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for phase, wants := range map[string][]string{
		"load": {`linkbench_phase_running{phase="load"} 1`, `linkbench_ops_total{op="LOAD_LINKS_BULK",phase="load"}`,
			`linkbench_load_stage{phase="load",stage="links"}`, `linkbench_load_rows_total{phase="load",table="links"}`,
			`linkbench_progress_ratio{phase="load"}`, `linkbench_build_info{`},
		"request": {`linkbench_phase_running{phase="request"} 1`, `linkbench_phase_running{phase="load"} 0`,
			`linkbench_requesters{phase="request"} 2`, `linkbench_ops_total{op="GET_NODE",phase="request"}`,
			`linkbench_op_latency_seconds_bucket{op="GET_NODE",phase="request",le="0.01"}`, `linkbench_list_size_links_count{phase="request"}`},
	} {
		body, ok := scraped[phase]
		if !ok {
			t.Errorf("no scrape during the %s phase", phase)
			continue
		}
		for _, want := range wants {
			if !strings.Contains(body, want) {
				t.Errorf("metrics during the %s phase lack %q:\n%s", phase, want, grepLines(body, "linkbench_requesters", "linkbench_phase_running"))
			}
		}
	}
}

// TestMetricsAddrWarnsBeyondLoopback: an address other machines can reach
// (":9090", a LAN address) gets a warning line before anything listens.
// 192.0.2.1 (TEST-NET-1) is on no interface here, so nothing is opened.
func TestMetricsAddrWarnsBeyondLoopback(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := runCLI(t, dir, "load", "-D", "maxid1=101", "--no-results", "--metrics-addr", "192.0.2.1:0")
	if code != 1 || !strings.Contains(errOut, "WARN") || !strings.Contains(errOut, "--metrics-addr 192.0.2.1:0 is not a loopback address") {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
}

// grepLines keeps the lines of s that contain one of subs.
func grepLines(s string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
