package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/workload"
)

// Request is a request phase ready to run: its schema checked, its graph,
// generators and arrival schedule built.
type Request struct {
	// Spec runs the phase: its Config is derived from the given one, with
	// maxtime covering every loop and ending with the last stage.
	Spec Spec
	// Loop is the configuration as given: maxtime is one loop's.
	Loop  *config.Config
	Phase *workload.RequestPhase
}

// PrepareRequest checks the schema and builds the request phase of s
// (shard is the --shard index, which offsets the requesters' seeds). The
// caller adds its callbacks and runs Phase.
func PrepareRequest(ctx context.Context, s Spec, shard int, progressEvery time.Duration) (*Request, error) {
	r := &Request{Loop: s.Config, Spec: s.With(looped(s.Config, s.Log))}
	cfg := r.Spec.Config
	if err := CheckSchema(ctx, s.Store); err != nil {
		return nil, err
	}
	g, err := r.Spec.Graph(time.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	gens, err := workload.NewGens(cfg)
	if err != nil {
		return nil, err
	}
	s.Log.Infof("request phase: %d requesters, %s, warm-up %s, seed %d", cfg.Requesters, limitText(cfg), cfg.WarmupTime, cfg.RequestRandomSeed)
	s.Log.Infof("workload semantics: %s", semanticsText(cfg))
	r.Phase = &workload.RequestPhase{Config: cfg, Store: s.Store, Graph: g, Data: s.Data, Gens: gens, Retry: r.Spec.Retry(), SeedOffset: uint64(shard), ProgressEvery: progressEvery}
	sched, total, err := openLoopSchedule(cfg)
	if err != nil {
		return nil, err
	}
	if sched != nil {
		if total < cfg.MaxTime {
			// A staged run ends with its last stage.
			staged := *cfg
			staged.MaxTime = total
			if r.Loop == cfg {
				// One loop: it is the whole phase.
				r.Loop = &staged
			}
			r.Spec = r.Spec.With(&staged)
			r.Phase.Config = &staged
		}
		r.Phase.Schedule = sched
		s.Log.Infof("open loop: %s arrivals, %s", map[bool]string{true: "poisson", false: "uniform"}[cfg.ArrivalPoisson], describeStages(cfg))
	}
	return r, nil
}

// looped is the configuration of a request phase of loops = N: N
// consecutive windows of maxtime after one warm-up, so its maxtime is the
// whole (the recorded config keeps the keys as given).
func looped(cfg *config.Config, log Logger) *config.Config {
	if cfg.Loops <= 1 {
		return cfg
	}
	if cfg.Requests > 0 {
		log.Warnf("loops = %d with requests = %d per requester: the run ends at whichever comes first (requests = 0 runs every loop for its maxtime)", cfg.Loops, cfg.Requests)
	}
	c := *cfg
	c.MaxTime = cfg.MaxTime * time.Duration(cfg.Loops)
	return &c
}

// openLoopSchedule builds the global arrival schedule of arrival_rate or
// stages (nil when neither is set) and the stages' total length (0
// without stages).
func openLoopSchedule(cfg *config.Config) (*workload.Schedule, time.Duration, error) {
	var stages []workload.Stage
	var total time.Duration
	switch {
	case len(cfg.StageList) > 0:
		stages = cfg.StageList
		for _, s := range stages {
			total += s.Duration
		}
	case cfg.ArrivalRate > 0:
		stages = []workload.Stage{{Rate: cfg.ArrivalRate}}
		total = cfg.MaxTime
	default:
		return nil, 0, nil
	}
	return workload.NewSchedule(time.Now(), stages, cfg.ArrivalPoisson, cfg.RampTime, uint64(cfg.RequestRandomSeed)), total, nil
}

func describeStages(cfg *config.Config) string {
	if cfg.Stages != "" {
		return "stages " + cfg.Stages
	}
	return fmt.Sprintf("%.0f requests/s in total", cfg.ArrivalRate)
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
		if cfg.RequestPacing == config.PacingReference {
			parts = append(parts, "paced as the reference (whole-millisecond sleeps)")
		}
	}
	return strings.Join(parts, ", ")
}

// Verdict is the error of a request phase that ran (runErr is what its
// Run returned): a requester that failed more than max_failed_requests
// times, else runErr when there is one, else a store that hung (still
// waiting at maxtime + maxtime_grace) or was lost for good (connection
// errors to the end): the run must not pass for a good one.
func (r *Request) Verdict(res *workload.RequestResult, runErr error) error {
	cfg := r.Spec.Config
	if errors.Is(runErr, workload.ErrTooManyFailures) {
		return fmt.Errorf("a requester failed more than max_failed_requests = %d times; the last error: %v", cfg.MaxFailedRequests, firstError(res))
	}
	if runErr != nil {
		return runErr
	}
	where := r.Spec.where()
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
			cfg.MaxTimeGrace, len(res.HardEnd), where, strings.Join(names, ", "))
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

func firstError(res *workload.RequestResult) error {
	if res.LastError != nil {
		return res.LastError
	}
	return errors.New("unknown")
}
