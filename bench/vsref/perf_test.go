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

// Both drivers print each requester's history queries as X/Y; perf adds
// them up and the table prints their share per 100 list requests.
func TestPerfAddsUpHistoryQueries(t *testing.T) {
	dir := t.TempDir()
	runs := map[string]struct {
		out     string
		history int64 // X summed over the requesters
	}{
		"reference": {`INFO 2026-11-27 01:31:33.036 [Thread-1]: warmup finished
INFO 2026-11-27 01:31:59.1 [Thread-4]: ThreadID = 4 total requests = 6844 requests/second = 342 found = 0 not found = 0 history queries = 20/1000
INFO 2026-11-27 01:31:59.1 [Thread-2]: ThreadID = 2 total requests = 6640 requests/second = 332 found = 0 not found = 0 history queries = 10/3000
INFO 2026-11-27 01:31:59.2 [main]: GET_LINKS_LIST count = 4000  p25 = [0,0.1]ms  p50 = [0,0.1]ms  p75 = [0.1,0.2]ms  p95 = [1,2]ms  p99 = [9,10]ms  max = 428.844ms  mean = 0.949ms threads = 2
INFO 2026-11-27 01:31:59.3 [main]: REQUEST PHASE COMPLETED. 13484 requests done in 20 seconds. Requests/second = 674
`, 30},
		"linkbench": {`INFO 2026-11-27 01:32:05.285: warm-up done; measuring
INFO 2026-11-27 01:32:25.419: ThreadID = 0 total requests = 17489 requests/second = 871 found = 0 not found = 0 history queries = 66/2000
INFO 2026-11-27 01:32:25.419: ThreadID = 1 total requests = 16772 requests/second = 835 found = 0 not found = 0 history queries = 14/2000
GET_LINKS_LIST       4000        0        0      14779    0.0240    0.0658     0.132      1.41      6.79       269       434      1.08
REQUEST PHASE COMPLETED. 34261 requests done in 20 seconds. Requests/second = 1713
`, 80},
	}
	var paths []string
	for label, run := range runs {
		script := filepath.Join(dir, label+".txt")
		if err := os.WriteFile(script, []byte(run.out), 0o644); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, label+".json")
		if err := perfCmd([]string{"-label", label, "-requesters", "2", "-log", filepath.Join(dir, label+".log"),
			"-o", path, "--", "cat", script}); err != nil {
			t.Fatal(err)
		}
		p, err := readPerf(path)
		if err != nil {
			t.Fatal(err)
		}
		if p.HistoryQueries != run.history || p.ListRequests != 4000 {
			t.Errorf("%s: %d history queries of %d list requests, want %d of 4000", label, p.HistoryQueries, p.ListRequests, run.history)
		}
		paths = append(paths, path)
	}
	var table strings.Builder
	if err := perfTable(&table, "t", paths); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "         2 |    0.750    2.000") {
		t.Errorf("the table does not give each driver's history share (0.75 and 2 per 100):\n%s", table.String())
	}
}

// PERF_LB_PACE: the rate a paced linkbench is given follows the
// reference run it is paired with, and a run it cannot follow is an
// error naming what is wrong.
func TestPaceFollowsTheReferenceRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "perf.json")
	b, _ := json.Marshal(Perf{Label: "reference", Requesters: 16, Requests: 441000, Seconds: 30, RequestsPerS: 14700})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run([]string{"pace", "-ratio", "1.02", "-requesters", "16", path}, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "937.1\n" {
		t.Errorf("pace = %q, want 937.1 (1.02 × 14,700 / 16)", got)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pace", "-ratio", "0", "-requesters", "16", path}, "pace ratio 0"},
		{[]string{"pace", "-ratio", "1.02", "-requesters", "0", path}, "0 requesters"},
		{[]string{"pace", "-ratio", "1.02", "-requesters", "4", filepath.Join(dir, "none.json")}, "none.json"},
	} {
		if err := run(c.args, &out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want one naming %q", c.args, err, c.want)
		}
	}
	b, _ = json.Marshal(Perf{Label: "reference", Requesters: 4})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"pace", "-ratio", "1.02", "-requesters", "4", path}, &out); err == nil || !strings.Contains(err.Error(), "no requests") {
		t.Errorf("a run without a rate: err = %v, want one saying so", err)
	}
}

// The reference's summary divides its requests by a phase that also holds
// its requesters' start; perf takes the sum of the requesters' own rates
// instead, and counts the statements the server ran over every request
// the reference sent, its warm-ups' included, so that a phase whose
// requesters end their warm-ups one by one is not charged with statements
// it did not count.
func TestPerfCountsTheReferencesRequestsAsItsRequestersDo(t *testing.T) {
	dir := t.TempDir()
	counters := filepath.Join(dir, "counters")
	if err := os.WriteFile(counters, []byte("stmt.INSERT 1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "reference.sh")
	out := `cat <<'X'
INFO 2026-11-29 07:58:45.847 [Thread-9]: Requester #9 warmup finished  after 600 warmup requests.  0/1000000000 requests done
INFO 2026-11-29 07:58:47.648 [Thread-4]: Requester #4 warmup finished  after 400 warmup requests.  0/1000000000 requests done
X
printf 'stmt.INSERT 2100\nstmt.SELECT 16500\n' > ` + counters + `
cat <<'X'
INFO 2026-11-29 07:59:17.753 [Thread-9]: ThreadID = 9 GET_NODE totalOps = 6000 totalErrors = 0 ops = 6000 sampleDuration = 20000ms samples = 6000 mean = 5313.25 min = 27
INFO 2026-11-29 07:59:17.753 [Thread-9]: ThreadID = 9 total requests = 6000 requests/second = 300 found = 0 not found = 0 history queries = 0/0
INFO 2026-11-29 07:59:17.754 [Thread-4]: ThreadID = 4 GET_NODE totalOps = 4000 totalErrors = 0 ops = 4000 sampleDuration = 16000ms samples = 4000 mean = 6000.01 min = 34
INFO 2026-11-29 07:59:17.755 [Thread-4]: ThreadID = 4 total requests = 4000 requests/second = 250 found = 0 not found = 0 history queries = 0/0
INFO 2026-11-29 07:59:17.852 [main]: REQUEST PHASE COMPLETED. 10000 requests done in 25 seconds. Requests/second = 400
X
`
	if err := os.WriteFile(script, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "reference.json")
	if err := perfCmd([]string{"-label", "reference", "-requesters", "2", "-log", filepath.Join(dir, "reference.log"),
		"-counters", "cat " + counters, "-o", path, "--", "sh", script}); err != nil {
		t.Fatal(err)
	}
	p, err := readPerf(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.RequestsPerS != 550 || p.ReportedRequestsPerS != 400 {
		t.Errorf("requests/s %v (reported %v), want 550 (6000 in 20 s and 4000 in 16 s; reported 400)", p.RequestsPerS, p.ReportedRequestsPerS)
	}
	// No SELECT before the start: the statements of a database copied
	// back just before the run, which the server shows once they run.
	if sel, ins := p.RunStatements["stmt.SELECT"], p.RunStatements["stmt.INSERT"]; p.WarmupRequests != 1000 || sel != 1.5 || ins != 0.1 {
		t.Errorf("%v SELECTs and %v INSERTs per request over %d warm-up requests, want 1.5 and 0.1 over 11,000 requests (1,000 of them in the warm-ups)", sel, ins, p.WarmupRequests)
	}
}
