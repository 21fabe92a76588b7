package workload

import (
	"context"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
)

// TestShareRowsAreWhatTheLoadWrites: a shard's ShareRows are the rows its
// load writes, whole or resumed (a resumed load skips the units written
// before; ShareRows still counts them), super nodes' pieces included.
func TestShareRowsAreWhatTheLoadWrites(t *testing.T) {
	cfg, data := testConfig(t)
	whole := loadHash(t, 2, 0, 1)
	for _, shards := range []int{1, 3} {
		var sum [3]int64
		for shard := range shards {
			h := &hashLoader{}
			lp := &LoadPhase{Config: cfg, Store: h, Graph: testGraph(t, cfg, data), Retry: store.DefaultRetryPolicy, Shard: shard, Shards: shards}
			if _, err := lp.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			// As if an interrupted load had written the first chunk.
			lp.Resume = map[string]string{chunkUnit(cfg.StartID1): JournalDone, nodeUnit(cfg.StartID1): JournalDone}
			nodes, links, counts, exact, err := lp.ShareRows(context.Background())
			if err != nil || !exact {
				t.Fatal(err, exact)
			}
			if nodes != h.nodes || links != h.links || counts != h.counts {
				t.Errorf("shard %d of %d: ShareRows %d nodes, %d links, %d counts; the load wrote %d, %d, %d",
					shard, shards, nodes, links, counts, h.nodes, h.links, h.counts)
			}
			sum[0], sum[1], sum[2] = sum[0]+nodes, sum[1]+links, sum[2]+counts
		}
		if sum != [3]int64{whole.nodes, whole.links, whole.counts} {
			t.Errorf("%d shards sum to %v, the whole graph is %d nodes, %d links, %d counts", shards, sum, whole.nodes, whole.links, whole.counts)
		}
	}
}
