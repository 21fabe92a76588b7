package main

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/workload"
)

// startMetrics serves --metrics-addr for the whole command, every phase
// of it; the returned function stops it.
func (a *app) startMetrics(e *env) (stop func(), err error) {
	if a.opts.metrics == "" {
		return func() {}, nil
	}
	if !stats.IsLoopback(a.opts.metrics) {
		e.log.Warnf("--metrics-addr %s is not a loopback address: the metrics (store, settings, figures) can be read from other machines; use 127.0.0.1:PORT to keep them on this one", a.opts.metrics)
	}
	exp := stats.NewExporter(toolVersion(), buildRevision())
	if err := exp.Serve(a.opts.metrics); err != nil {
		return nil, err
	}
	e.log.Infof("live metrics at http://%s/metrics", exp.Addr())
	a.exp = exp
	return func() {
		exp.Close()
		a.exp = nil
	}, nil
}

// buildRevision is the VCS revision the binary was built from ("" when
// unknown).
func buildRevision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return ""
}

// phaseHook returns the function the phase calls at each progress report:
// the first call runs the test hook, if any.
func (a *app) phaseHook(phase string) func() {
	if a.onPhase == nil {
		return func() {}
	}
	var once sync.Once
	return func() { once.Do(func() { a.onPhase(phase) }) }
}

// requestLive are the request phase's figures read at each scrape.
func requestLive(cfg *config.Config, rp *workload.RequestPhase) stats.Live {
	start := time.Now().Add(cfg.WarmupTime)
	l := stats.Live{
		Requesters: rp.Running,
		Progress: func() float64 {
			if cfg.MaxTime <= 0 {
				return 0
			}
			return time.Since(start).Seconds() / cfg.MaxTime.Seconds()
		},
	}
	if sched := rp.Schedule; sched != nil {
		l.ScheduleLag = func() float64 { return sched.Lag(time.Now()).Seconds() }
		l.Backlog = func() float64 { return sched.Backlog(time.Now()) }
	} else if cfg.RequestRate > 0 {
		l.ScheduleLag = func() float64 { return rp.PaceBehind().Seconds() }
	}
	return l
}
