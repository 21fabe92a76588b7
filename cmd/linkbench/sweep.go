package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/run"
	"github.com/linkbench/linkbench/internal/store"
)

// parseRates reads --rates "100,200,...".
func parseRates(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || v > 1e9 {
			return nil, fmt.Errorf("--rates %q: expected positive requests/s separated by commas, e.g. 500,1000,2000", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// sweep runs the request phase at increasing arrival rates.
func (a *app) sweep(ctx context.Context) error {
	e, closeLog, err := a.prepare()
	if err != nil {
		return err
	}
	defer closeLog()
	if a.opts.pointTime <= 0 || a.opts.points < 1 {
		return errors.New("--point-time and --points must be positive")
	}
	// Every point and the calibration are a phase of --point-time: all
	// of them together are bounded as one phase's length is.
	if n := float64(a.opts.points + 3); a.opts.points > 1000 || a.opts.pointTime*n > config.MaxDuration.Seconds() {
		return fmt.Errorf("--points %d of --point-time %g s: expected at most 1000 points lasting at most a year together (%.0f s; see docs/reliability.md)",
			a.opts.points, a.opts.pointTime, config.MaxDuration.Seconds())
	}
	conc := max(e.cfg.Requesters, 1)
	if err := e.checkFiles(conc, "requesters", e.cfg.Requesters); err != nil {
		return err
	}
	// Every point, the calibration too, is a request phase alone: one
	// store serves them all (store.Options.Requests), paced but for the
	// calibration.
	st, release, err := e.attach(ctx, conc, true, store.LockRun, "sweep")
	if err != nil {
		return err
	}
	defer release()
	stopMetrics, err := a.startMetrics(e)
	if err != nil {
		return err
	}
	defer stopMetrics()
	// A server that stops answering before the first point ends these
	// checks (each point has deadlines of its own).
	wctx, stopWatch := store.WatchAlive(ctx, st, e.cfg.OpTimeout)
	err = run.CheckSchema(wctx, st)
	if err == nil {
		err = a.checkGraph(wctx, e, st, "sweep")
	}
	stopWatch()
	if err != nil {
		return err
	}
	pointTime := time.Duration(a.opts.pointTime * float64(time.Second))
	sw := &report.Sweep{SchemaVersion: report.SchemaVersion, Store: e.drv.Name, PointSec: a.opts.pointTime}
	if e.where == nil {
		e.where = locateData(ctx, e, st)
	}
	// Each point runs with a derived copy of the configuration: its rate
	// and length, which its results record.
	point := func(why string, rate float64) (*report.Results, error) {
		cfg, err := e.cfg.Derive(why, map[string]string{"requests": "0", "stages": "", "loops": "1",
			"maxtime":      strconv.FormatFloat(a.opts.pointTime, 'f', -1, 64),
			"arrival_rate": strconv.FormatFloat(rate, 'f', -1, 64)})
		if err != nil {
			return nil, err
		}
		pe := *e
		pe.cfg = cfg
		r, err := a.requestOnce(ctx, &pe, st)
		e.hung = e.hung || pe.hung
		return r, err
	}
	var rates []float64
	if a.opts.rates != "" {
		if rates, err = parseRates(a.opts.rates); err != nil {
			return err
		}
	} else {
		e.log.Infof("sweep: measuring the saturation throughput with a closed-loop run of %s", pointTime)
		r, err := point("sweep calibration", 0)
		if err != nil {
			return err
		}
		sw.Saturation = r.Totals.OpsPerSec
		for i := 1; i <= a.opts.points; i++ {
			rates = append(rates, sw.Saturation*float64(i)/float64(a.opts.points))
		}
		// Two points past saturation show where the curve flattens and
		// latency takes off.
		rates = append(rates, 1.1*sw.Saturation, 1.25*sw.Saturation)
	}
	for i, rate := range rates {
		if ctx.Err() != nil {
			break
		}
		e.log.Infof("sweep point %d of %d: %.0f requests/s offered", i+1, len(rates), rate)
		r, err := point(fmt.Sprintf("sweep point %d of %d", i+1, len(rates)), rate)
		if r != nil {
			sw.Points = append(sw.Points, report.SweepPoint{OfferedRate: rate, AchievedRate: r.Totals.OpsPerSec, Errors: r.Totals.Errors, Ops: r.Ops, AllOps: r.AllOps, Bundle: a.lastBundle})
		}
		if err != nil {
			return err
		}
	}
	dir, err := a.writeSweep(e, sw)
	if err != nil {
		return err
	}
	var tb strings.Builder
	fmt.Fprintf(&tb, "SWEEP COMPLETED. %d points.\n%12s %12s %8s\n", len(sw.Points), "offered/s", "achieved/s", "errors")
	for _, p := range sw.Points {
		fmt.Fprintf(&tb, "%12.0f %12.0f %8d\n", p.OfferedRate, p.AchievedRate, p.Errors)
	}
	a.print(e, tb.String())
	for _, w := range report.SweepWarnings(sw) {
		e.log.Warnf("%s", w)
	}
	e.log.Infof("sweep report written to %s", filepath.Join(dir, "report.html"))
	return nil
}

// writeSweep writes sweep.json and report.html into a new bundle directory.
func (a *app) writeSweep(e *env, sw *report.Sweep) (string, error) {
	parent := a.resultsDir(e)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("results_dir %s: %w", parent, err)
	}
	name := time.Now().Format("20060102-150405") + "-sweep"
	tmp, err := os.MkdirTemp(parent, ".tmp-"+name+"-")
	if err != nil {
		return "", fmt.Errorf("results_dir %s: %w", parent, err)
	}
	defer os.RemoveAll(tmp)
	b, err := json.MarshalIndent(sw, "", "  ")
	if err != nil {
		return "", err
	}
	var page bytes.Buffer
	if err := report.WriteSweepHTML(&page, sw); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "sweep.json"), append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "report.html"), page.Bytes(), 0o644); err != nil {
		return "", err
	}
	os.Chmod(tmp, 0o755)
	final := filepath.Join(parent, name)
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	return final, nil
}
