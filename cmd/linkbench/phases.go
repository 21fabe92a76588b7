package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/run"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/workload"
)

// runPhases runs the load and/or request phase in one process.
func (a *app) runPhases(ctx context.Context, doLoad, doRequest bool) error {
	e, closeLog, err := a.prepare()
	if err != nil {
		return err
	}
	defer closeLog()
	cfg := e.cfg
	// The store is sized for the phases that run: a run alone needs no
	// loaders (and a store may choose how it waits from the count).
	conc, noun, value := 0, "loaders", cfg.Loaders
	if doLoad {
		conc = cfg.Loaders + 1
	}
	if doRequest && cfg.Requesters > conc {
		conc, noun, value = cfg.Requesters, "requesters", cfg.Requesters
	}
	conc = max(conc, 1)
	// A request phase alone: its requesters each wait for one answer at a
	// time (store.Options.Requests), which a store may size its pools and
	// choose how its connections wait by; never what it sends.
	requests := doRequest && !doLoad
	mode, command := store.LockRun, "run"
	if doLoad {
		mode, command = store.LockLoad, "load"
		if _, n, _ := parseShard(a.opts.shard); n > 1 {
			mode, command = store.LockShardLoad, "load --shard "+a.opts.shard
		}
	}
	st, disconnect, err := a.connect(ctx, e, conc, requests, noun, value, mode, command)
	if err != nil {
		return err
	}
	defer disconnect()
	e.log.Infof("store %s, graph ids [%d, %d), %d link types", e.drv.Name, cfg.StartID1, cfg.MaxID1, cfg.LinkTypeCount)
	logStoreSettings(ctx, e, st)
	if doLoad {
		if err := a.load(ctx, e, st); err != nil {
			return err
		}
	}
	if doRequest && ctx.Err() == nil {
		if err := a.request(ctx, e, st); err != nil {
			return err
		}
	}
	return nil
}

// prepareProgress logs the load's count of the links to write (a pass
// over every id, minutes for the largest graphs) every progressfreq.
func prepareProgress(e *env) func(done, total int64) {
	var last time.Time
	return func(done, total int64) {
		if time.Since(last) < max(e.cfg.ProgressFreq, time.Second) {
			return
		}
		last = time.Now()
		e.log.Infof("counting the links to load: %d of %d ids (%.1f%%); Ctrl-C stops", done, total, 100*float64(done)/float64(max(total, 1)))
	}
}

// load runs the load phase: internal/run makes its checks and decisions
// and records its metadata; this draws its progress and writes its results.
func (a *app) load(ctx context.Context, e *env, st store.Store) error {
	// The store calls of a load that may rightly take long (EndLoad's
	// index build, TRUNCATE) have no deadline: a ping tells a hung server
	// from a busy one. sig is the command's context (Ctrl-C).
	sig := ctx
	ctx, stopWatch := store.WatchAlive(ctx, st, e.cfg.OpTimeout)
	defer stopWatch()
	shard, nShards, err := parseShard(a.opts.shard)
	if err != nil {
		return err
	}
	l, err := run.PrepareLoad(ctx, e.spec(st), run.LoadOptions{Truncate: a.opts.truncate, Resume: a.opts.resume, ResumeAuto: a.opts.resumeAuto,
		Shard: shard, Shards: nShards, Finish: a.opts.finish, NoFinish: a.opts.noFinish})
	if err != nil {
		return err
	}
	if l.Nothing != "" {
		a.println(e, l.Nothing)
		return nil
	}
	prog := newLoadProgress(a.stderr, e.log, e.progressEvery)
	hook := a.phaseHook("load")
	var progress loadRecorder
	lp := l.Phase()
	lp.OnStage = prog.stage
	lp.OnProgress = progress.wrap(func(p workload.LoadProgress) { prog.update(p); hook() })
	if a.exp != nil {
		lp.OnCollector = func(c *stats.Collector) { a.exp.BeginPhase("load", c, prog.live()) }
		defer a.exp.EndPhase()
	}
	lp.OnPrepare = prepareProgress(e)
	sizeBefore := sizeWithin(ctx, st)
	mon := e.monitor(ctx, st, 0)
	started := time.Now()
	res, err := lp.Run(ctx)
	usage, samples := mon.Stop()
	prog.finish()
	if err != nil {
		lerr, hung := l.Failure(sig, ctx, err)
		e.hung = e.hung || hung
		if errors.Is(lerr, run.ErrInterrupted) {
			lerr = &exitError{code: 130, err: lerr}
		}
		if res != nil {
			// What was written is reported and kept, as for a run.
			out := loadOutput{res: res, started: started, usage: usage, samples: samples, sizeBefore: sizeBefore, interrupted: true}
			if werr := a.loadResults(context.WithoutCancel(sig), e, st, out, !e.hung); werr != nil {
				e.log.Warnf("%v", werr)
			}
		}
		return lerr
	}
	if err := l.Finish(ctx); err != nil {
		return err
	}
	return a.loadResults(ctx, e, st, loadOutput{res: res, started: started, usage: usage, samples: samples, sizeBefore: sizeBefore, progress: progress.points}, true)
}

// request runs the request phase (with loops = N: N consecutive windows
// of maxtime after one warm-up, each with its own figures and summary line).
func (a *app) request(ctx context.Context, e *env, st store.Store) error {
	if e.cfg.Requesters == 0 {
		a.println(e, "NO REQUEST PHASE CONFIGURED.")
		return nil
	}
	// A server that stops answering before the phase ends these checks
	// (the phase has deadlines of its own).
	wctx, stopWatch := store.WatchAlive(ctx, st, e.cfg.OpTimeout)
	err := run.CheckSchema(wctx, st)
	if err == nil {
		err = a.checkGraph(wctx, e, st, "run")
	}
	stopWatch()
	if err != nil {
		return err
	}
	_, err = a.requestOnce(ctx, e, st)
	return err
}

// requestOnce runs one request phase and returns its results (also
// written as a bundle).
func (a *app) requestOnce(ctx context.Context, e *env, st store.Store) (*report.Results, error) {
	if e.where == nil {
		e.where = locateData(ctx, e, st)
	}
	shard, _, err := parseShard(a.opts.shard)
	if err != nil {
		return nil, err
	}
	req, err := run.PrepareRequest(ctx, e.spec(st), shard, e.progressEvery)
	if err != nil {
		return nil, err
	}
	// The phase's own settings (maxtime of every loop) for its output.
	pe := *e
	pe.cfg = req.Spec.Config
	rp := req.Phase
	var stream *report.StreamWriter
	if a.opts.csvStream != "" {
		f, err := os.Create(a.opts.csvStream)
		if err != nil {
			return nil, fmt.Errorf("-csvstream: %w", err)
		}
		defer f.Close()
		if stream, err = report.NewStreamWriter(f); err != nil {
			return nil, fmt.Errorf("-csvstream: %w", err)
		}
	}
	total := int64(pe.cfg.Requesters) * pe.cfg.Requests
	hook := a.phaseHook("request")
	rp.OnProgress = func(p workload.Progress) {
		a.requestProgress(&pe, p, total)
		hook()
	}
	if a.exp != nil {
		rp.OnCollector = func(c *stats.Collector) { a.exp.BeginPhase("request", c, requestLive(pe.cfg, rp)) }
		defer a.exp.EndPhase()
	}
	var streamErr error
	rp.OnInterval = func(iv stats.Interval) {
		if stream != nil && streamErr == nil {
			streamErr = stream.Write(iv)
		}
	}
	out := requestOutput{sizeBefore: sizeWithin(ctx, st)}
	out.mon = pe.monitor(ctx, st, pe.cfg.WarmupTime) // the warm-up is not measured
	out.loops = trackLoops(ctx, &pe, st, rp, out.mon, req.Loop)
	out.started = time.Now()
	res, runErr := rp.Run(ctx)
	out.loops.finish(res != nil && (len(res.HardEnd) > 0 || res.Abandoned > 0))
	out.usage, out.samples = out.mon.Stop()
	if res == nil {
		return nil, runErr
	}
	if streamErr != nil {
		e.log.Warnf("-csvstream: %v", streamErr)
	}
	r, err := a.requestResults(ctx, &pe, st, res, out)
	e.hung = e.hung || pe.hung
	if err != nil {
		return r, err
	}
	if verr := req.Verdict(res, runErr); verr != nil && verr != runErr {
		return r, &exitError{code: 1, err: verr}
	}
	return r, runErr
}

// checkGraph compares the store's graph with the configuration before
// command works on it (run.CheckGraph): the env takes the parameters
// adopted from the graph, the results the outcome; a graph that does not
// match exits 1.
func (a *app) checkGraph(ctx context.Context, e *env, st store.Store, command string) error {
	s, rec, err := run.CheckGraph(ctx, e.spec(st), command, a.opts.ignoreGraph)
	if rec != nil {
		a.graphCheck = rec
	}
	e.cfg = s.Config
	var ge *run.GraphError
	if errors.As(err, &ge) {
		return &exitError{code: 1, err: ge.Err}
	}
	return err
}
