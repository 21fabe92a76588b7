package mongo

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentUpdateMetaOfOneKey: loaders that record progress under
// the same new key at once all succeed. Two upserts of one missing _id
// can both miss it and both insert; the loser's duplicate-key error
// (E11000) failed a resumed load in CI.
func TestConcurrentUpdateMetaOfOneKey(t *testing.T) {
	ctx := context.Background()
	s := fresh(t, nil)
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	const writers, keys = 8, 40
	for k := range keys {
		key := fmt.Sprintf("journal.c%d", k)
		start := make(chan struct{})
		errs := make(chan error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs <- s.UpdateMeta(ctx, map[string]string{key: fmt.Sprint(w)}, "")
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("UpdateMeta of %s by %d writers at once: %v", key, writers, err)
			}
		}
	}
}
