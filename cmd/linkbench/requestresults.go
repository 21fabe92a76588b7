package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/sysmon"
	"github.com/linkbench/linkbench/internal/workload"
)

// requestOutput is what a request phase measured beside its result, for
// requestResults.
type requestOutput struct {
	started    time.Time
	sizeBefore int64
	mon        *sysmon.Monitor
	loops      *loopTracker
	usage      sysmon.Usage
	samples    []sysmon.Sample
}

// requestResults logs and prints a request phase's figures and writes
// --csvstats and the results bundle; a failure to write one output does
// not keep the others from being written, it is returned at the end. e is
// the phase's env (its config has the phase's own maxtime).
func (a *app) requestResults(ctx context.Context, e *env, st store.Store, res *workload.RequestResult, o requestOutput) (*report.Results, error) {
	cfg := e.cfg
	if res.Interrupted {
		e.warnf("interrupted: reporting the %d requests that finished", res.Requests)
	}
	if res.TimedOut > 0 {
		e.warnf("%d requests were abandoned without an answer from the store (op_timeout = %s, or the end of the phase); they are counted as errors", res.TimedOut, cfg.OpTimeout)
	}
	for _, t := range res.Threads {
		if t.Abandoned {
			e.warnf("ThreadID = %d was still waiting for the store at the end and was left behind", t.ID)
			continue
		}
		e.log.Infof("ThreadID = %d total requests = %d requests/second = %.0f found = %d not found = %d history queries = %d/%d failed = %d",
			t.ID, t.Requests, t.OpsPerSec, t.Found, t.NotFound, t.HistoryQueries, t.ListRequests, t.Failed)
	}
	a.printResults(e, res.Summary, cfg.Requesters, nil, report.RequestLine(res.Requests, res.Elapsed))
	csvErr := a.writeCSVStats(res.Summary, cfg.Requesters)
	hung := len(res.HardEnd) > 0 || res.Abandoned > 0
	e.hung = e.hung || hung
	r := a.baseResults(ctx, e, st, "request", o.started, res.Elapsed, !hung)
	r.WorkloadSemantics = cfg.WorkloadSemantics
	r.Interrupted = res.Interrupted
	r.Totals = report.Totals{Requests: res.Requests, Errors: res.Errors, Reconnects: res.Reconnects, TimedOut: res.TimedOut, OpsPerSec: perSec(res.Requests, res.Elapsed)}
	r.Ops = res.Summary
	r.AllOps = report.AllOpsSummary(res.Collector.Histograms(), res.Elapsed.Seconds())
	a.addUsage(e, r, o.usage, o.samples, res.Requests, "request", o.sizeBefore)
	r.Threads = res.Threads
	r.Intervals = res.Series
	r.Stages, r.MaxBacklog = res.Stages, res.MaxBacklog
	r.PaceLagSec, r.PaceUncounted, r.PaceFellBehind = res.PaceLag.Seconds(), res.PaceUncounted, res.FellBehind()
	r.WarmupSec = cfg.WarmupTime.Seconds()
	a.loopResults(e, r, o.loops)
	for _, st := range res.Stages {
		line := fmt.Sprintf("STAGE %s: %d requests, %.0f requests/s, %d errors", st.Name, st.Count, st.OpsPerSec, st.Errors)
		for _, o := range st.Ops {
			if o.Name == "GET_NODE" || o.Name == "GET_LINKS_LIST" || o.Name == "ADD_LINK" {
				line += fmt.Sprintf(", %s p99 %sms", o.Name, report.FormatMs(o.P99))
			}
		}
		a.println(e, line)
	}
	if behindSchedule(res) {
		e.warnf("the store fell behind the arrival schedule: it served %d of the %.0f requests due (%.0f of %.0f requests/s; up to %.0f waiting); latencies include that queueing",
			res.Requests, res.Offered, perSec(res.Requests, res.Elapsed), res.Offered/max(res.Elapsed.Seconds(), 1e-9), res.MaxBacklog)
	}
	if cfg.RequestRate > 0 && res.FellBehind() {
		e.warnf("the requesters fell behind their pace (%d × requestrate %s = %.0f requests/s): ops went out up to %s after their intended start (latency from the intended start includes that wait; the service times are in the results bundle), and the %d ops due in the warm-up but sent after it are not counted: the store served %d requests in the measured time, %d counted. Lower requestrate to measure at a pace the store keeps",
			cfg.Requesters, strconv.FormatFloat(cfg.RequestRate, 'f', -1, 64), float64(cfg.Requesters)*cfg.RequestRate, res.PaceLag.Round(time.Millisecond), res.PaceUncounted, res.Requests+res.PaceUncounted, res.Requests)
	}
	return r, errors.Join(csvErr, a.writeBundle(e, r, res.Collector))
}

// behindSchedule reports whether an open-loop run served fewer requests
// than its schedule made due by more than the arrival process's noise:
// four standard deviations of a Poisson count (a false alarm in about
// 30,000 runs) plus 1 %. A backlog that comes and goes (a burst of
// arrivals, a stall the store recovers from) is in the latencies, which
// count from each request's intended start; this is a store that did not
// keep up with the offered rate.
func behindSchedule(res *workload.RequestResult) bool {
	if res.Offered <= 0 {
		return false
	}
	short := res.Offered - float64(res.Requests)
	return short > 4*math.Sqrt(res.Offered)+0.01*res.Offered
}
