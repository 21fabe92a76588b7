package workload

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/store"
)

// progressLoader builds an "index" in EndLoad until the load has asked
// how far the build got, and says half.
type progressLoader struct {
	hashLoader
	once  sync.Once
	step  store.StepStatus // the first question, set before asked closes
	asked chan struct{}
}

func (p *progressLoader) EndLoad(ctx context.Context, info store.LoadInfo) error {
	end := info.BeginStage("build index id1_type", info.Links)
	defer end()
	select {
	case <-p.asked:
	case <-time.After(10 * time.Second):
	}
	return nil
}

func (p *progressLoader) StepProgress(_ context.Context, step store.StepStatus) (store.StepProgress, bool, error) {
	p.once.Do(func() { p.step = step; close(p.asked) })
	return store.StepProgress{Done: step.Rows / 2, Total: step.Rows, Fraction: 0.5, Phase: "sorting"}, true, nil
}

// TestLoadAsksHowFarTheStepHasGot: during the store's finishing work the
// load asks a store that can tell how far the step under way has got,
// with the step's name and rows, how long it has run and the inserts'
// rate, and reports the answer with its progress.
func TestLoadAsksHowFarTheStepHasGot(t *testing.T) {
	cfg, data := testConfig(t, "nlinks_func=const", "nlinks_default=2")
	st := &progressLoader{asked: make(chan struct{})}
	var mu sync.Mutex
	var seen []LoadProgress
	lp := &LoadPhase{Config: cfg, Store: st, Graph: testGraph(t, cfg, data), Retry: store.DefaultRetryPolicy,
		OnProgress: func(p LoadProgress) { mu.Lock(); seen = append(seen, p); mu.Unlock() }}
	res, err := lp.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.asked:
	default:
		t.Fatal("the load never asked the store how far its index build had got")
	}
	step := st.step
	if step.Name != "build index id1_type" || step.Rows != res.Links || step.InsertRowsPerSec <= 0 || step.Elapsed < 0 {
		t.Errorf("the load asked about %+v (the load wrote %d links)", step, res.Links)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range seen {
		if p.StepKnown {
			if p.Stage != "build index id1_type" || p.Step.Fraction != 0.5 || p.Step.Total != res.Links || p.Step.Phase != "sorting" {
				t.Errorf("progress %+v", p)
			}
			return
		}
	}
	t.Errorf("no progress report carried the step's progress: %+v", seen)
}
