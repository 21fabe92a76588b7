package run

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/linkbench/linkbench/internal/gen"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/workload"
)

// LoadOptions are the choices of a load command.
type LoadOptions struct {
	// Truncate empties the store first; Resume continues an interrupted
	// load; ResumeAuto resumes when the store holds one, else loads anew.
	Truncate, Resume, ResumeAuto bool
	// Shard of Shards is the part of the graph this process loads (0 of 1
	// for the whole).
	Shard, Shards int
	// Finish only finishes a --shard load whose shards have all loaded
	// (load --finish): index builds, node id allocator, statistics.
	// NoFinish leaves that to a Finish even when this shard loads last.
	Finish, NoFinish bool
}

// ErrInterrupted is the error of a load stopped by the user (Ctrl-C).
var ErrInterrupted = errors.New("load interrupted")

// Load is a load whose checks and decisions are made: the schema is
// there, the store emptied or refused as the options say, an interrupted
// load's record read and its settings adopted, and the graph metadata
// recorded as under way.
type Load struct {
	// Spec runs the load: its Config is a derived copy with the seed of
	// the interrupted load when resuming one the user gave no seed for.
	Spec    Spec
	Options LoadOptions
	// Graph generates the rows; NowMs is their load time.
	Graph *gen.Graph
	NowMs int64
	// Resuming: an interrupted load is continued. CanResume: the store
	// keeps a load journal, so this load can be resumed if it stops.
	Resuming, CanResume bool
	// FinishOnly: this process writes no rows, it only finishes a --shard
	// load whose shards have all loaded. Nothing, when set, says why this
	// process has nothing to do (its shard is loaded, the graph finished).
	FinishOnly bool
	Nothing    string

	// recorded is the load record read by decide (--shard, --finish);
	// finisher is set once this process has claimed the graph's finish.
	recorded map[string]string
	finisher bool

	bulk     store.BulkLoader
	journal  store.Journaler
	prefix   string
	resume   map[string]string
	dataHash string
	// recordedParams are the interrupted load's settings (LoadParams).
	recordedParams string
}

// PrepareLoad makes a load's checks and decisions, in the order a load
// needs them, and records the graph metadata of a load under way. ctx
// should fail when the store stops answering (store.WatchAlive): some of
// these calls may rightly take long.
func PrepareLoad(ctx context.Context, s Spec, o LoadOptions) (*Load, error) {
	bl, ok := s.Store.(store.BulkLoader)
	if !ok {
		return nil, fmt.Errorf("store %s cannot bulk load", s.Driver.Name)
	}
	// Over a partial graph (--truncate, --resume, --finish) an existing
	// schema is left as it is until the tables are emptied or the load
	// resumed.
	if err := PrepareSchema(ctx, s.Store, o.Truncate || o.Resume || o.ResumeAuto || o.Finish); err != nil {
		return nil, err
	}
	l := &Load{Spec: s, Options: o, bulk: bl, prefix: workload.JournalPrefix(o.Shard, o.Shards), dataHash: s.DataHash()}
	l.journal, l.CanResume = s.Store.(store.Journaler)
	if err := l.decide(ctx); err != nil {
		return nil, err
	}
	if err := l.adopt(ctx); err != nil {
		return nil, err
	}
	g, err := l.Spec.Graph(l.NowMs)
	if err != nil {
		return nil, err
	}
	l.Graph = g
	if err := l.begin(ctx); err != nil {
		return nil, err
	}
	if l.FinishOnly || l.Nothing != "" {
		return l, nil
	}
	cfg := l.Spec.Config
	s.Log.Infof("loading with %d loaders, chunks of %d ids, batches of %d rows, seed %d", cfg.Loaders, cfg.LoaderChunkSize, cfg.BulkInsertCount, cfg.LoadRandomSeed)
	return l, nil
}

// decide resumes, truncates or refuses a store that already holds a graph.
func (l *Load) decide(ctx context.Context) error {
	o, s := l.Options, l.Spec
	if o.Finish {
		if o.Shards > 1 || o.Truncate || o.Resume || o.ResumeAuto {
			return errors.New("--finish finishes a --shard load whose shards have all loaded: give it alone, without --shard, --truncate or --resume")
		}
		return l.decideFinish(ctx)
	}
	if o.NoFinish && o.Shards < 2 {
		return errors.New("--no-finish is for the processes of a --shard load (a load without --shard finishes itself)")
	}
	l.Resuming = o.Resume
	if (o.ResumeAuto || o.Shards > 1) && l.CanResume && !o.Truncate {
		meta, err := l.journal.GetMeta(ctx)
		if err != nil {
			return fmt.Errorf("read the load record: %w", err)
		}
		state := meta[l.prefix+workload.JournalState]
		if o.ResumeAuto {
			l.Resuming = state == workload.JournalOpen
		}
		if o.Shards > 1 && state == workload.JournalDone && meta[workload.MetaFleet] != "" {
			// This shard's part is loaded: begin decides what is left.
			l.recorded, l.Resuming = meta, false
			return nil
		}
	}
	switch {
	case l.Resuming && o.Truncate:
		return errors.New("--resume continues an interrupted load and --truncate empties the store: give one of them")
	case l.Resuming && !l.CanResume:
		return fmt.Errorf("store %s cannot resume a load (it keeps no load journal); load again with --truncate", s.Driver.Name)
	case l.Resuming:
		// The interrupted load's record is checked by adopt.
	case o.Shards > 1 && o.Truncate:
		return errors.New("--truncate with --shard: empty the store once with `linkbench init --drop` before starting the shards")
	case o.Shards > 1:
		// Other shards write concurrently: the store is not expected to be empty.
	case o.Truncate:
		r, ok := s.Store.(store.Resetter)
		if !ok {
			return nil
		}
		s.Log.Infof("emptying the store before loading (--truncate)")
		t0 := time.Now()
		if err := r.Reset(ctx); err != nil {
			return fmt.Errorf("truncate: %w", err)
		}
		s.Log.Infof("store emptied in %.1f s", time.Since(t0).Seconds())
		return PrepareSchema(ctx, s.Store, false)
	default:
		if ec, ok := s.Store.(store.EmptyChecker); ok {
			empty, err := ec.IsEmpty(ctx)
			if err != nil {
				return err
			}
			if !empty {
				return errors.New("the store already holds a graph; add --truncate to empty it before loading, or run `linkbench init --drop`")
			}
		}
	}
	return nil
}

// adopt sets the load time and, when resuming, reads the interrupted
// load's record: its seed and load time (unless the user gives them),
// and its journal of units.
func (l *Load) adopt(ctx context.Context) error {
	cfg, o := l.Spec.Config, l.Options
	l.NowMs = time.Now().UnixMilli()
	if v, ok := cfg.Props.Get("load_time_ms"); ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1<<32 {
			return fmt.Errorf("load_time_ms = %q (%s): expected milliseconds since 1970, e.g. %d", v, cfg.Props.Where("load_time_ms"), time.Now().UnixMilli())
		}
		l.NowMs = n
	}
	if o.Finish {
		return l.adoptFinish(ctx)
	}
	if l.Resuming {
		recorded, err := l.journal.GetMeta(ctx)
		if err != nil {
			return fmt.Errorf("read the interrupted load's record: %w", err)
		}
		if err := l.resumeFrom(recorded); err != nil {
			return err
		}
	}
	if _, seeded := cfg.Props.Lookup("load_random_seed"); o.Shards > 1 && (!seeded || cfg.Props.Where("load_time_ms") == "default") {
		return errors.New("--shard needs the same -D load_random_seed=... and -D load_time_ms=... in every shard process, so that they generate one graph")
	}
	return nil
}

// resumeFrom takes what the interrupted load recorded: its seed and load
// time (unless the user gives them: then they must agree) and its units.
func (l *Load) resumeFrom(recorded map[string]string) error {
	cfg := l.Spec.Config
	if recorded[l.prefix+workload.JournalState] != workload.JournalOpen {
		if recorded[workload.MetaComplete] == "true" {
			return errors.New("nothing to resume: the load into this store completed; run `linkbench run`, or load again with --truncate")
		}
		return fmt.Errorf("nothing to resume: the store holds no record of an interrupted load (shard %d of %d); load again with --truncate", l.Options.Shard, l.Options.Shards)
	}
	if v, ok := recorded[workload.MetaSeed]; ok && !workload.UserSet(cfg, workload.MetaSeed) {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			derived := *cfg
			derived.LoadRandomSeed = n
			l.Spec = l.Spec.With(&derived)
		}
	}
	if v, ok := recorded[workload.MetaLoadTimeMs]; ok && !workload.UserSet(cfg, "load_time_ms") {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			l.NowMs = n
		}
	}
	l.resume = map[string]string{}
	for k, v := range recorded {
		if u, ok := strings.CutPrefix(k, l.prefix); ok && u != workload.JournalState {
			l.resume[u] = v
		}
	}
	l.recordedParams = recorded[workload.MetaLoadParams]
	return nil
}

// meta is the graph metadata of this load (complete or under way).
func (l *Load) meta(complete bool) map[string]string {
	return workload.GraphMeta(l.Spec.Config, l.dataHash, l.Spec.ToolVersion, complete)
}

// begin records the load as under way: a resumed load reports its units,
// a load a journal can resume records its parameters and opens the
// journal, any other records the graph's metadata.
func (l *Load) begin(ctx context.Context) error {
	s := l.Spec
	switch {
	case l.Options.Finish:
		return nil // adoptFinish claimed the finish
	case l.recorded != nil:
		return l.partLoaded(ctx)
	case l.Resuming:
		params := workload.LoadParams(s.Config, l.dataHash, l.NowMs)
		if diffs := workload.DiffLoadParams(l.recordedParams, params); len(diffs) > 0 {
			return fmt.Errorf("--resume needs the settings of the interrupted load; these differ:\n  %s", strings.Join(diffs, "\n  "))
		}
		var done int
		for _, v := range l.resume {
			if v == workload.JournalDone {
				done++
			}
		}
		s.Log.Infof("resuming the interrupted load: %d units written, %d to write again, the rest to do", done, len(l.resume)-done)
	case l.CanResume:
		meta := l.meta(false)
		meta[workload.MetaLoadTimeMs] = strconv.FormatInt(l.NowMs, 10)
		meta[workload.MetaLoadParams] = workload.LoadParams(s.Config, l.dataHash, l.NowMs)
		meta[l.prefix+workload.JournalState] = workload.JournalOpen
		if l.Options.Shards > 1 {
			if err := l.join(ctx); err != nil {
				return err
			}
		}
		_, err := s.Retry().Do(ctx, func() error {
			if l.Options.Shards > 1 {
				// The other shards' records stay; this one's old journal goes.
				return l.journal.UpdateMeta(ctx, meta, l.prefix)
			}
			return l.journal.PutMeta(ctx, meta)
		})
		if err != nil {
			return fmt.Errorf("record graph metadata: %w", err)
		}
	default:
		if ms, ok := s.Store.(store.MetaStore); ok {
			if err := ms.PutMeta(ctx, l.meta(false)); err != nil {
				return fmt.Errorf("record graph metadata: %w", err)
			}
		}
	}
	return nil
}

// Phase is the load's workload phase; the caller adds its callbacks
// (progress, stages, collector) and runs it.
func (l *Load) Phase() *workload.LoadPhase {
	cfg := l.Spec.Config
	lp := &workload.LoadPhase{Config: cfg, Store: l.bulk, Graph: l.Graph, Retry: l.Spec.Retry(), Shard: l.Options.Shard, Shards: l.Options.Shards}
	if !workload.UserSet(cfg, "load_time_ms") {
		// Nodes carry the second they were generated, as the reference's;
		// a given load_time_ms makes the whole graph reproducible instead.
		lp.NodeTime = func() int32 { return int32(time.Now().Unix()) }
	}
	if l.CanResume && !l.FinishOnly {
		lp.Journal, lp.JournalPrefix, lp.Resume = l.journal, l.prefix, l.resume
	}
	if l.CanResume && l.Options.Shards > 1 && !l.FinishOnly {
		lp.Finishes = l.shardLoaded
	}
	lp.FinishOnly = l.FinishOnly
	return lp
}

// Finish records the graph metadata of the completed load.
func (l *Load) Finish(ctx context.Context) error {
	_, err := l.Spec.Retry().Do(ctx, func() error {
		switch ms, hasMeta := l.Spec.Store.(store.MetaStore); {
		case l.finisher:
			// Every shard's part is loaded (shardLoaded marked this one)
			// and the graph finished: a run may start.
			meta := l.meta(true)
			meta[workload.MetaFleetFinished] = "true"
			return l.journal.UpdateMeta(ctx, meta, "")
		case l.CanResume && l.Options.Shards > 1:
			return nil // shardLoaded marked this shard's part loaded
		case hasMeta:
			return ms.PutMeta(ctx, l.meta(true))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record graph metadata: %w", err)
	}
	return nil
}

// Failure is the error of a load that did not finish, and whether the
// store hung: ErrInterrupted for Ctrl-C (sig done); otherwise err with
// the --resume hint when resuming can help (the store was lost, hung or
// the load interrupted), or the reason it cannot when the error would
// only come back. ctx is the load's (store.WatchAlive) context.
func (l *Load) Failure(sig, ctx context.Context, err error) (failure error, hung bool) {
	partial := "the store holds a partial graph (load again with --truncate)"
	if l.CanResume {
		partial = "the store holds a partial graph: `linkbench load --resume` with the same settings continues it"
	}
	if sig.Err() != nil {
		return fmt.Errorf("%w; %s", ErrInterrupted, partial), false
	}
	if store.NoAnswer(ctx) {
		return fmt.Errorf("%s stopped answering: no answer to a ping within op_timeout = %s (is the server stopped, overloaded or cut off?); %s", l.Spec.where(), l.Spec.Config.OpTimeout, partial), true
	}
	var te *workload.TimeoutError
	hung = errors.As(err, &te)
	if !l.CanResume || errors.Is(err, graph.ErrConnection) || graph.IsTransient(err) {
		return fmt.Errorf("%w (%s)", err, partial), hung
	}
	again := "a load resumed now would meet it again: fix its cause, then `linkbench load --resume` continues (or load again with --truncate)"
	if l.Resuming {
		again = "the resumed load stopped on it again, so resuming once more will not help: fix its cause first, or load again with --truncate"
	}
	return fmt.Errorf("%w (the store holds a partial graph; this error is not a lost connection: %s)", err, again), hung
}
