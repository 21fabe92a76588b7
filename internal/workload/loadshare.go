package workload

import "context"

// ShareRows are the rows of this process's share of the graph, every unit
// counted whether this load writes it or an interrupted one did: what the
// store holds of this shard once its load is complete, which a resumed
// load reports as the whole load's. Links are counted exactly up to
// exactCountIDs ids of the shard's own and estimated above (exact false).
func (p *LoadPhase) ShareRows(ctx context.Context) (nodes, links, counts int64, exact bool, err error) {
	whole := *p
	whole.Resume, whole.OnPrepare = nil, nil
	shards := max(p.Shards, 1)
	if links, nodes, err = whole.expected(ctx, shards); err != nil {
		return 0, 0, 0, false, err
	}
	ids := p.plan(shards).ids()
	return nodes, links, ids * int64(p.Config.LinkTypeCount), ids <= exactCountIDs, nil
}
