package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// IndexBuildProgress bulk loads rows links into st (whose tables must be
// empty, so that BeginLoad defers the index) and, while EndLoad builds
// the index, asks the store how far the build has got, as a load's
// progress does, every 10 ms. It fails unless the store answered at least
// once with part of the build done, and every answer with rows done of
// rows within the build's rows. It returns the answers that said
// something.
func IndexBuildProgress(t *testing.T, st store.Store, rows int) []store.StepProgress {
	t.Helper()
	lo := st.(store.BulkLoader)
	sp := st.(store.StepProgresser)
	ctx := context.Background()
	var mu sync.Mutex
	var stage string
	var began time.Time
	info := store.LoadInfo{StartID1: 1, MaxID1: int64(rows/10 + 1), Links: int64(rows),
		Stage: func(name string, _ int64) func() {
			mu.Lock()
			stage, began = name, time.Now()
			mu.Unlock()
			return func() { mu.Lock(); stage = ""; mu.Unlock() }
		}}
	if err := lo.BeginLoad(ctx, info); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	data := []byte(fmt.Sprintf("%0100d", 0))
	batch := make([]graph.Link, 0, 10000)
	for i := 0; i < rows; i++ {
		batch = append(batch, graph.Link{ID1: int64(i/10 + 1), LinkType: graph.DefaultLinkType, ID2: int64(i%10 + 1), Visibility: graph.VisibilityDefault, Data: data, Version: 1, Time: int64(i)})
		if len(batch) == cap(batch) || i == rows-1 {
			if err := lo.LoadLinks(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	rate := float64(rows) / time.Since(start).Seconds()
	ended := make(chan error, 1)
	go func() { ended <- lo.EndLoad(ctx, info) }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var said []store.StepProgress
	asked := 0
	for {
		select {
		case err := <-ended:
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("index build of %d rows: asked %d times, %d answers told progress", rows, asked, len(said))
			if len(said) == 0 {
				t.Fatalf("the store never told how far the index build of %d rows had got", rows)
			}
			return said
		case <-tick.C:
		}
		mu.Lock()
		name, elapsed := stage, time.Since(began)
		mu.Unlock()
		if name == "" {
			continue
		}
		asked++
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		p, ok, err := sp.StepProgress(qctx, store.StepStatus{Name: name, Rows: int64(rows), Elapsed: elapsed, InsertRowsPerSec: rate})
		cancel()
		if err != nil {
			t.Errorf("StepProgress of %q: %v", name, err)
			continue
		}
		if !ok || p.Fraction <= 0 {
			continue
		}
		if p.Done < 0 || p.Done > p.Total || p.Total != int64(rows) || p.Fraction > 1 {
			t.Errorf("step %q: %d of %d rows, %.3f done; the build has %d rows", name, p.Done, p.Total, p.Fraction, rows)
		}
		said = append(said, p)
	}
}
