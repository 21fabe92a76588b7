package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/workload"
)

// checkGraph compares the store's graph with the configuration before
// command ("run", "sweep", "check") works on it: parameters the user did not
// set are taken from the graph, and any remaining difference (no graph,
// another maxid1 or seed, an unfinished load) refuses the command with exit
// 1, unless --ignore-graph. The outcome goes into the results. `check`
// verifies the counts whatever the graph's parameters: it is refused only
// for a store with no graph or an unfinished load.
func (a *app) checkGraph(ctx context.Context, e *env, st store.Store, command string) error {
	gs := workload.GraphState{PerProcess: e.drv.PerProcess}
	if ec, ok := st.(store.EmptyChecker); ok {
		empty, err := ec.IsEmpty(ctx)
		if err != nil {
			return fmt.Errorf("read the store: %w", err)
		}
		gs.Empty, gs.EmptyKnown = empty, true
	}
	if ms, ok := st.(store.MetaStore); ok {
		meta, err := ms.GetMeta(ctx)
		if err != nil {
			return fmt.Errorf("read graph metadata: %w", err)
		}
		gs.Meta = meta
	}
	dataHash := ""
	if e.data != nil {
		dataHash = e.data.Hash()
	}
	v := workload.CheckGraph(e.cfg, gs, dataHash)
	if command == "check" {
		v.Adopted = nil
		kept := v.Problems[:0]
		for _, p := range v.Problems {
			if p.Key == workload.ProblemNoGraph || p.Key == workload.ProblemUnfinishedLoad {
				kept = append(kept, p)
			}
		}
		v.Problems = kept
	}
	if len(v.Adopted) > 0 {
		e.log.Infof("using the loaded graph's %s", strings.Join(v.Adopted, ", "))
	}
	if v.Unrecorded {
		e.log.Warnf("the store holds a graph without linkbench's record of its load (loaded by another tool?): its parameters cannot be checked against the configuration")
	}
	rec := &report.GraphCheck{Adopted: v.Adopted, Unrecorded: v.Unrecorded}
	a.graphCheck = rec
	if len(v.Problems) == 0 {
		return nil
	}
	if !a.opts.ignoreGraph {
		return &exitError{code: 1, err: workload.GraphError(command, v.Problems)}
	}
	rec.Ignored = true
	for _, p := range v.Problems {
		rec.Problems = append(rec.Problems, p.String())
		e.log.Warnf("--ignore-graph: %s", p)
	}
	return nil
}
