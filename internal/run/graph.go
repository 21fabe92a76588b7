package run

import (
	"context"
	"fmt"
	"strings"

	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/workload"
)

// GraphError is a store whose graph does not match the configuration
// (no graph, other parameters, an unfinished load).
type GraphError struct{ Err error }

func (e *GraphError) Error() string { return e.Err.Error() }
func (e *GraphError) Unwrap() error { return e.Err }

// CheckGraph compares the store's graph with the configuration before
// command ("run", "sweep", "check") works on it. Parameters the user did
// not set are taken from the graph: the Spec returned runs with them. Any
// remaining difference (no graph, another maxid1 or seed, an unfinished
// load) is a *GraphError unless ignore (--ignore-graph), when it is
// logged. `check` verifies the counts whatever the graph's parameters: it
// is refused only for a store with no graph or an unfinished load. The
// outcome, for the results, is returned in every case.
func CheckGraph(ctx context.Context, s Spec, command string, ignore bool) (Spec, *report.GraphCheck, error) {
	gs := workload.GraphState{PerProcess: s.Driver.PerProcess}
	if ec, ok := s.Store.(store.EmptyChecker); ok {
		empty, err := ec.IsEmpty(ctx)
		if err != nil {
			return s, nil, fmt.Errorf("read the store: %w", err)
		}
		gs.Empty, gs.EmptyKnown = empty, true
	}
	if ms, ok := s.Store.(store.MetaStore); ok {
		meta, err := ms.GetMeta(ctx)
		if err != nil {
			return s, nil, fmt.Errorf("read graph metadata: %w", err)
		}
		gs.Meta = meta
	}
	v := workload.CheckGraph(s.Config, gs, s.DataHash())
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
	s = s.With(v.Config)
	if len(v.Adopted) > 0 {
		s.Log.Infof("using the loaded graph's %s", strings.Join(v.Adopted, ", "))
	}
	if v.Unrecorded {
		s.Log.Warnf("the store holds a graph without linkbench's record of its load (loaded by another tool?): its parameters cannot be checked against the configuration")
	}
	rec := &report.GraphCheck{Adopted: v.Adopted, Unrecorded: v.Unrecorded}
	if len(v.Problems) == 0 {
		return s, rec, nil
	}
	if !ignore {
		return s, rec, &GraphError{workload.GraphError(command, v.Problems)}
	}
	rec.Ignored = true
	for _, p := range v.Problems {
		rec.Problems = append(rec.Problems, p.String())
		s.Log.Warnf("--ignore-graph: %s", p)
	}
	return s, rec, nil
}
