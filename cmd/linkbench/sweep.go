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
	if err := a.checkDataExists(e, "sweep"); err != nil {
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
	// and length, which its results record. A point prints one line (its
	// tables and info lines go to the -L file and its bundle) and at most
	// one line of warnings.
	point := func(name string, rate float64) (*report.SweepPoint, error) {
		cfg, err := e.cfg.Derive(name, map[string]string{"requests": "0", "stages": "", "loops": "1",
			"maxtime":      strconv.FormatFloat(a.opts.pointTime, 'f', -1, 64),
			"arrival_rate": strconv.FormatFloat(rate, 'f', -1, 64)})
		if err != nil {
			return nil, err
		}
		var notes []string
		pe := *e
		pe.cfg, pe.log, pe.quiet, pe.notes = cfg, e.log.quieted(), true, &notes
		a.lastBundle = ""
		r, err := a.requestOnce(ctx, &pe, st)
		e.hung = e.hung || pe.hung
		if r == nil {
			return nil, err
		}
		p := &report.SweepPoint{OfferedRate: rate, AchievedRate: r.Totals.OpsPerSec, Errors: r.Totals.Errors, Ops: r.Ops, AllOps: r.AllOps, Bundle: a.lastBundle, Warnings: notes}
		if w := report.SamplesWarning(*p); w != "" {
			p.Warnings = append(p.Warnings, w)
		}
		a.println(e, pointLine(name, p))
		if len(p.Warnings) > 0 {
			e.log.Warnf("%s: %s", name, strings.Join(p.Warnings, "; "))
		}
		return p, err
	}
	var rates []float64
	if a.opts.rates != "" {
		if rates, err = parseRates(a.opts.rates); err != nil {
			return err
		}
	} else {
		e.log.Infof("sweep: measuring the saturation throughput with a closed-loop run of %s", pointTime)
		p, err := point("sweep calibration", 0)
		if err != nil {
			return err
		}
		sw.Saturation = p.AchievedRate
		for i := 1; i <= a.opts.points; i++ {
			rates = append(rates, sw.Saturation*float64(i)/float64(a.opts.points))
		}
		// Two points past saturation show where the curve flattens and
		// latency takes off.
		rates = append(rates, 1.1*sw.Saturation, 1.25*sw.Saturation)
	}
	var pointErr error
	for i, rate := range rates {
		if ctx.Err() != nil {
			break
		}
		e.log.Infof("sweep point %d of %d: %.0f requests/s offered", i+1, len(rates), rate)
		p, err := point(fmt.Sprintf("sweep point %d of %d", i+1, len(rates)), rate)
		if p != nil {
			sw.Points = append(sw.Points, *p)
		}
		if err != nil {
			// The points measured so far are kept in the sweep's bundle.
			pointErr = err
			break
		}
	}
	dir, err := a.writeSweep(e, sw)
	if err != nil {
		return errors.Join(pointErr, err)
	}
	state := "COMPLETED"
	switch {
	case ctx.Err() != nil:
		state = "INTERRUPTED"
	case pointErr != nil:
		state = "STOPPED"
	}
	a.print(e, sweepTable(sw, state))
	e.log.Infof("sweep report written to %s", filepath.Join(dir, "report.html"))
	return pointErr
}

// pointLine is a sweep point's one line: its rates and the latency of all
// its requests.
func pointLine(name string, p *report.SweepPoint) string {
	line := fmt.Sprintf("%s: ", name)
	if p.OfferedRate > 0 {
		line += fmt.Sprintf("%.0f requests/s offered, ", p.OfferedRate)
	}
	line += fmt.Sprintf("%.0f achieved", p.AchievedRate)
	if a := p.AllOps; a != nil {
		line += fmt.Sprintf(", p50 %s ms, p99 %s ms", report.FormatMs(a.P50), report.FormatMs(a.P99))
	}
	return line + fmt.Sprintf(", %d errors", p.Errors)
}

// sweepTable is the sweep's final table: each point's offered and achieved
// rate, the p50 and p99 latency of all its requests, its errors and what
// it warned of.
func sweepTable(sw *report.Sweep, state string) string {
	var tb strings.Builder
	points := "points"
	if len(sw.Points) == 1 {
		points = "point"
	}
	fmt.Fprintf(&tb, "SWEEP %s. %d %s. %s s each", state, len(sw.Points), points, strconv.FormatFloat(sw.PointSec, 'f', -1, 64))
	if sw.Saturation > 0 {
		fmt.Fprintf(&tb, "; closed-loop saturation %.0f requests/s", sw.Saturation)
	}
	fmt.Fprintf(&tb, ".\n%5s %12s %12s %10s %10s %8s  %s\n", "point", "offered/s", "achieved/s", "p50 ms", "p99 ms", "errors", "warnings")
	for i, p := range sw.Points {
		p50, p99 := "-", "-"
		if a := p.AllOps; a != nil {
			p50, p99 = report.FormatMs(a.P50), report.FormatMs(a.P99)
		}
		fmt.Fprintf(&tb, "%5d %12.0f %12.0f %10s %10s %8d  %s\n", i+1, p.OfferedRate, p.AchievedRate, p50, p99, p.Errors, warningTags(p.Warnings))
	}
	return tb.String()
}

// warningTags names a point's warnings in a word or two each.
func warningTags(warnings []string) string {
	var tags []string
	for _, w := range warnings {
		switch {
		case strings.HasPrefix(w, "the store fell behind the arrival schedule"):
			tags = append(tags, "fell behind")
		case strings.HasPrefix(w, "too few samples"):
			tags = append(tags, "few samples")
		case strings.HasPrefix(w, "interrupted"):
			tags = append(tags, "interrupted")
		case strings.Contains(w, "abandoned") || strings.Contains(w, "left behind"):
			tags = append(tags, "timeouts")
		default:
			tags = append(tags, "see its warning")
		}
	}
	return strings.Join(tags, ", ")
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
