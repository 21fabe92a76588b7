package run

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/workload"
)

// The processes of a --shard load (a fleet) share one index lifecycle,
// kept in the store's load record:
//
//   - each registers under workload.MetaFleet with the load's FleetID;
//     the first to register finds the store empty, and a process of
//     another load (other settings or shard count) is refused;
//   - the store's BeginLoad drops the deferred indexes of an empty table
//     only, so they are dropped once, before the first rows, and a shard
//     that starts late leaves them dropped (Init builds them only with
//     their table);
//   - each shard's EndLoad is partial; it then marks its journal done,
//     reads every shard's state and, when all have loaded, claims
//     workload.MetaFleetFinisher (store.Journaler.ClaimMeta). Of shards
//     that finish at once each reads the others' marks after writing its
//     own, so the last to write sees them all, and the claim lets exactly
//     one through: it runs the whole EndLoad (index builds, allocator,
//     statistics) while no shard loads, and records MetaFleetFinished;
//   - `load --finish` does the same work for fleets that leave it to a
//     final step (--no-finish), or after a finisher died.

// finisherValue is what this process writes when it claims the finish.
func (l *Load) finisherValue() string {
	if l.Options.Finish {
		return "load --finish (" + store.Holder("load --finish") + ")"
	}
	return l.shardName() + " (" + store.Holder("load --shard") + ")"
}

func (l *Load) shardName() string {
	return fmt.Sprintf("shard %d/%d", l.Options.Shard, l.Options.Shards)
}

// fleetID is this load's identity as a fleet.
func (l *Load) fleetID(shards int) string {
	return workload.FleetID(workload.LoadParams(l.Spec.Config, l.dataHash, l.NowMs), shards)
}

// sameFleet refuses a record of another --shard load.
func (l *Load) sameFleet(recorded string, shards int) error {
	if recorded == l.fleetID(shards) {
		return nil
	}
	if n := workload.FleetShards(recorded); n != shards {
		return fmt.Errorf("the store holds a --shard load of %d shards, this process is one of %d: give every shard the same N, or empty the store with `linkbench init --drop`", n, shards)
	}
	params, _, _ := strings.Cut(recorded, "\nshards=")
	diffs := workload.DiffLoadParams(params, workload.LoadParams(l.Spec.Config, l.dataHash, l.NowMs))
	return fmt.Errorf("the store holds a --shard load with other settings; every shard needs the same (or empty the store with `linkbench init --drop`); these differ:\n  %s",
		strings.ReplaceAll(strings.Join(diffs, "\n  "), "interrupted load had", "the store's load has"))
}

// join registers this shard in the store's record of its fleet. The
// store is looked at before the record: a sibling shard registers before
// it writes a row, so rows seen first mean a registration is seen next.
func (l *Load) join(ctx context.Context) error {
	s := l.Spec
	empty := true
	if ec, ok := s.Store.(store.EmptyChecker); ok {
		var err error
		if empty, err = ec.IsEmpty(ctx); err != nil {
			return err
		}
	}
	id := l.fleetID(l.Options.Shards)
	if !empty {
		meta, err := l.journal.GetMeta(ctx)
		if err != nil {
			return fmt.Errorf("read the load record: %w", err)
		}
		if meta[workload.MetaFleet] == "" {
			return errors.New("the store already holds a graph that no --shard load wrote; empty it with `linkbench init --drop` before starting the shards")
		}
	}
	var held string
	_, err := s.Retry().Do(ctx, func() error {
		var err error
		held, err = l.journal.ClaimMeta(ctx, workload.MetaFleet, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("register the shard in the load record: %w", err)
	}
	return l.sameFleet(held, l.Options.Shards)
}

// partLoaded decides for a shard whose journal says its part is loaded
// (the retry of a pod that did its work): it finishes the graph when
// every shard has loaded and nobody else claimed the finish, or there is
// nothing to do.
func (l *Load) partLoaded(ctx context.Context) error {
	o := l.Options
	meta := l.recorded
	if err := l.sameFleet(meta[workload.MetaFleet], o.Shards); err != nil {
		return err
	}
	if !o.Resume && !o.ResumeAuto {
		return fmt.Errorf("%s of this load is in the store already (its journal says done): nothing to load; `linkbench init --drop` empties the store for a new load", l.shardName())
	}
	_, missing := workload.ShardsLoaded(meta, o.Shards)
	switch {
	case meta[workload.MetaFleetFinished] == "true":
		l.Nothing = fmt.Sprintf("%s is loaded and the graph finished (by %s): nothing to do", l.shardName(), meta[workload.MetaFleetFinisher])
		return nil
	case len(missing) > 0:
		l.Nothing = fmt.Sprintf("%s is loaded; %d of %d shards are not: the last to load finishes the graph", l.shardName(), len(missing), o.Shards)
		return nil
	case o.NoFinish:
		l.Nothing = fmt.Sprintf("%s is loaded; every shard is: `linkbench load --finish` finishes the graph (--no-finish)", l.shardName())
		return nil
	}
	held, err := l.claimFinish(ctx)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(held, l.shardName()+" ") {
		l.Nothing = fmt.Sprintf("%s is loaded; %s finishes the graph (if it stopped, `linkbench load --finish` does)", l.shardName(), held)
		return nil
	}
	s := l.Spec
	s.Log.Infof("%s is loaded, and every shard is: finishing the graph (claimed by %s)", l.shardName(), held)
	l.FinishOnly, l.finisher = true, true
	return nil
}

func (l *Load) claimFinish(ctx context.Context) (string, error) {
	var held string
	_, err := l.Spec.Retry().Do(ctx, func() error {
		var err error
		held, err = l.journal.ClaimMeta(ctx, workload.MetaFleetFinisher, l.finisherValue())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("claim the graph's finishing steps: %w", err)
	}
	return held, nil
}

// shardLoaded is the load phase's Finishes for one shard: it marks the
// shard's part loaded (its journal goes, its state says done) and
// reports whether this process finishes the graph.
func (l *Load) shardLoaded(ctx context.Context) (bool, error) {
	s, o := l.Spec, l.Options
	meta := l.meta(false)
	meta[l.prefix+workload.JournalState] = workload.JournalDone
	if _, err := s.Retry().Do(ctx, func() error { return l.journal.UpdateMeta(ctx, meta, l.prefix) }); err != nil {
		return false, fmt.Errorf("record the shard's part as loaded: %w", err)
	}
	if o.NoFinish {
		s.Log.Infof("%s loaded its part; `linkbench load --finish` finishes the graph once every shard has (--no-finish)", l.shardName())
		return false, nil
	}
	var all map[string]string
	if _, err := s.Retry().Do(ctx, func() error {
		var err error
		all, err = l.journal.GetMeta(ctx)
		return err
	}); err != nil {
		return false, fmt.Errorf("read the load record: %w", err)
	}
	if _, missing := workload.ShardsLoaded(all, o.Shards); len(missing) > 0 {
		s.Log.Infof("%s loaded its part; %d of %d shards still load: the last to finish builds the indexes", l.shardName(), len(missing), o.Shards)
		return false, nil
	}
	held, err := l.claimFinish(ctx)
	if err != nil {
		return false, err
	}
	if held != l.finisherValue() {
		s.Log.Infof("%s loaded its part; every shard has, and %s finishes the graph", l.shardName(), held)
		return false, nil
	}
	s.Log.Infof("%s loaded its part and is the last: it finishes the graph (index builds, statistics)", l.shardName())
	l.finisher = true
	return true, nil
}

// decideFinish prepares `load --finish`: the store must hold a --shard
// load whose shards have all loaded.
func (l *Load) decideFinish(ctx context.Context) error {
	if !l.CanResume {
		return fmt.Errorf("store %s keeps no load record: its --shard loads finish in each process", l.Spec.Driver.Name)
	}
	meta, err := l.journal.GetMeta(ctx)
	if err != nil {
		return fmt.Errorf("read the load record: %w", err)
	}
	l.recorded = meta
	id := meta[workload.MetaFleet]
	n := workload.FleetShards(id)
	if n == 0 {
		return errors.New("nothing to finish: the store holds no --shard load (a load without --shard finishes itself)")
	}
	if _, missing := workload.ShardsLoaded(meta, n); len(missing) > 0 {
		names := make([]string, len(missing))
		for i, m := range missing {
			names[i] = fmt.Sprintf("%d/%d", m, n)
		}
		return fmt.Errorf("cannot finish the --shard load: shards %s have not loaded their part (still running, interrupted or never started); `linkbench load --shard I/N --resume` continues an interrupted one", strings.Join(names, ", "))
	}
	if meta[workload.MetaFleetFinished] == "true" {
		l.Nothing = fmt.Sprintf("the --shard load of %d shards is finished already (by %s): nothing to do", n, meta[workload.MetaFleetFinisher])
	}
	return nil
}

// adoptFinish takes the fleet's seed and load time (unless the user
// gives them), checks the other settings are the shards', and claims the
// finish, overriding a claim whose holder stopped.
func (l *Load) adoptFinish(ctx context.Context) error {
	meta := l.recorded
	cfg := l.Spec.Config
	if v, ok := meta[workload.MetaSeed]; ok && !workload.UserSet(cfg, workload.MetaSeed) {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			derived := *cfg
			derived.LoadRandomSeed = n
			l.Spec = l.Spec.With(&derived)
		}
	}
	if v, ok := meta[workload.MetaLoadTimeMs]; ok && !workload.UserSet(cfg, "load_time_ms") {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			l.NowMs = n
		}
	}
	id := meta[workload.MetaFleet]
	if err := l.sameFleet(id, workload.FleetShards(id)); err != nil {
		return fmt.Errorf("load --finish needs the shards' settings: %w", err)
	}
	if l.Nothing != "" {
		return nil
	}
	if h := meta[workload.MetaFleetFinisher]; h != "" {
		l.Spec.Log.Warnf("%s claimed the graph's finishing steps and did not record their end: finishing it here (a finisher still at work would be waited for)", h)
	}
	if _, err := l.Spec.Retry().Do(ctx, func() error {
		return l.journal.UpdateMeta(ctx, map[string]string{workload.MetaFleetFinisher: l.finisherValue()}, "")
	}); err != nil {
		return fmt.Errorf("claim the graph's finishing steps: %w", err)
	}
	l.FinishOnly, l.finisher = true, true
	return nil
}
