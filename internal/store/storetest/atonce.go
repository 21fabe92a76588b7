package storetest

import (
	"context"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
)

// AtOnce runs fn(0) .. fn(n-1) in n goroutines released together, as the
// processes of a --shard load start together, and returns the first error.
func AtOnce(n int, fn func(i int) error) error {
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := range n {
		go func() {
			<-start
			errs <- fn(i)
		}()
	}
	close(start)
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// BeginAndEndLoadsAtOnce begins a load on every loader at once (each may
// drop a deferred index of the same empty table), then ends them at once
// (each may build it); it fails the test on the first error.
func BeginAndEndLoadsAtOnce(t *testing.T, loaders []store.BulkLoader) {
	t.Helper()
	info := store.LoadInfo{StartID1: 1, MaxID1: 100}
	for _, step := range []func(store.BulkLoader) error{
		func(l store.BulkLoader) error { return l.BeginLoad(context.Background(), info) },
		func(l store.BulkLoader) error { return l.EndLoad(context.Background(), info) },
	} {
		if err := AtOnce(len(loaders), func(i int) error { return step(loaders[i]) }); err != nil {
			t.Fatal(err)
		}
	}
}
