package main

import (
	"context"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/sysmon"
	"github.com/linkbench/linkbench/internal/workload"
)

// loopTracker cuts a request phase into loops of maxtime each as its
// intervals close: per loop it keeps the ops (percentiles from the
// difference of the cumulative histograms at the loop's two ends), the
// resource use (a sysmon window) and the database size at its end.
type loopTracker struct {
	ctx   context.Context
	log   *logger
	every time.Duration
	n     int
	st    store.Store
	mon   *sysmon.Monitor
	coll  *stats.Collector
	prev  map[graph.Op]*hdr.Histogram
	cur   []stats.Interval
	loops []report.Loop
	hung  bool // the store hung: its size is not asked
}

// trackLoops makes the tracker and hooks it into the phase's callbacks
// (after those already set, which it keeps calling).
func trackLoops(ctx context.Context, e *env, st store.Store, rp *workload.RequestPhase, mon *sysmon.Monitor, loopCfg *config.Config) *loopTracker {
	lt := &loopTracker{ctx: ctx, log: e.log, every: loopCfg.MaxTime, n: max(loopCfg.Loops, 1), st: st, mon: mon}
	onColl, onIv := rp.OnCollector, rp.OnInterval
	rp.OnCollector = func(c *stats.Collector) {
		lt.coll = c
		if onColl != nil {
			onColl(c)
		}
	}
	rp.OnInterval = func(iv stats.Interval) {
		if onIv != nil {
			onIv(iv)
		}
		lt.interval(iv)
	}
	return lt
}

// interval adds a closed interval and closes a loop at its boundary (the
// first tick at or past it: loops end on 1 s interval ticks).
func (lt *loopTracker) interval(iv stats.Interval) {
	lt.cur = append(lt.cur, iv)
	k := len(lt.loops) + 1
	if k < lt.n && iv.End >= time.Duration(k)*lt.every-time.Second/2 {
		lt.close(false)
	}
}

// close ends the current loop.
func (lt *loopTracker) close(last bool) {
	if lt.coll == nil || len(lt.cur) == 0 {
		return
	}
	ivs := lt.cur
	lt.cur = nil
	first, end := ivs[0], ivs[len(ivs)-1]
	secs := (end.End - first.Start).Seconds()
	hists := lt.coll.Histograms()
	window := report.DiffHistograms(hists, lt.prev)
	lt.prev = hists
	l := report.Loop{Loop: len(lt.loops) + 1, StartSec: first.Start.Seconds(), EndSec: end.End.Seconds(),
		StartedAt: end.EndTime.Add(first.Start - end.End), Ops: report.WindowOps(ivs, window, secs), Hists: window}
	for _, iv := range ivs {
		l.Totals.Requests += iv.Count
		l.Totals.Errors += iv.Errors
	}
	if secs > 0 {
		l.Totals.OpsPerSec = float64(l.Totals.Requests) / secs
	}
	l.Partial = last && secs < 0.9*lt.every.Seconds()
	if lt.mon != nil {
		if u := lt.mon.Window(); u.Available {
			per := u.PerOp(l.Totals.Requests)
			l.Usage, l.Efficiency = &u, &per
		}
	}
	if !lt.hung {
		l.SizeOnDisk = sizeWithin(lt.ctx, lt.st)
	}
	lt.loops = append(lt.loops, l)
	if lt.n > 1 {
		lt.log.Infof("loop %d of %d: %d requests, %.0f requests/s, %d errors", l.Loop, lt.n, l.Totals.Requests, l.Totals.OpsPerSec, l.Totals.Errors)
	}
}

// finish closes the last loop once the phase has returned. The size of a
// store that hung is not asked (it would wait for its timeout past the
// phase's hard end).
func (lt *loopTracker) finish(hung bool) {
	lt.hung = hung
	lt.close(true)
}

// sizeWithin is the store's size, asked with a bounded context of its own
// (after Ctrl-C the run's context is cancelled, but the figure is wanted).
func sizeWithin(ctx context.Context, st store.Store) int64 {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return sizeOf(c, st)
}

// engineOf is the engine column of the summary lines: the store and, when
// it has one, its storage engine.
func engineOf(r *report.Results) string {
	if eng := r.StoreSettings["engine"]; eng != "" && !strings.Contains(eng, " ") {
		return r.Store + "/" + eng
	}
	return r.Store
}

// memoryOf is the server memory of a summary line: the local server's,
// the driver's own for an embedded store, unknown otherwise.
func memoryOf(w *dataLocation, u *sysmon.Usage) int64 {
	switch {
	case u == nil:
		return 0
	case w.embedded:
		return u.DriverRSSBytes
	case u.ServerMeasured:
		return u.ServerMemBytes
	}
	return 0
}

// localData says whether the machine figures describe the data's machine.
func localData(w *dataLocation) bool { return w.embedded || (w.unknown == "" && len(w.serverPIDs) > 0) }

// loopResults records the loops and their summary lines in the results
// and prints the lines.
func (a *app) loopResults(e *env, r *report.Results, lt *loopTracker) {
	cpus := r.Environment.CPUs
	for _, l := range lt.loops {
		r.SummaryLines = append(r.SummaryLines, report.NewSummaryLine(report.LineInput{
			Phase: "request", Loop: l.Loop, Secs: l.EndSec - l.StartSec, Count: l.Totals.Requests, Ops: l.Ops,
			Usage: l.Usage, CPUs: cpus, LocalData: localData(e.where), SizeBytes: l.SizeOnDisk,
			MemBytes: memoryOf(e.where, l.Usage), Engine: engineOf(r)}))
	}
	if len(lt.loops) > 1 {
		r.Loops = lt.loops
	}
	a.printSummaryLines(e, r.SummaryLines)
}

// loadLine records the load's summary line in the results and prints it.
func (a *app) loadLine(e *env, r *report.Results) {
	l := report.NewSummaryLine(report.LineInput{Phase: "load", Secs: r.ElapsedSec, Count: r.Totals.Links,
		Usage: r.Usage, CPUs: r.Environment.CPUs, LocalData: localData(e.where), SizeBytes: r.SizeOnDisk,
		MemBytes: memoryOf(e.where, r.Usage), Engine: engineOf(r)})
	r.SummaryLines = []report.SummaryLine{l}
	a.printSummaryLines(e, r.SummaryLines)
}

func (a *app) printSummaryLines(e *env, lines []report.SummaryLine) {
	var sb strings.Builder
	sb.WriteString("SUMMARY\n")
	if err := report.WriteSummaryTable(&sb, lines); err != nil {
		return
	}
	if strings.Contains(sb.String(), report.Unknown) {
		why := "not reported by the store"
		if e.where.unknown != "" {
			why = "not measurable from this machine: " + e.where.unknown
		}
		sb.WriteString(report.Unknown + ": " + why + "\n")
	}
	a.print(e, sb.String())
}

// loadRecorder keeps the load's cumulative counts at every progress call
// (once a second, right after each interval closes) for links/s charts.
type loadRecorder struct{ points []report.LoadPoint }

// wrap returns a progress callback that records and then calls next.
func (lr *loadRecorder) wrap(next func(workload.LoadProgress)) func(workload.LoadProgress) {
	return func(p workload.LoadProgress) {
		lr.points = append(lr.points, report.LoadPoint{Sec: p.Elapsed.Seconds(), Links: p.Links, Nodes: p.Nodes, Counts: p.Counts})
		next(p)
	}
}
