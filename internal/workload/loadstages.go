package workload

import (
	"context"
	"sync"
	"time"

	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
)

// stepTimeout bounds the store's answer to how far a step has got: the
// progress of a load must not wait on a busy server.
const stepTimeout = time.Second

// stepProgress asks a store that can tell how far the finishing step
// under way has got (an index build) and records it in pr.
func stepProgress(ctx context.Context, st store.BulkLoader, pr *LoadProgress) {
	sp, ok := st.(store.StepProgresser)
	if !ok || pr.Stage == "" {
		return
	}
	rate := 0.0
	if s := pr.InsertElapsed.Seconds(); s > 0 {
		rate = float64(pr.Links) / s
	}
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	p, ok, err := sp.StepProgress(ctx, store.StepStatus{Name: pr.Stage, Rows: pr.StageRows, Elapsed: pr.StageElapsed, InsertRowsPerSec: rate})
	if err == nil && ok {
		pr.Step, pr.StepKnown = p, true
	}
}

// StageEvent reports a load stage: its start (Done false, only for the
// store's finishing steps, whose end is not known in advance) or its end.
type StageEvent struct {
	Stage stats.Stage
	Done  bool
}

// stageLog records the stages of one load. The store's finishing steps
// may be reported from several goroutines at once (a sharded store
// finishes its targets in parallel).
type stageLog struct {
	start time.Time
	on    func(StageEvent)

	mu     sync.Mutex
	stages []stats.Stage
	open   []int // indexes of the finishing steps under way, oldest first
}

func (l *stageLog) since(t time.Time) float64 { return t.Sub(l.start).Seconds() }

// add records a stage that has ended.
func (l *stageLog) add(s stats.Stage) {
	l.mu.Lock()
	l.stages = append(l.stages, s)
	l.mu.Unlock()
	if l.on != nil {
		l.on(StageEvent{Stage: s, Done: true})
	}
}

// begin is store.LoadInfo.Stage: it opens a finishing step now.
func (l *stageLog) begin(name string, rows int64) (end func()) {
	s := stats.Stage{Name: name, Kind: stats.StageFinish, StartSec: l.since(time.Now()), Rows: rows}
	l.mu.Lock()
	i := len(l.stages)
	l.stages = append(l.stages, s)
	l.open = append(l.open, i)
	l.mu.Unlock()
	if l.on != nil {
		l.on(StageEvent{Stage: s})
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.stages[i].Close(l.since(time.Now()))
			done := l.stages[i]
			for k, j := range l.open {
				if j == i {
					l.open = append(l.open[:k], l.open[k+1:]...)
					break
				}
			}
			l.mu.Unlock()
			if l.on != nil {
				l.on(StageEvent{Stage: done, Done: true})
			}
		})
	}
}

// current names the newest finishing step under way, how long it has run
// and its rows ("" when none).
func (l *stageLog) current(now time.Time) (string, time.Duration, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.open) == 0 {
		return "", 0, 0
	}
	s := l.stages[l.open[len(l.open)-1]]
	return s.Name, now.Sub(l.start) - time.Duration(s.StartSec*float64(time.Second)), s.Rows
}

// list returns the stages recorded, in the order they started.
func (l *stageLog) list() []stats.Stage {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]stats.Stage(nil), l.stages...)
	// Insert stages are added when they end but all start at 0.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].StartSec < out[j-1].StartSec; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// insertStage is a stage of rows inserted from the start of the load to end.
func (l *stageLog) insertStage(name string, rows int64, end time.Time) stats.Stage {
	s := stats.Stage{Name: name, Kind: stats.StageInsert, Rows: rows}
	s.Close(l.since(end))
	return s
}
