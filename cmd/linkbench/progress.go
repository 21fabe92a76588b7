package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/workload"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// isTerminal reports whether w is a character device (an interactive terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// loadProgress shows the load's progress: on a terminal one bar that
// names the stage under way, its rate and the elapsed time (log lines
// print above it); otherwise a log line every progressfreq. Stage starts
// and ends are logged in both cases.
type loadProgress struct {
	log   *logger
	every time.Duration
	last  time.Time
	start time.Time
	p     *mpb.Progress
	bar   *mpb.Bar

	mu     sync.Mutex
	cur    workload.LoadProgress
	at     time.Time       // when cur was taken
	active map[string]bool // stages seen, true while under way
}

func newLoadProgress(w io.Writer, log *logger, every time.Duration) *loadProgress {
	lp := &loadProgress{log: log, every: every, last: time.Now(), start: time.Now(),
		active: map[string]bool{"links": true, "counts": true}}
	if every <= 0 {
		lp.every = 10 * time.Second
	}
	if isTerminal(w) {
		lp.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(30), mpb.WithRefreshRate(200*time.Millisecond))
		log.redirect(lp.p)
	}
	return lp
}

// snapshot is the last progress, advanced to now.
func (lp *loadProgress) snapshot() workload.LoadProgress {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	p := lp.cur
	if !lp.at.IsZero() {
		d := time.Since(lp.at)
		p.Elapsed += d
		if p.Stage != "" {
			p.StageElapsed += d
		}
	} else {
		p.Elapsed = time.Since(lp.start)
	}
	return p
}

func (lp *loadProgress) update(p workload.LoadProgress) {
	lp.mu.Lock()
	lp.cur, lp.at = p, time.Now()
	if _, seen := lp.active["nodes"]; !seen && p.NodesTotal > 0 {
		lp.active["nodes"] = true
	}
	lp.mu.Unlock()
	if lp.p != nil {
		if lp.bar == nil {
			left := func(decor.Statistics) string { l, _ := loadStatus(lp.snapshot()); return l }
			right := func(decor.Statistics) string { _, r := loadStatus(lp.snapshot()); return r }
			// Made with total 0 and given its total after: mpb then
			// leaves completing it to finish (SetTotal is a no-op on a
			// bar made with a total, which would never complete when the
			// load stops short of it or its total is an estimate).
			lp.bar = lp.p.New(0, mpb.BarStyle(),
				mpb.PrependDecorators(decor.Any(left)), mpb.AppendDecorators(decor.Any(right)))
			lp.bar.SetTotal(max(p.LinksTotal, 1), false)
		}
		lp.bar.SetCurrent(p.Links)
		return
	}
	if time.Since(lp.last) < lp.every {
		return
	}
	lp.last = time.Now()
	l, r := loadStatus(p)
	lp.log.Infof("%s", strings.TrimSpace(l+" "+r))
}

// stage logs the start and end of the load's stages.
func (lp *loadProgress) stage(ev workload.StageEvent) {
	s := ev.Stage
	lp.mu.Lock()
	lp.active[s.Name] = !ev.Done
	lp.mu.Unlock()
	switch {
	case !ev.Done && s.Rows > 0:
		lp.log.Infof("stage %s: started (%s rows)", s.Name, withCommas(s.Rows))
	case !ev.Done:
		lp.log.Infof("stage %s: started", s.Name)
	case s.Rows > 0 && s.Seconds() > 0:
		lp.log.Infof("stage %s: %s rows in %.1f s (%s rows/s)", s.Name, withCommas(s.Rows), s.Seconds(), withCommas(int64(s.RowsPerSec)))
	default:
		lp.log.Infof("stage %s: done in %.1f s", s.Name, s.Seconds())
	}
}

// live are the load's figures for the metrics exporter.
func (lp *loadProgress) live() stats.Live {
	return stats.Live{
		Progress: func() float64 {
			p := lp.snapshot()
			if p.LinksTotal <= 0 {
				return 0
			}
			return float64(p.Links) / float64(p.LinksTotal)
		},
		LoadStages: func() map[string]bool {
			lp.mu.Lock()
			defer lp.mu.Unlock()
			return maps.Clone(lp.active)
		},
		LoadRows: func() (int64, int64, int64) {
			p := lp.snapshot()
			return p.Nodes, p.Links, p.Counts
		},
	}
}

// loadStatus renders a load's progress as the text left and right of the
// bar: the elapsed time and the stage under way, then its figures.
func loadStatus(p workload.LoadProgress) (left, right string) {
	el := fmt.Sprintf("[%s]", clock(p.Elapsed))
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = float64(p.Links) / s
	}
	if !p.Finishing {
		pct := 100.0
		if p.LinksTotal > 0 {
			pct = 100 * float64(p.Links) / float64(p.LinksTotal)
		}
		left = fmt.Sprintf("%s inserting links %s/%s", el, short(p.Links), short(p.LinksTotal))
		right = fmt.Sprintf("%5.1f%% %s links/s", pct, short(int64(rate)))
		if p.NodesTotal > 0 {
			right += fmt.Sprintf(", nodes %s/%s", short(p.Nodes), short(p.NodesTotal))
		}
		if rate > 0 && p.Links < p.LinksTotal {
			eta := time.Duration(float64(p.LinksTotal-p.Links) / rate * float64(time.Second))
			right += ", inserts ETA " + clock(eta)
		}
		return left, right
	}
	if p.Stage == "" {
		return el + " finishing", ""
	}
	return fmt.Sprintf("%s %s %s", el, p.Stage, clock(p.StageElapsed)), stepStatus(p)
}

// stepStatus is how far a finishing step has got, with its ETA, when the
// store can tell; its rows otherwise. The inserts' figures, final by now,
// are not repeated.
func stepStatus(p workload.LoadProgress) string {
	s := p.Step
	if !p.StepKnown {
		if p.StageRows > 0 {
			return short(p.StageRows) + " rows"
		}
		return ""
	}
	approx := ""
	if s.Estimated {
		approx = "~"
	}
	var parts []string
	if s.Phase != "" {
		parts = append(parts, s.Phase)
	}
	if s.Total > 0 {
		parts = append(parts, fmt.Sprintf("%s%s/%s rows", approx, short(s.Done), short(s.Total)))
	}
	parts = append(parts, fmt.Sprintf("%s%.0f%%", approx, 100*s.Fraction))
	switch {
	case s.Fraction >= 0.01 && s.Fraction < 1:
		eta := time.Duration(float64(p.StageElapsed) * (1 - s.Fraction) / s.Fraction)
		parts = append(parts, "ETA "+approx+clock(eta))
	case s.Fraction < 0.01:
		parts = append(parts, "ETA unknown yet")
	}
	if s.Estimated {
		parts = append(parts, "estimated")
	}
	return strings.Join(parts, ", ")
}

// clock renders d as m:ss (or h:mm:ss).
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// short renders n with three significant digits and a k/M/G suffix.
func short(n int64) string {
	v := float64(n)
	for _, u := range []struct {
		div float64
		suf string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= u.div {
			x := v / u.div
			switch {
			case x >= 100:
				return fmt.Sprintf("%.0f%s", x, u.suf)
			case x >= 10:
				return fmt.Sprintf("%.1f%s", x, u.suf)
			}
			return fmt.Sprintf("%.2f%s", x, u.suf)
		}
	}
	return strconv.FormatInt(n, 10)
}

// withCommas renders n with thousands separators.
func withCommas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// finish ends the bar: complete at the rows written, or, for a load that
// stopped early (stopped), aborted where it stood. mpb's Wait returns once
// its bars are done; should it not within barWait, the bar is shut down,
// so the end of a load never waits on its drawing.
func (lp *loadProgress) finish(stopped bool) {
	if lp.p == nil {
		return
	}
	if lp.bar != nil {
		if stopped {
			lp.bar.Abort(false)
		} else {
			lp.bar.SetTotal(-1, true)
		}
	}
	done := make(chan struct{})
	go func() { lp.p.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(barWait):
		lp.p.Shutdown()
	}
	lp.log.redirect(nil)
}

// barWait bounds how long finish waits for the bar's last drawing (a few
// refreshes).
const barWait = 2 * time.Second

// requestProgress logs one compact line per progress interval (and the
// per-op block after it with --per-op).
func (a *app) requestProgress(e *env, p workload.Progress, total int64) {
	if p.Warmup {
		e.log.Infof("warming up for %s (not measured)", e.cfg.WarmupTime)
		return
	}
	if p.WarmupDone {
		e.log.Infof("warm-up done; measuring")
		return
	}
	line := progressLine(p, e.cfg.MaxTime, total)
	if a.opts.perOp {
		line += perOpBlock(p.Window)
	}
	e.log.Progressf("%s", line)
}

// progressLine is the one-line summary of a progress window, in the manner
// of sysbench's: elapsed (of the time limit), throughput, p50 and p99 over
// every op, errors and retries per second, reconnects; then the requests
// done of a request-limited run, the requesters still running when some
// have stopped, an open loop's backlog, and how far behind their pace
// requestrate requesters are when it is a second or more.
func progressLine(p workload.Progress, maxTime time.Duration, total int64) string {
	w := p.Window
	perSec := func(n int64) float64 {
		if w.Seconds <= 0 {
			return 0
		}
		return float64(n) / w.Seconds
	}
	var sb strings.Builder
	el := fmt.Sprintf("%ds", int64(p.Elapsed.Seconds()))
	if maxTime > 0 {
		el += fmt.Sprintf("/%ds", int64(maxTime.Seconds()))
	}
	fmt.Fprintf(&sb, "[%9s] %8.0f ops/s  p50 %7s ms  p99 %7s ms  err/s %6.1f  retry/s %6.1f  reconn %d",
		el, w.OpsPerSec, report.FormatMs(w.All.P50), report.FormatMs(w.All.P99), perSec(w.Errors), perSec(w.Retries), w.Reconnects)
	if total > 0 {
		fmt.Fprintf(&sb, "  done %.1f%%", 100*float64(p.Done)/float64(total))
	}
	if p.Backlog >= 1 {
		fmt.Fprintf(&sb, "  backlog %.0f", p.Backlog)
	}
	if p.Behind >= time.Second {
		fmt.Fprintf(&sb, "  behind %.1fs", p.Behind.Seconds())
	}
	return sb.String()
}

// perOpBlock is the per-op figures of a progress window, one line each.
func perOpBlock(w stats.Window) string {
	var sb strings.Builder
	for _, s := range w.Ops {
		if s.Name == "RANGE_SIZE" {
			continue
		}
		fmt.Fprintf(&sb, "\n    %-16s %8.0f ops/s  p50 %7s ms  p99 %7s ms", s.Name, s.OpsPerSec, report.FormatMs(s.P50), report.FormatMs(s.P99))
		if s.Errors > 0 {
			fmt.Fprintf(&sb, "  errors %d", s.Errors)
		}
	}
	return sb.String()
}
