package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A linkbench run that gave up on requests the server never answered
// exits 1 with its figures printed: perf keeps the run and counts them;
// any other failure of the driver is still one.
func TestPerfKeepsARunWithTimedOutRequests(t *testing.T) {
	dir := t.TempDir()
	output := `INFO warm-up done; measuring
GET_NODE  15465  0  0  386  3.59  8.07  16.0  32.7  63.7  280  419  12.2
REQUEST PHASE COMPLETED. 35089 requests done in 40 seconds. Requests/second = 876
linkbench: the request phase did not end on time: at maxtime + maxtime_grace (10s) 11 requests were still waiting for the mysql store at 127.0.0.1:33069 (GET_LINKS_LIST x11); they are counted as timed out.
`
	script := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(script, []byte(output), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name, cmd string) error {
		return perfCmd([]string{"-label", "linkbench", "-requesters", "64", "-log", filepath.Join(dir, name+".log"),
			"-o", filepath.Join(dir, name+".json"), "--", "sh", "-c", cmd})
	}
	if err := run("timedout", "cat "+script+"; exit 1"); err != nil {
		t.Fatalf("a run with timed-out requests: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "timedout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p Perf
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.TimedOut != 11 || p.Requests != 35089 || p.Ops["GET_NODE"].Count != 15465 {
		t.Errorf("perf = %+v, want 11 timed out, 35089 requests, GET_NODE's count", p)
	}
	ref, _ := json.Marshal(Perf{Label: "reference", Requesters: 64, Requests: 300000, Seconds: 30, RequestsPerS: 10000})
	if err := os.WriteFile(filepath.Join(dir, "ref.json"), ref, 0o644); err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := perfTable(&table, "t", []string{filepath.Join(dir, "ref.json"), filepath.Join(dir, "timedout.json")}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "linkbench, 64 requesters, run 1: 11 requests not answered") {
		t.Errorf("the table does not say which run timed out:\n%s", table.String())
	}
	cut := strings.Replace(output, "linkbench: the request phase did not end on time", "linkbench: connection refused", 1)
	if err := os.WriteFile(script, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run("failed", "cat "+script+"; exit 1"); err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("a failed run: err = %v, want its exit status", err)
	}
}
