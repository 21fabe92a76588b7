package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/linkbench/linkbench/internal/report"
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

// loadProgress shows a progress bar with ETA on a terminal, and a log line
// every progressfreq otherwise.
type loadProgress struct {
	log   *logger
	every time.Duration
	last  time.Time
	p     *mpb.Progress
	bar   *mpb.Bar
}

func newLoadProgress(w io.Writer, log *logger, every time.Duration) *loadProgress {
	lp := &loadProgress{log: log, every: every, last: time.Now()}
	if every <= 0 {
		lp.every = 10 * time.Second
	}
	if isTerminal(w) {
		lp.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond))
	}
	return lp
}

func (lp *loadProgress) update(p workload.LoadProgress) {
	if lp.p != nil {
		if lp.bar == nil {
			lp.bar = lp.p.New(max(p.LinksTotal, 1), mpb.BarStyle(),
				mpb.PrependDecorators(decor.Name("links "), decor.CountersNoUnit("%d / %d")),
				mpb.AppendDecorators(decor.Percentage(decor.WC{W: 5}), decor.Name("  ETA "), decor.AverageETA(decor.ET_STYLE_GO)))
		}
		lp.bar.SetCurrent(p.Links)
		return
	}
	if time.Since(lp.last) < lp.every && p.Links < p.LinksTotal {
		return
	}
	lp.last = time.Now()
	pct := 0.0
	if p.LinksTotal > 0 {
		pct = 100 * float64(p.Links) / float64(p.LinksTotal)
	}
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = float64(p.Links) / s
	}
	lp.log.Infof("%d/%d links loaded (%.1f%%) at %.0f links/s, %d/%d nodes, %d counts, %s elapsed",
		p.Links, p.LinksTotal, pct, rate, p.Nodes, p.NodesTotal, p.Counts, p.Elapsed.Truncate(time.Second))
}

func (lp *loadProgress) finish() {
	if lp.p != nil {
		if lp.bar != nil {
			lp.bar.SetTotal(-1, true)
		}
		lp.p.Wait()
	}
}

// requestProgress prints the reference's progress line plus per-op p50/p99
// and errors of the last period.
func (a *app) requestProgress(e *env, p workload.Progress, total int64) {
	cfg := e.cfg
	if p.Warmup {
		e.log.Infof("warming up for %s (not measured)", cfg.WarmupTime)
		return
	}
	var sb strings.Builder
	if total > 0 {
		fmt.Fprintf(&sb, "%d/%d requests finished: %.1f%% complete at %.0f ops/sec %d/%d secs elapsed: %.1f%% of time limit used",
			p.Done, total, 100*float64(p.Done)/float64(total), p.Interval.OpsPerSec,
			int64(p.Elapsed.Seconds()), int64(cfg.MaxTime.Seconds()), 100*p.Elapsed.Seconds()/cfg.MaxTime.Seconds())
	} else {
		fmt.Fprintf(&sb, "%d requests finished at %.0f ops/sec %d/%d secs elapsed: %.1f%% of time limit used",
			p.Done, p.Interval.OpsPerSec, int64(p.Elapsed.Seconds()), int64(cfg.MaxTime.Seconds()), 100*p.Elapsed.Seconds()/cfg.MaxTime.Seconds())
	}
	if p.Interval.Errors > 0 {
		fmt.Fprintf(&sb, " errors = %d", p.Interval.Errors)
	}
	if p.Backlog >= 1 {
		fmt.Fprintf(&sb, " backlog = %.0f requests behind the arrival schedule", p.Backlog)
	}
	for _, s := range p.Interval.Ops {
		if s.Name == "RANGE_SIZE" {
			continue
		}
		fmt.Fprintf(&sb, "\n    %-15s p50 %sms p99 %sms", s.Name, report.FormatMs(s.P50), report.FormatMs(s.P99))
		if s.Errors > 0 {
			fmt.Fprintf(&sb, " errors %d", s.Errors)
		}
	}
	e.log.Infof("%s", sb.String())
}
