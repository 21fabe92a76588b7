package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/linkbench/linkbench/internal/report"
)

// Perf is what one measured request phase of a driver cost: its rate,
// the driver process's CPU over the measured part of the phase (after the
// warm-up, which for the reference also leaves the JIT's start out), its
// peak resident memory, and each op's mean and p99 latency.
type Perf struct {
	Label      string  `json:"label"`
	Requesters int     `json:"requesters"`
	Requests   int64   `json:"requests"`
	Seconds    float64 `json:"seconds"` // of the measured phase, as the driver reports it
	// RequestsPerS is the measured requests a second. The reference's
	// summary line divides its requests by a phase that also holds its
	// requesters' start (opening their connections before their warm-ups
	// begin: about 5 s of 35 at 64 requesters here), so for it this is the
	// sum of its requesters' own rates, each over the measured time it
	// prints for them; ReportedRequestsPerS keeps the summary's figure.
	RequestsPerS         float64 `json:"requests_per_sec"`
	ReportedRequestsPerS float64 `json:"reported_requests_per_sec,omitempty"`
	CPUSec               float64 `json:"cpu_sec"` // user + system over the measured window
	WindowSec            float64 `json:"window_sec"`
	CPUPerReqUs          float64 `json:"cpu_per_request_us"`
	PeakRSSKB            int64   `json:"peak_rss_kb"`
	// The server's processes' CPU per request and the share of the
	// machine's CPU left idle, over a window that starts with the measured
	// one and ends before either driver closes its connections (a backend
	// that has exited no longer shows its CPU): what the driver's cost
	// does to the database beside it.
	ServerCPUPerReqUs float64 `json:"server_cpu_per_request_us,omitempty"`
	IdlePct           float64 `json:"idle_pct,omitempty"`
	// ServerCounters are the server's own counters over the same window,
	// per request (the output of -counters: SHOW GLOBAL STATUS and
	// InnoDB's metrics, or PostgreSQL's statistics views): what the
	// server did for a request, where its CPU alone cannot say.
	ServerCounters map[string]float64 `json:"server_counters_per_request,omitempty"`
	// RunStatements are the server's statement counters per request over
	// every request the driver sent, whose number is exact where a window's
	// is an estimate: for the reference from before it starts to the end
	// of its phase, divided by its measured requests and those each of its
	// requesters says it made in its warm-up; for linkbench from the end
	// of its warm-up (one moment for all its requesters) to the end of its
	// phase, divided by its measured requests. The statements-per-request
	// check compares these.
	RunStatements map[string]float64 `json:"run_statements_per_request,omitempty"`
	// WarmupRequests are the reference's requests in its warm-ups.
	WarmupRequests int64             `json:"warmup_requests,omitempty"`
	Ops            map[string]OpPerf `json:"ops"`
	// Sched is what woke the server's and the driver's threads over a
	// slice at the start of the measured window and how long each then
	// waited for a core (-sched, PERF_SCHED=1), keyed "server woken by
	// the driver" and so on (sched.go).
	Sched map[string]SchedWake `json:"sched,omitempty"`
	// ServiceTime says the ops' latencies are service times (from the
	// actual send) read from linkbench's results bundle: a throttled
	// linkbench times its ops from their intended start, the reference
	// from the actual one.
	ServiceTime bool `json:"service_time,omitempty"`
	// Uncounted are the ops a paced linkbench sent in the measured time
	// that were due during the warm-up: its output leaves them out (an op
	// belongs to the part of the run its intended start falls in), the
	// reference counts every op sent after its warm-up, so they are added
	// back to Requests in RequestsPerS and the figures per request.
	// PaceLagSec is the longest an op waited past its intended start, and
	// FellBehind says the requesters lost their schedule (from the
	// results bundle).
	Uncounted  int64   `json:"pace_uncounted,omitempty"`
	PaceLagSec float64 `json:"pace_lag_sec,omitempty"`
	FellBehind bool    `json:"pace_fell_behind,omitempty"`
	// HistoryQueries and ListRequests add up what each requester of either
	// driver prints as "history queries = X/Y": its list reads that went on
	// past a remembered full page (the warm-up's included, as both drivers
	// count them) and its measured GET_LINKS_LIST requests. A requester
	// remembers a page only after reading a full one (10,000 rows), which
	// takes thousands of list reads, and a history read is again a page of
	// that length, so their share sets the mean list read of a short run
	// and grows with the requests each requester has made.
	HistoryQueries int64 `json:"history_queries,omitempty"`
	ListRequests   int64 `json:"list_requests,omitempty"`
	// TimedOut counts the requests linkbench gave up on at maxtime +
	// maxtime_grace, the server having not answered them (its exit status
	// is then 1; the run is kept, since the server, not the driver, set
	// it). The reference has no such bound: it waits for them.
	TimedOut int64 `json:"timed_out,omitempty"`
}

// OpPerf is one op's latency. The reference's default histogram gives the
// p99 as a bucket; its upper bound is kept (linkbench's is exact).
type OpPerf struct {
	Count  int64   `json:"count"`
	MeanMs float64 `json:"mean_ms"`
	P99Ms  float64 `json:"p99_ms"`
}

// The moments both drivers announce: the end of the warm-up (the
// reference once per requester, linkbench once) and the end of the phase.
var (
	reWarmupDone = regexp.MustCompile(`warmup finished|warm-up done`)
	rePhaseDone  = regexp.MustCompile(`REQUEST PHASE COMPLETED\. (\d+) requests done in (\d+) seconds\. Requests/second = (\d+)`)
	reHistory    = regexp.MustCompile(`history queries = (\d+)/(\d+)`)
	reHardEnd    = regexp.MustCompile(`the request phase did not end on time: .* (\d+) requests were still waiting`)
	// The reference's requesters, each: "Requester #9 warmup finished  after
	// 639 warmup requests.", "ThreadID = 9 GET_NODE totalOps = ...
	// sampleDuration = 30076ms ..." and "ThreadID = 9 total requests = 3839
	// requests/second = 127 ...".
	reRefWarmup   = regexp.MustCompile(`warmup finished\s+after (\d+) warmup requests`)
	reRefDuration = regexp.MustCompile(`ThreadID = (\d+) [A-Z_]+ totalOps = .*sampleDuration = (\d+)ms`)
	reRefTotal    = regexp.MustCompile(`ThreadID = (\d+) total requests = (\d+) requests/second`)
	// The reference: "GET_NODE count = 45370  p25 = [0.1,0.2]ms ... p99 = [3,4]ms  max = 98.815ms  mean = 0.346ms".
	reRefOp = regexp.MustCompile(`\b([A-Z_]+) count = (\d+) .*p99 = \[[0-9.]+,([0-9.]+)\]ms .*mean = ([0-9.]+)ms`)
	// linkbench's table: "GET_NODE  count errors retries ops/s p25 p50 p75 p95 p99 p99.9 max mean" (ms).
	reLBOp = regexp.MustCompile(`^([A-Z_]+)\s+(\d+)\s+\d+\s+\d+\s+\d+\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$`)
)

// perfCmd runs a driver (the command after --), samples its CPU from
// /proc when its warm-up ends and when its phase ends, and writes a Perf.
func perfCmd(args []string) error {
	fs := flag.NewFlagSet("perf", flag.ContinueOnError)
	label := fs.String("label", "", "name of the run in the tables")
	requesters := fs.Int("requesters", 0, "requesters of the run (for the tables)")
	out := fs.String("o", "", "the run's figures (JSON)")
	logPath := fs.String("log", "", "the driver's output (stdout and stderr)")
	server := fs.String("server", "", "command name of the server's processes (postgres, mariadbd), for its CPU")
	serverWindow := fs.Duration("server-window", 20*time.Second, "how long after the warm-up to sample the server's CPU (less than the measured time)")
	serviceFrom := fs.String("service-from", "", "linkbench's results directory: take each op's mean and p99 from the service times of its one bundle")
	counters := fs.String("counters", "", "a shell command printing the server's counters, a name and a number per line; run at both ends of the server's window")
	profileDir := fs.String("profile", "", "sample every CPU with perf record over the server's window and write DIR/profile.tsv, CPU µs per request by program and function")
	schedDir := fs.String("sched", "", "record the scheduler's events on every CPU with perf sched record over -sched-window from the warm-up's end, and keep what woke the server's and the driver's threads and how long each waited for a core")
	schedWindow := fs.Duration("sched-window", 3*time.Second, "how long -sched records (its data grows by about 14 MB a second at 15,000 requests a second)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	argv := fs.Args()
	if len(argv) == 0 || *out == "" || *logPath == "" {
		return fmt.Errorf("usage: vsref perf -label L -requesters N -log FILE -o run.json -- command args...")
	}
	logf, err := os.Create(*logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	var runA, runB map[string]float64
	if *counters != "" {
		if runA, err = readCounters(*counters); err != nil {
			return fmt.Errorf("%s: counters: %v", *label, err)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return err
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait(); pw.Close() }()

	p := Perf{Label: *label, Requesters: *requesters, Ops: map[string]OpPerf{}}
	var cpuA, cpuB float64
	type sample struct {
		srv, idle, all float64
		counters       map[string]float64
		err            error
	}
	take := func() sample {
		idle, all := machineIdle()
		s := sample{srv: namedCPU(*server), idle: idle, all: all}
		if *counters != "" {
			s.counters, s.err = readCounters(*counters)
		}
		return s
	}
	var srvA sample
	var counterErr error
	refRequests, refSeconds := map[string]int64{}, map[string]float64{}
	srvB := make(chan sample, 1)
	var tA, tB time.Time
	var prof *profiler
	var profErr error
	var sched *schedRecorder
	var schedErr error
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(logf, line)
		switch {
		case tA.IsZero() && reWarmupDone.MatchString(line):
			tA, cpuA = time.Now(), procCPU(cmd.Process.Pid)
			srvA = take()
			if *profileDir != "" {
				prof, profErr = startProfile(*profileDir, *serverWindow, cmd.Process.Pid, namedPIDs(*server))
			}
			if *schedDir != "" {
				sched, schedErr = startSched(*schedDir, *schedWindow, cmd.Process.Pid, namedPIDs(*server))
			}
			time.AfterFunc(*serverWindow, func() { srvB <- take() })
		case rePhaseDone.MatchString(line):
			tB, cpuB = time.Now(), procCPU(cmd.Process.Pid)
			m := rePhaseDone.FindStringSubmatch(line)
			p.Requests, _ = strconv.ParseInt(m[1], 10, 64)
			p.Seconds, _ = strconv.ParseFloat(m[2], 64)
			p.RequestsPerS, _ = strconv.ParseFloat(m[3], 64)
			if *counters != "" {
				runB, counterErr = readCounters(*counters)
			}
		}
		if m := reRefWarmup.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			p.WarmupRequests += n
		}
		if m := reRefDuration.FindStringSubmatch(line); m != nil {
			ms, _ := strconv.ParseFloat(m[2], 64)
			refSeconds[m[1]] = max(refSeconds[m[1]], ms/1000)
		}
		if m := reRefTotal.FindStringSubmatch(line); m != nil {
			refRequests[m[1]], _ = strconv.ParseInt(m[2], 10, 64)
		}
		if m := reHardEnd.FindStringSubmatch(line); m != nil {
			p.TimedOut, _ = strconv.ParseInt(m[1], 10, 64)
		}
		if m := reHistory.FindStringSubmatch(line); m != nil {
			h, _ := strconv.ParseInt(m[1], 10, 64)
			n, _ := strconv.ParseInt(m[2], 10, 64)
			p.HistoryQueries += h
			p.ListRequests += n
		}
		if m := reRefOp.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			p99, _ := strconv.ParseFloat(m[3], 64)
			mean, _ := strconv.ParseFloat(m[4], 64)
			p.Ops[m[1]] = OpPerf{Count: n, MeanMs: mean, P99Ms: p99}
		} else if m := reLBOp.FindStringSubmatch(strings.TrimSpace(line)); m != nil && isOp(m[1]) {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			p99, _ := strconv.ParseFloat(m[7], 64)
			mean, _ := strconv.ParseFloat(m[10], 64)
			p.Ops[m[1]] = OpPerf{Count: n, MeanMs: mean, P99Ms: p99}
		}
	}
	if err := <-waitErr; err != nil && p.TimedOut == 0 {
		return fmt.Errorf("%s: %v (output in %s)", *label, err, *logPath)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		p.PeakRSSKB = ru.Maxrss
	}
	if tA.IsZero() || tB.IsZero() || p.Requests == 0 {
		return fmt.Errorf("%s: the output has no end of warm-up or no REQUEST PHASE COMPLETED line (see %s)", *label, *logPath)
	}
	if *serviceFrom != "" {
		if err := serviceTimes(*serviceFrom, &p); err != nil {
			return fmt.Errorf("%s: %v", *label, err)
		}
	}
	if rate := requesterRates(refRequests, refSeconds); rate > 0 {
		p.ReportedRequestsPerS, p.RequestsPerS = p.RequestsPerS, rate
	}
	if counterErr != nil {
		return fmt.Errorf("%s: counters: %v", *label, counterErr)
	}
	if runB != nil {
		// The reference's requesters end their warm-ups one by one, so its
		// count starts before it does; linkbench's all at once.
		from, n := srvA.counters, p.Requests+p.Uncounted
		if p.WarmupRequests > 0 {
			from, n = runA, p.Requests+p.WarmupRequests
		}
		if from != nil && n > 0 {
			// A counter the server has not shown yet (PostgreSQL's
			// statements in a database copied back just before the run)
			// starts from zero.
			p.RunStatements = map[string]float64{}
			for _, k := range slices.Concat(statementCounters, transactionCounters) {
				if b, ok := runB[k]; ok && b != from[k] {
					p.RunStatements[k] = (b - from[k]) / float64(n)
				}
			}
		}
	}
	p.CPUSec = cpuB - cpuA
	p.WindowSec = tB.Sub(tA).Seconds()
	p.CPUPerReqUs = p.CPUSec * 1e6 / float64(p.Requests+p.Uncounted)
	select {
	case b := <-srvB:
		w := serverWindow.Seconds()
		if *server != "" && p.RequestsPerS > 0 {
			p.ServerCPUPerReqUs = (b.srv - srvA.srv) / w * 1e6 / p.RequestsPerS
		}
		if b.all > srvA.all {
			p.IdlePct = 100 * (b.idle - srvA.idle) / (b.all - srvA.all)
		}
		if err := cmp.Or(srvA.err, b.err); err != nil {
			return fmt.Errorf("%s: counters: %v", *label, err)
		}
		if *counters != "" && p.RequestsPerS > 0 {
			p.ServerCounters = counterDeltas(srvA.counters, b.counters, p.RequestsPerS*w)
		}
		if prof != nil && profErr == nil {
			profErr = prof.finish(p.RequestsPerS * w)
		}
	default: // the phase ended before the window: no server figures
		if prof != nil && profErr == nil {
			profErr = fmt.Errorf("the phase ended within the profile's window")
		}
	}
	if profErr != nil {
		return fmt.Errorf("%s: profile: %v", *label, profErr)
	}
	if sched != nil && schedErr == nil {
		if p.WindowSec <= schedWindow.Seconds() {
			schedErr = fmt.Errorf("the phase ended within the recording's window")
		} else {
			p.Sched, schedErr = sched.finish(p.RequestsPerS)
		}
	}
	if schedErr != nil {
		return fmt.Errorf("%s: sched: %v", *label, schedErr)
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}

// readPerf reads one run's figures, as perfCmd wrote them.
func readPerf(path string) (Perf, error) {
	var r Perf
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// serviceTimes replaces p's op latencies with the service times in the
// one results bundle under dir.
func serviceTimes(dir string, p *Perf) error {
	found, err := filepath.Glob(filepath.Join(dir, "*", "summary.json"))
	if err != nil {
		return err
	}
	if len(found) != 1 {
		return fmt.Errorf("%s holds %d results bundles; want the run's one", dir, len(found))
	}
	r, err := report.ReadBundle(filepath.Dir(found[0]))
	if err != nil {
		return err
	}
	for _, o := range r.Ops {
		op, ok := p.Ops[o.Name]
		if !ok || o.Service == nil {
			continue
		}
		op.MeanMs, op.P99Ms = o.Service.Mean, o.Service.P99
		p.Ops[o.Name] = op
		p.ServiceTime = true
	}
	if !p.ServiceTime {
		return fmt.Errorf("%s has no service times (linkbench keeps them when requestrate > 0)", found[0])
	}
	if r.PaceUncounted > 0 && p.Requests > 0 {
		p.RequestsPerS *= float64(p.Requests+r.PaceUncounted) / float64(p.Requests)
	}
	p.Uncounted, p.PaceLagSec, p.FellBehind = r.PaceUncounted, r.PaceLagSec, r.PaceFellBehind
	return nil
}

func isOp(s string) bool {
	switch s {
	case "ADD_LINK", "DELETE_LINK", "UPDATE_LINK", "COUNT_LINK", "MULTIGET_LINK", "GET_LINKS_LIST", "ADD_NODE", "UPDATE_NODE", "DELETE_NODE", "GET_NODE":
		return true
	}
	return false
}

// procCPU is the process's user + system CPU in seconds (all threads).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / clockTicks
}

// namedCPU is the CPU in seconds of every process whose command name is
// name (a server's backends come and go with connections; the drivers
// keep theirs open for the whole window).
func namedCPU(name string) float64 {
	var sum float64
	for _, pid := range namedPIDs(name) {
		sum += procCPU(pid)
	}
	return sum
}

// namedPIDs are the ids of the processes whose command name is name.
func namedPIDs(name string) []int {
	if name == "" {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(b)) == name {
			pids = append(pids, pid)
		}
	}
	return pids
}

// machineIdle is the idle and total CPU time of the machine, in ticks.
func machineIdle() (idle, all float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i, v := range f[1:] {
		x, _ := strconv.ParseFloat(v, 64)
		all += x
		if i == 3 || i == 4 { // idle, iowait
			idle += x
		}
	}
	return idle, all
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

// paceFor is the requestrate that holds n requesters of linkbench to
// ratio times the requests a second of run r (PERF_LB_PACE: the
// reference's run just before, so that a paced linkbench follows the
// reference's rate of the day rather than a figure fixed in advance).
func paceFor(r Perf, ratio float64, n int) (float64, error) {
	switch {
	case !(ratio > 0):
		return 0, fmt.Errorf("pace ratio %v: want a positive multiple of the run's rate, e.g. 1.02", ratio)
	case n < 1:
		return 0, fmt.Errorf("%d requesters: want 1 or more", n)
	case !(r.RequestsPerS > 0):
		return 0, fmt.Errorf("the run counted no requests a second to pace by")
	}
	return ratio * r.RequestsPerS / float64(n), nil
}

// requesterRates is the sum of the reference's requesters' rates, each
// its requests over the measured time it printed (0 when the output has
// no such lines: linkbench's).
func requesterRates(requests map[string]int64, seconds map[string]float64) float64 {
	rate := 0.0
	for id, n := range requests {
		if s := seconds[id]; s > 0 {
			rate += float64(n) / s
		}
	}
	return rate
}
