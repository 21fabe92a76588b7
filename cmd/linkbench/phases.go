package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/secret"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/sysmon"
	"github.com/linkbench/linkbench/internal/workload"
)

// runPhases runs the load and/or request phase in one process.
func (a *app) runPhases(ctx context.Context, doLoad, doRequest bool) error {
	e, err := a.setup()
	if err != nil {
		return err
	}
	defer e.log.close()
	if err := a.checkResultsDir(e); err != nil {
		return err
	}
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
	if err := e.checkFiles(conc, noun, value); err != nil {
		return err
	}
	st, err := e.open(ctx, conc)
	if err != nil {
		return err
	}
	defer e.closeStore(st)
	mode, command := store.LockRun, "run"
	if doLoad {
		mode, command = store.LockLoad, "load"
		if _, n, _ := parseShard(a.opts.shard); n > 1 {
			mode, command = store.LockShardLoad, "load --shard "+a.opts.shard
		}
	}
	unlock, err := e.lock(ctx, st, mode, command)
	if err != nil {
		return err
	}
	defer unlock()
	stopMetrics, err := a.startMetrics(e)
	if err != nil {
		return err
	}
	defer stopMetrics()
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

// logStoreSettings prints what the store reports about itself (server
// version, consistency mode and the like) so the text results say which
// guarantees the figures were measured under; the bundle has them too.
func logStoreSettings(ctx context.Context, e *env, st store.Store) {
	d, ok := st.(store.Describer)
	if !ok {
		return
	}
	desc, err := d.Describe(ctx)
	if err != nil {
		return
	}
	e.desc = &desc
	keys := make([]string, 0, len(desc.Settings))
	for k := range desc.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys)+1)
	if desc.Version != "" {
		parts = append(parts, "server "+desc.Version)
	}
	for _, k := range keys {
		parts = append(parts, k+" = "+desc.Settings[k])
	}
	if len(parts) > 0 {
		e.log.Infof("store %s: %s", e.drv.Name, strings.Join(parts, ", "))
	}
}

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
	dir := a.resultsDir(e)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results_dir %s cannot be created (%v); set --results-dir or results_dir to a writable directory, or use --no-results", dir, errors.Unwrap(err))
	}
	f, err := os.CreateTemp(dir, ".write-test-")
	if err != nil {
		return fmt.Errorf("results_dir %s is not writable (%v); set --results-dir or results_dir to a writable directory, or use --no-results", dir, errors.Unwrap(err))
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

func (a *app) load(ctx context.Context, e *env, st store.Store) error {
	cfg := e.cfg
	// The store calls of a load that may rightly take long (EndLoad's
	// index build, TRUNCATE) have no deadline: a ping tells a hung server
	// from a busy one. sig is the command's context (Ctrl-C).
	sig := ctx
	ctx, stopWatch := store.WatchAlive(ctx, st, cfg.OpTimeout)
	defer stopWatch()
	bl, ok := st.(store.BulkLoader)
	if !ok {
		return fmt.Errorf("store %s cannot bulk load", e.drv.Name)
	}
	// Over a partial graph (--truncate, --resume) an existing schema is
	// left as it is until the tables are emptied or the load resumed.
	if err := prepareSchema(ctx, st, a.opts.truncate || a.opts.resume || a.opts.resumeAuto); err != nil {
		return err
	}
	shard, nShards, err := parseShard(a.opts.shard)
	if err != nil {
		return err
	}
	prefix := workload.JournalPrefix(shard, nShards)
	journal, canResume := st.(store.Journaler)
	resuming := a.opts.resume
	if a.opts.resumeAuto && canResume && !a.opts.truncate {
		meta, err := journal.GetMeta(ctx)
		if err != nil {
			return fmt.Errorf("read the load record: %w", err)
		}
		resuming = meta[prefix+workload.JournalState] == workload.JournalOpen
	}
	switch {
	case resuming && a.opts.truncate:
		return errors.New("--resume continues an interrupted load and --truncate empties the store: give one of them")
	case resuming && !canResume:
		return fmt.Errorf("store %s cannot resume a load (it keeps no load journal); load again with --truncate", e.drv.Name)
	case resuming:
		// The interrupted load's record is checked below.
	case nShards > 1 && a.opts.truncate:
		return errors.New("--truncate with --shard: empty the store once with `linkbench init --drop` before starting the shards")
	case nShards > 1:
		// Other shards write concurrently: the store is not expected to be empty.
	case a.opts.truncate:
		if r, ok := st.(store.Resetter); ok {
			e.log.Infof("emptying the store before loading (--truncate)")
			t0 := time.Now()
			if err := r.Reset(ctx); err != nil {
				return fmt.Errorf("truncate: %w", err)
			}
			e.log.Infof("store emptied in %.1f s", time.Since(t0).Seconds())
			if err := prepareSchema(ctx, st, false); err != nil {
				return err
			}
		}
	default:
		if ec, ok := st.(store.EmptyChecker); ok {
			empty, err := ec.IsEmpty(ctx)
			if err != nil {
				return err
			}
			if !empty {
				return errors.New("the store already holds a graph; add --truncate to empty it before loading, or run `linkbench init --drop`")
			}
		}
	}
	nowMs := time.Now().UnixMilli()
	if v, ok := cfg.Props.Get("load_time_ms"); ok && v != "" {
		if nowMs, err = strconv.ParseInt(v, 10, 64); err != nil || nowMs < 1<<32 {
			return fmt.Errorf("load_time_ms = %q (%s): expected milliseconds since 1970, e.g. %d", v, cfg.Props.Where("load_time_ms"), time.Now().UnixMilli())
		}
	}
	var resume map[string]string
	var recorded map[string]string
	if resuming {
		if recorded, err = journal.GetMeta(ctx); err != nil {
			return fmt.Errorf("read the interrupted load's record: %w", err)
		}
		if recorded[prefix+workload.JournalState] != workload.JournalOpen {
			if recorded[workload.MetaComplete] == "true" {
				return errors.New("nothing to resume: the load into this store completed; run `linkbench run`, or load again with --truncate")
			}
			return fmt.Errorf("nothing to resume: the store holds no record of an interrupted load (shard %d of %d); load again with --truncate", shard, nShards)
		}
		// The seed and the load time of the interrupted load, unless the
		// user gives them (then they must agree, checked below).
		if v, ok := recorded[workload.MetaSeed]; ok && !workload.UserSet(cfg, workload.MetaSeed) {
			if n, perr := strconv.ParseInt(v, 10, 64); perr == nil {
				cfg.LoadRandomSeed = n
			}
		}
		if v, ok := recorded[workload.MetaLoadTimeMs]; ok && !workload.UserSet(cfg, "load_time_ms") {
			if n, perr := strconv.ParseInt(v, 10, 64); perr == nil {
				nowMs = n
			}
		}
		resume = map[string]string{}
		for k, v := range recorded {
			if u, ok := strings.CutPrefix(k, prefix); ok && u != workload.JournalState {
				resume[u] = v
			}
		}
	}
	if _, seeded := cfg.Props.Lookup("load_random_seed"); nShards > 1 && (!seeded || cfg.Props.Where("load_time_ms") == "default") {
		return errors.New("--shard needs the same -D load_random_seed=... and -D load_time_ms=... in every shard process, so that they generate one graph")
	}
	g, err := e.graph(nowMs)
	if err != nil {
		return err
	}
	dataHash := ""
	if e.data != nil {
		dataHash = e.data.Hash()
	}
	params := workload.LoadParams(cfg, dataHash, nowMs)
	ms, hasMeta := st.(store.MetaStore)
	switch {
	case resuming:
		if diffs := workload.DiffLoadParams(recorded[workload.MetaLoadParams], params); len(diffs) > 0 {
			return fmt.Errorf("--resume needs the settings of the interrupted load; these differ:\n  %s", strings.Join(diffs, "\n  "))
		}
		var done int
		for _, v := range resume {
			if v == workload.JournalDone {
				done++
			}
		}
		e.log.Infof("resuming the interrupted load: %d units written, %d to write again, the rest to do", done, len(resume)-done)
	case canResume:
		meta := workload.GraphMeta(cfg, dataHash, toolVersion(), false)
		meta[workload.MetaLoadTimeMs] = strconv.FormatInt(nowMs, 10)
		meta[workload.MetaLoadParams] = params
		meta[prefix+workload.JournalState] = workload.JournalOpen
		_, err = e.retry().Do(ctx, func() error {
			if nShards > 1 {
				// The other shards' records stay; this one's old journal goes.
				return journal.UpdateMeta(ctx, meta, prefix)
			}
			return journal.PutMeta(ctx, meta)
		})
		if err != nil {
			return fmt.Errorf("record graph metadata: %w", err)
		}
	case hasMeta:
		if err := ms.PutMeta(ctx, workload.GraphMeta(cfg, dataHash, toolVersion(), false)); err != nil {
			return fmt.Errorf("record graph metadata: %w", err)
		}
	}
	e.log.Infof("loading with %d loaders, chunks of %d ids, batches of %d rows, seed %d", cfg.Loaders, cfg.LoaderChunkSize, cfg.BulkInsertCount, cfg.LoadRandomSeed)
	prog := newLoadProgress(a.stderr, e.log, e.progressEvery)
	hook := a.phaseHook("load")
	var progress loadRecorder
	lp := &workload.LoadPhase{Config: cfg, Store: bl, Graph: g, Retry: e.retry(), OnStage: prog.stage, Shard: shard, Shards: nShards,
		OnProgress: progress.wrap(func(p workload.LoadProgress) { prog.update(p); hook() })}
	if a.exp != nil {
		lp.OnCollector = func(c *stats.Collector) { a.exp.BeginPhase("load", c, prog.live()) }
		defer a.exp.EndPhase()
	}
	if !workload.UserSet(cfg, "load_time_ms") {
		// Nodes carry the second they were generated, as the reference's;
		// a given load_time_ms makes the whole graph reproducible instead.
		lp.NodeTime = func() int32 { return int32(time.Now().Unix()) }
	}
	if canResume {
		lp.Journal, lp.JournalPrefix, lp.Resume = journal, prefix, resume
	}
	lp.OnPrepare = prepareProgress(e)
	sizeBefore := sizeOf(ctx, st)
	mon := e.monitor(ctx, st, 0)
	started := time.Now()
	res, err := lp.Run(ctx)
	usage, samples := mon.Stop()
	prog.finish()
	if err != nil {
		lerr := loadFailure(sig, ctx, e, st, err, canResume, resuming)
		if res != nil {
			// What was written is reported and kept, as for a run.
			out := loadOutput{res: res, started: started, usage: usage, samples: samples, sizeBefore: sizeBefore, interrupted: true}
			if werr := a.loadResults(context.WithoutCancel(sig), e, st, out, !e.hung); werr != nil {
				e.log.Warnf("%v", werr)
			}
		}
		return lerr
	}
	_, err = e.retry().Do(ctx, func() error {
		switch {
		case canResume && nShards > 1:
			// This shard's journal goes; its state says it is done, so a
			// run can tell when every shard has loaded.
			meta := workload.GraphMeta(cfg, dataHash, toolVersion(), true)
			meta[prefix+workload.JournalState] = workload.JournalDone
			return journal.UpdateMeta(ctx, meta, prefix)
		case hasMeta:
			return ms.PutMeta(ctx, workload.GraphMeta(cfg, dataHash, toolVersion(), true))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record graph metadata: %w", err)
	}
	return a.loadResults(ctx, e, st, loadOutput{res: res, started: started, usage: usage, samples: samples, sizeBefore: sizeBefore, progress: progress.points}, true)
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
}

// loadResults prints the load's summary line and per-op lines and writes
// --csvstats and the results bundle; a failure to write one of them does
// not keep the others from being written.
func (a *app) loadResults(ctx context.Context, e *env, st store.Store, o loadOutput, storeOK bool) error {
	cfg, res := e.cfg, o.res
	line := report.LoadLine(res.Nodes, res.ExpectedNodes, res.Links, res.Counts, res.Elapsed, cfg.NeverChange)
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

// loadFailure is the message and exit code of a load that did not finish:
// 130 for Ctrl-C; otherwise 1, with the --resume hint when resuming can
// help (the store was lost, hung or the load interrupted) and the reason
// it cannot when the error would only come back.
func loadFailure(sig, ctx context.Context, e *env, st store.Store, err error, canResume, resuming bool) error {
	partial := "the store holds a partial graph (load again with --truncate)"
	if canResume {
		partial = "the store holds a partial graph: `linkbench load --resume` with the same settings continues it"
	}
	if sig.Err() != nil {
		return &exitError{code: 130, err: errors.New("load interrupted; " + partial)}
	}
	where := "the " + e.drv.Name + " store"
	if addr := store.AddrOf(st); addr != "" {
		where += " at " + addr
	}
	if store.NoAnswer(ctx) {
		e.hung = true
		return fmt.Errorf("%s stopped answering: no answer to a ping within op_timeout = %s (is the server stopped, overloaded or cut off?); %s", where, e.cfg.OpTimeout, partial)
	}
	var te *workload.TimeoutError
	if errors.As(err, &te) {
		e.hung = true
	}
	if !canResume || errors.Is(err, graph.ErrConnection) || graph.IsTransient(err) {
		return fmt.Errorf("%w (%s)", err, partial)
	}
	again := "a load resumed now would meet it again: fix its cause, then `linkbench load --resume` continues (or load again with --truncate)"
	if resuming {
		again = "the resumed load stopped on it again, so resuming once more will not help: fix its cause first, or load again with --truncate"
	}
	return fmt.Errorf("%w (the store holds a partial graph; this error is not a lost connection: %s)", err, again)
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

// prepareSchema creates the store's schema (Init is idempotent). With
// keepExisting a schema that is already there is left as it is: after an
// interrupted load the deferred index is missing, and creating it here
// would build it over the partial tables before --truncate empties them or
// before --resume adds the rest; the load's end builds it once, over
// every row.
func prepareSchema(ctx context.Context, st store.Store, keepExisting bool) error {
	if keepExisting {
		if sc, ok := st.(interface{ CheckSchema(context.Context) error }); ok && sc.CheckSchema(ctx) == nil {
			return nil
		}
	}
	if in, ok := st.(store.Initializer); ok {
		if err := in.Init(ctx, false); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	return checkSchema(ctx, st)
}

// monitor samples resource use: the disk that holds the data, and the
// database server's processes when it runs on this machine.
func (e *env) monitor(ctx context.Context, st store.Store, skip time.Duration) *sysmon.Monitor {
	if e.where == nil {
		e.where = locateData(ctx, e, st)
	}
	return sysmon.Start(ctx, sysmon.Options{Skip: skip, DataPath: e.where.dataPath, ServerPIDs: e.where.serverPIDs})
}

func sizeOf(ctx context.Context, st store.Store) int64 {
	if s, ok := st.(store.Sizer); ok {
		if n, err := s.SizeOnDisk(ctx); err == nil {
			return n
		}
	}
	return 0
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

// request runs the request phase (with loops = N: N consecutive windows
// of maxtime after one warm-up, each with its own figures and summary line).
func (a *app) request(ctx context.Context, e *env, st store.Store) error {
	if e.cfg.Requesters == 0 {
		a.println(e, "NO REQUEST PHASE CONFIGURED.")
		return nil
	}
	if err := checkSchema(ctx, st); err != nil {
		return err
	}
	if err := a.checkGraph(ctx, e, st, "run"); err != nil {
		return err
	}
	_, err := a.requestOnce(ctx, e, st)
	return err
}

// requestOnce runs one request phase and returns its results (also
// written as a bundle).
func (a *app) requestOnce(ctx context.Context, e *env, st store.Store) (*report.Results, error) {
	if e.where == nil {
		e.where = locateData(ctx, e, st)
	}
	loopCfg := e.cfg
	e = loopedEnv(e)
	cfg := e.cfg
	if err := checkSchema(ctx, st); err != nil {
		return nil, err
	}
	g, err := e.graph(time.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	gens, err := workloadGens(e)
	if err != nil {
		return nil, err
	}
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
	e.log.Infof("request phase: %d requesters, %s, warm-up %s, seed %d", cfg.Requesters, limitText(cfg), cfg.WarmupTime, cfg.RequestRandomSeed)
	e.log.Infof("workload semantics: %s", semanticsText(cfg))
	shard, _, err := parseShard(a.opts.shard)
	if err != nil {
		return nil, err
	}
	rp := &workload.RequestPhase{Config: cfg, Store: st, Graph: g, Data: e.data, Gens: gens, Retry: e.retry(), SeedOffset: uint64(shard), ProgressEvery: e.progressEvery}
	if sched, err := openLoopSchedule(cfg); err != nil {
		return nil, err
	} else if sched != nil {
		rp.Schedule = sched
		e.log.Infof("open loop: %s arrivals, %s", map[bool]string{true: "poisson", false: "uniform"}[cfg.ArrivalPoisson], describeStages(cfg))
	}
	total := int64(cfg.Requesters) * cfg.Requests
	hook := a.phaseHook("request")
	rp.OnProgress = func(p workload.Progress) {
		a.requestProgress(e, p, total)
		hook()
	}
	if a.exp != nil {
		rp.OnCollector = func(c *stats.Collector) { a.exp.BeginPhase("request", c, requestLive(cfg, rp)) }
		defer a.exp.EndPhase()
	}
	var streamErr error
	rp.OnInterval = func(iv stats.Interval) {
		if stream != nil && streamErr == nil {
			streamErr = stream.Write(iv)
		}
	}
	sizeBefore := sizeOf(ctx, st)
	mon := e.monitor(ctx, st, cfg.WarmupTime) // the warm-up is not measured
	loops := trackLoops(ctx, e, st, rp, mon, loopCfg)
	started := time.Now()
	res, runErr := rp.Run(ctx)
	loops.finish(res != nil && (len(res.HardEnd) > 0 || res.Abandoned > 0))
	usage, samples := mon.Stop()
	if res == nil {
		return nil, runErr
	}
	if streamErr != nil {
		e.log.Warnf("-csvstream: %v", streamErr)
	}
	if res.Interrupted {
		e.log.Warnf("interrupted: reporting the %d requests that finished", res.Requests)
	}
	if res.TimedOut > 0 {
		e.log.Warnf("%d requests were abandoned without an answer from the store (op_timeout = %s, or the end of the phase); they are counted as errors", res.TimedOut, cfg.OpTimeout)
	}
	for _, t := range res.Threads {
		if t.Abandoned {
			e.log.Warnf("ThreadID = %d was still waiting for the store at the end and was left behind", t.ID)
			continue
		}
		e.log.Infof("ThreadID = %d total requests = %d requests/second = %.0f found = %d not found = %d history queries = %d/%d failed = %d",
			t.ID, t.Requests, t.OpsPerSec, t.Found, t.NotFound, t.HistoryQueries, t.ListRequests, t.Failed)
	}
	a.printResults(e, res.Summary, cfg.Requesters, nil, report.RequestLine(res.Requests, res.Elapsed))
	// A failure to write one output does not keep the others from being
	// written; it is reported at the end.
	csvErr := a.writeCSVStats(res.Summary, cfg.Requesters)
	hung := len(res.HardEnd) > 0 || res.Abandoned > 0
	e.hung = e.hung || hung
	r := a.baseResults(ctx, e, st, "request", started, res.Elapsed, !hung)
	r.WorkloadSemantics = cfg.WorkloadSemantics
	r.Interrupted = res.Interrupted
	r.Totals = report.Totals{Requests: res.Requests, Errors: res.Errors, Reconnects: res.Reconnects, TimedOut: res.TimedOut, OpsPerSec: perSec(res.Requests, res.Elapsed)}
	r.Ops = res.Summary
	r.AllOps = report.AllOpsSummary(res.Collector.Histograms(), res.Elapsed.Seconds())
	a.addUsage(e, r, usage, samples, res.Requests, "request", sizeBefore)
	r.Threads = res.Threads
	r.Intervals = res.Series
	r.Stages, r.MaxBacklog = res.Stages, res.MaxBacklog
	r.WarmupSec = cfg.WarmupTime.Seconds()
	a.loopResults(e, r, loops)
	for _, st := range res.Stages {
		line := fmt.Sprintf("STAGE %s: %d requests, %.0f requests/s, %d errors", st.Name, st.Count, st.OpsPerSec, st.Errors)
		for _, o := range st.Ops {
			if o.Name == "GET_NODE" || o.Name == "GET_LINKS_LIST" || o.Name == "ADD_LINK" {
				line += fmt.Sprintf(", %s p99 %sms", o.Name, report.FormatMs(o.P99))
			}
		}
		a.println(e, line)
	}
	if res.MaxBacklog >= 1 {
		e.log.Warnf("the store fell behind the arrival schedule by up to %.0f requests; latencies include that queueing", res.MaxBacklog)
	}
	if err := errors.Join(csvErr, a.writeBundle(e, r, res.Collector)); err != nil {
		return r, err
	}
	if errors.Is(runErr, workload.ErrTooManyFailures) {
		return r, &exitError{code: 1, err: fmt.Errorf("a requester failed more than max_failed_requests = %d times; the last error: %v", cfg.MaxFailedRequests, firstError(res))}
	}
	if err := serverVerdict(e, st, res); err != nil && runErr == nil {
		return r, &exitError{code: 1, err: err}
	}
	return r, runErr
}

// serverVerdict is the one line for a request phase whose store hung (it
// was still waiting at maxtime + maxtime_grace) or was lost for good
// (connection errors to the end): the run must not pass for a good one.
func serverVerdict(e *env, st store.Store, res *workload.RequestResult) error {
	where := "the " + e.drv.Name + " store"
	if addr := store.AddrOf(st); addr != "" {
		where += " at " + addr
	}
	switch {
	case len(res.HardEnd) > 0 || res.Abandoned > 0:
		ops := map[string]int{}
		var names []string
		for _, op := range res.HardEnd {
			if ops[op.String()] == 0 {
				names = append(names, op.String())
			}
			ops[op.String()]++
		}
		for i, n := range names {
			names[i] = fmt.Sprintf("%s x%d", n, ops[n])
		}
		msg := fmt.Sprintf("the request phase did not end on time: at maxtime + maxtime_grace (%s) %d requests were still waiting for %s (%s); they are counted as timed out",
			e.cfg.MaxTimeGrace, len(res.HardEnd), where, strings.Join(names, ", "))
		if res.Abandoned > 0 {
			msg += fmt.Sprintf(", and %d requesters that ignored the cancellation were left behind", res.Abandoned)
		}
		return fmt.Errorf("%s. The server stopped answering: is it stopped (SIGSTOP), overloaded or cut off? The results are written", msg)
	case res.Lost != nil && !res.Interrupted:
		return fmt.Errorf("%s stopped answering %.1f s before the end of the phase and did not come back: %d requests failed after the last success, the last with: %v. The results are written; their figures cover the time before",
			where, res.Lost.Silent.Seconds(), res.Lost.Failures, res.Lost.LastError)
	}
	return nil
}

// openLoopSchedule builds the global arrival schedule of arrival_rate or
// stages (nil when neither is set).
func openLoopSchedule(cfg *config.Config) (*workload.Schedule, error) {
	var stages []workload.Stage
	switch {
	case cfg.Stages != "":
		st, err := workload.ParseStages(cfg.Stages)
		if err != nil {
			return nil, fmt.Errorf("stages (%s): %w", cfg.Props.Where("stages"), err)
		}
		stages = st
		var total time.Duration
		for _, s := range st {
			total += s.Duration
		}
		if total < cfg.MaxTime {
			cfg.MaxTime = total // a staged run ends with its last stage
		}
	case cfg.ArrivalRate > 0:
		stages = []workload.Stage{{Rate: cfg.ArrivalRate}}
	default:
		return nil, nil
	}
	return workload.NewSchedule(time.Now(), stages, cfg.ArrivalPoisson, cfg.RampTime, uint64(cfg.RequestRandomSeed)), nil
}

func describeStages(cfg *config.Config) string {
	if cfg.Stages != "" {
		return "stages " + cfg.Stages
	}
	return fmt.Sprintf("%.0f requests/s in total", cfg.ArrivalRate)
}

func firstError(res *workload.RequestResult) error {
	if res.LastError != nil {
		return res.LastError
	}
	return errors.New("unknown")
}

func semanticsText(cfg *config.Config) string {
	if cfg.Corrected() {
		return "corrected (the reference's bugs fixed: not comparable with published LinkBench figures; docs/compatibility.md)"
	}
	return "reference (the reference's effective behaviour; workload_semantics = corrected fixes its bugs)"
}

func limitText(cfg *config.Config) string {
	var parts []string
	if cfg.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d requests each", cfg.Requests))
	}
	parts = append(parts, fmt.Sprintf("at most %s", cfg.MaxTime))
	if cfg.RequestRate > 0 {
		parts = append(parts, fmt.Sprintf("%.0f ops/s per requester", cfg.RequestRate))
	}
	return strings.Join(parts, ", ")
}

func workloadGens(e *env) (workload.Gens, error) { return workload.NewGens(e.cfg) }

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
	fmt.Fprint(a.stdout, sb.String())
	var ref strings.Builder
	report.WriteOpLines(&ref, ops, threads)
	e.log.toFile(ref.String() + sb.String())
}

func (a *app) print(e *env, s string) {
	fmt.Fprint(a.stdout, s)
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
