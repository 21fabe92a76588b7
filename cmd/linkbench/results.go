package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/secret"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/sysmon"
	"github.com/linkbench/linkbench/internal/workload"
)

// checkResultsDir fails early, before anything is written to the store,
// when the results directory or an output file (--csvstats, --csvstream)
// cannot be written: finding out after an hour-long run would lose it.
func (a *app) checkResultsDir(e *env) error {
	for _, f := range []struct{ flag, path string }{{"--csvstats", a.opts.csvStats}, {"--csvstream", a.opts.csvStream}} {
		if err := checkOutputFile(f.flag, f.path); err != nil {
			return err
		}
	}
	if a.opts.noResults {
		return nil
	}
	// The directory is made when the first bundle is written: a command
	// refused before then leaves no empty results directory behind. Until
	// then it is enough that its nearest existing ancestor is a writable
	// directory.
	dir := a.resultsDir(e)
	have := filepath.Clean(dir)
	for {
		fi, err := os.Stat(have)
		if err == nil && !fi.IsDir() {
			return fmt.Errorf("results_dir %s cannot be created (%s is not a directory); set --results-dir or results_dir to a writable directory, or use --no-results", dir, have)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(have) == have {
			return fmt.Errorf("results_dir %s cannot be created (%v); set --results-dir or results_dir to a writable directory, or use --no-results", dir, errors.Unwrap(err))
		}
		have = filepath.Dir(have)
	}
	f, err := os.CreateTemp(have, ".write-test-")
	if err != nil {
		what := "is not writable"
		if have != filepath.Clean(dir) {
			what = "cannot be created"
		}
		return fmt.Errorf("results_dir %s %s (%v); set --results-dir or results_dir to a writable directory, or use --no-results", dir, what, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// checkOutputFile checks that path can be written, leaving no file behind
// that was not there.
func checkOutputFile(flag, path string) error {
	if path == "" {
		return nil
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		dir := filepath.Dir(path)
		if fi, derr := os.Stat(dir); derr != nil || !fi.IsDir() {
			return fmt.Errorf("%s %s: the directory %s does not exist; create it or give another path", flag, path, dir)
		}
		return fmt.Errorf("%s %s cannot be written (%v); give another path", flag, path, errors.Unwrap(err))
	}
	f.Close()
	if statErr != nil {
		os.Remove(path)
	}
	return nil
}

func (a *app) resultsDir(e *env) string {
	if a.opts.resultsDir != "" {
		return a.opts.resultsDir
	}
	return e.cfg.ResultsDir
}

// loadOutput is what a load measured, for loadResults.
type loadOutput struct {
	res         *workload.LoadResult
	started     time.Time
	usage       sysmon.Usage
	samples     []sysmon.Sample
	sizeBefore  int64
	progress    []report.LoadPoint
	interrupted bool
	// whole, for a resumed load, is what the whole load wrote, this run
	// and the interrupted one(s).
	whole *loadRows
}

// loadRows are the rows of a load; exact is false when the links are an
// estimate (graphs above 2^24 ids).
type loadRows struct {
	nodes, links, counts int64
	exact                bool
}

// resumedLoadLine is the completion line of a resumed load: the whole
// load's rows (the reference's figures of a complete load), then what this
// run wrote and its rate.
func resumedLoadLine(w loadRows, res *workload.LoadResult) string {
	perNode := func(n int64) float64 { return float64(n) / float64(max(w.nodes, 1)) }
	links := strconv.FormatInt(w.links, 10)
	if !w.exact {
		links = "about " + links
	}
	return fmt.Sprintf("LOAD PHASE COMPLETED (resumed). Loaded %d nodes (Expected %d), %s links (%.2f /node), %d counts (%.2f /node) in all; this run wrote %d nodes, %d links and %d counts in %.1f seconds, %d Links/s, the interrupted run the rest",
		w.nodes, w.nodes, links, perNode(w.links), w.counts, perNode(w.counts), res.Nodes, res.Links, res.Counts, res.Elapsed.Seconds(), int64(perSec(res.Links, res.Elapsed)+0.5))
}

// loadResults prints the load's summary line and per-op lines and writes
// --csvstats and the results bundle; a failure to write one of them does
// not keep the others from being written.
func (a *app) loadResults(ctx context.Context, e *env, st store.Store, o loadOutput, storeOK bool) error {
	cfg, res := e.cfg, o.res
	line := report.LoadLine(res.Nodes, res.ExpectedNodes, res.Links, res.Counts, res.Elapsed, cfg.NeverChange)
	if o.whole != nil {
		line = resumedLoadLine(*o.whole, res)
	}
	if o.interrupted {
		line = strings.Replace(line, "COMPLETED", "INTERRUPTED", 1)
	}
	a.printResults(e, res.Summary, cfg.Loaders+1, func(sb *strings.Builder) {
		report.WriteStageTable(sb, res.Stages, res.InsertElapsed.Seconds(), res.FinishElapsed.Seconds())
		sb.WriteString("\n")
	}, line)
	csvErr := a.writeCSVStats(res.Summary, cfg.Loaders+1)
	r := a.baseResults(ctx, e, st, "load", o.started, res.Elapsed, storeOK)
	r.Interrupted = o.interrupted
	r.Totals = report.Totals{Nodes: res.Nodes, Links: res.Links, Counts: res.Counts, LinksPerSec: perSec(res.Links, res.Elapsed),
		InsertSec: res.InsertElapsed.Seconds(), FinishSec: res.FinishElapsed.Seconds()}
	r.Ops = res.Summary
	r.LoadStages = res.Stages
	a.addUsage(e, r, o.usage, o.samples, res.Links, "link", o.sizeBefore)
	r.Intervals = res.Collector.Series()
	r.LoadProgress = o.progress
	a.loadLine(e, r)
	return errors.Join(csvErr, a.writeBundle(e, r, res.Collector))
}

// addUsage records resource use in the results and logs the per-op figures.
func (a *app) addUsage(e *env, r *report.Results, u sysmon.Usage, samples []sysmon.Sample, n int64, unit string, sizeBefore int64) {
	if !u.Available {
		return
	}
	per := u.PerOp(n)
	r.Usage, r.Efficiency, r.Resources, r.SizeBefore = &u, &per, samples, sizeBefore
	e.log.Infof("per %s: driver CPU %.2f µs, machine CPU %.2f µs, %.3f KB written, %.4f disk reads (over %.1f s)",
		unit, per.DriverCPUUs, per.MachineCPUUs, per.WriteKB, per.Reads, u.Seconds)
}

// threadsOf is the reference's "threads" column: loaders plus the node
// loader, or requesters.
func threadsOf(e *env, phase string) int {
	if phase == "load" {
		return e.cfg.Loaders + 1
	}
	return e.cfg.Requesters
}

func perSec(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func (a *app) println(e *env, s string) { a.print(e, s+"\n") }

// printResults prints a phase's final results once: what before writes
// (if any), the per-op table and the completion line scripts parse. The
// reference's per-op lines ("OP count = N  p25 = ...", wider than a
// terminal) go to the -L log file only, beside -csvstats and the bundle.
func (a *app) printResults(e *env, ops []stats.OpSummary, threads int, before func(*strings.Builder), completed string) {
	var sb strings.Builder
	if before != nil {
		before(&sb)
	}
	report.WriteTable(&sb, ops)
	sb.WriteString(completed + "\n")
	if !e.quiet {
		fmt.Fprint(a.stdout, sb.String())
	}
	var ref strings.Builder
	report.WriteOpLines(&ref, ops, threads)
	e.log.toFile(ref.String() + sb.String())
}

func (a *app) print(e *env, s string) {
	if !e.quiet {
		fmt.Fprint(a.stdout, s)
	}
	e.log.toFile(s)
}

func (a *app) writeCSVStats(ops []stats.OpSummary, threads int) error {
	if a.opts.csvStats == "" {
		return nil
	}
	f, err := os.Create(a.opts.csvStats)
	if err != nil {
		return fmt.Errorf("-csvstats: %w", err)
	}
	if err := report.WriteCSVStats(f, ops, threads); err != nil {
		f.Close()
		return fmt.Errorf("-csvstats: %w", err)
	}
	return f.Close()
}

// baseResults fills the parts of the results common to both phases. When
// the store does not answer (storeOK false) its version and settings are
// those read before the phase and its size is left out.
func (a *app) baseResults(ctx context.Context, e *env, st store.Store, phase string, started time.Time, elapsed time.Duration, storeOK bool) *report.Results {
	r := &report.Results{
		SchemaVersion: report.SchemaVersion, Phase: phase, ToolVersion: toolVersion(),
		StartedAt: started, ElapsedSec: elapsed.Seconds(), Store: e.drv.Name,
		Environment: report.CurrentEnvironment(),
	}
	if phase == "request" {
		r.GraphCheck = a.graphCheck
	}
	b := report.ReadBuild(toolVersion())
	r.Environment.Build = &b
	r.Environment.CommandLine = append([]string{"linkbench"}, report.RedactArgs(a.args)...)
	if dp, ok := st.(store.DataPather); ok {
		fs := report.FileSystemOf(dp.DataPath())
		r.Environment.DataFS = &fs
	}
	for _, en := range e.cfg.Props.Entries() {
		r.Config = append(r.Config, report.ConfigEntry{Key: en.Key, Value: a.scrub.String(secret.Redact(en.Key, en.Value)), Origin: en.OriginText()})
	}
	// After Ctrl-C ctx is cancelled, but the results of what ran still
	// name the server and its settings: ask with a context of its own.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	desc := e.desc
	if d, ok := st.(store.Describer); ok && storeOK {
		if dd, err := d.Describe(bctx); err == nil {
			desc = &dd
		}
	}
	if desc != nil {
		r.StoreVersion, r.StoreSettings = a.scrub.String(desc.Version), map[string]string{}
		for k, v := range desc.Settings {
			r.StoreSettings[k] = a.scrub.String(v)
		}
	}
	if s, ok := st.(store.Sizer); ok && storeOK {
		if n, err := s.SizeOnDisk(bctx); err == nil {
			r.SizeOnDisk = n
		}
	}
	return r
}

func (a *app) writeBundle(e *env, r *report.Results, c *stats.Collector) error {
	if a.opts.noResults {
		return nil
	}
	hists := c.Histograms()
	r.Curves = report.PercentileCurves(hists)
	// The CSV files go into the bundle too, in the reference's formats.
	var statsCSV, intervalsCSV bytes.Buffer
	if err := report.WriteCSVStats(&statsCSV, r.Ops, threadsOf(e, r.Phase)); err != nil {
		return err
	}
	sw, err := report.NewStreamWriter(&intervalsCSV)
	if err != nil {
		return err
	}
	for _, iv := range r.Intervals {
		if err := sw.Write(iv); err != nil {
			return err
		}
	}
	dir, err := report.WriteBundle(a.resultsDir(e), r, hists, map[string][]byte{"stats.csv": statsCSV.Bytes(), "intervals.csv": intervalsCSV.Bytes()})
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	a.lastBundle = dir
	e.log.Infof("results written to %s", dir)
	return nil
}
