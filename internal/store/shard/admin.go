package shard

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// BeginLoad implements store.BulkLoader on every target.
func (s *Store) BeginLoad(ctx context.Context, info store.LoadInfo) error {
	return s.each(func(_ int, st store.Store) error { return st.(store.BulkLoader).BeginLoad(ctx, info) })
}

// EndLoad implements store.BulkLoader on every target, at once: each
// target's steps are reported under its name, without row counts (a
// target holds only its part of the graph).
func (s *Store) EndLoad(ctx context.Context, info store.LoadInfo) error {
	return s.each(func(i int, st store.Store) error {
		ti := info
		if info.Stage != nil {
			ti.Stage = func(name string, _ int64) func() { return info.Stage(s.targets[i].String()+": "+name, 0) }
		}
		return st.(store.BulkLoader).EndLoad(ctx, ti)
	})
}

// split calls load once per target that owns some of the n rows, with
// the indexes of its rows, all targets at once.
func (s *Store) split(n int, key func(i int) int64, load func(st store.BulkLoader, idx []int) error) error {
	parts := make([][]int, len(s.stores))
	for i := range n {
		t := s.Route(key(i))
		parts[t] = append(parts[t], i)
	}
	return s.each(func(t int, st store.Store) error {
		if len(parts[t]) == 0 {
			return nil
		}
		return load(st.(store.BulkLoader), parts[t])
	})
}

// LoadNodes implements store.BulkLoader: each node goes to its owner.
func (s *Store) LoadNodes(ctx context.Context, nodes []graph.Node) error {
	return s.split(len(nodes), func(i int) int64 { return nodes[i].ID }, func(st store.BulkLoader, idx []int) error {
		part := make([]graph.Node, len(idx))
		for j, i := range idx {
			part[j] = nodes[i]
		}
		return st.LoadNodes(ctx, part)
	})
}

// LoadLinks implements store.BulkLoader: each link goes to its id1's owner.
func (s *Store) LoadLinks(ctx context.Context, links []graph.Link) error {
	return s.split(len(links), func(i int) int64 { return links[i].ID1 }, func(st store.BulkLoader, idx []int) error {
		part := make([]graph.Link, len(idx))
		for j, i := range idx {
			part[j] = links[i]
		}
		return st.LoadLinks(ctx, part)
	})
}

// LoadCounts implements store.BulkLoader: each count goes to its id1's owner.
func (s *Store) LoadCounts(ctx context.Context, counts []graph.Count) error {
	return s.split(len(counts), func(i int) int64 { return counts[i].ID1 }, func(st store.BulkLoader, idx []int) error {
		part := make([]graph.Count, len(idx))
		for j, i := range idx {
			part[j] = counts[i]
		}
		return st.LoadCounts(ctx, part)
	})
}

// BulkBatchRows implements store.BatchHinter: a batch is split between
// the targets, so it is sized for each to get its store's preferred rows.
func (s *Store) BulkBatchRows() int {
	if h, ok := s.stores[0].(store.BatchHinter); ok {
		return h.BulkBatchRows() * len(s.stores)
	}
	return 1024 * len(s.stores)
}

// Init implements store.Initializer on every target.
func (s *Store) Init(ctx context.Context, drop bool) error {
	return s.each(func(_ int, st store.Store) error {
		if in, ok := st.(store.Initializer); ok {
			return in.Init(ctx, drop)
		}
		return nil
	})
}

// CheckSchema checks every target's tables.
func (s *Store) CheckSchema(ctx context.Context) error {
	return s.each(func(_ int, st store.Store) error {
		if sc, ok := st.(store.SchemaChecker); ok {
			return sc.CheckSchema(ctx)
		}
		return nil
	})
}

// Reset implements store.Resetter on every target.
func (s *Store) Reset(ctx context.Context) error {
	return s.each(func(_ int, st store.Store) error {
		if r, ok := st.(store.Resetter); ok {
			return r.Reset(ctx)
		}
		return nil
	})
}

// IsEmpty implements store.EmptyChecker: empty when every target is.
func (s *Store) IsEmpty(ctx context.Context) (bool, error) {
	for i, st := range s.stores {
		ec, ok := st.(store.EmptyChecker)
		if !ok {
			continue
		}
		empty, err := ec.IsEmpty(ctx)
		if err != nil {
			return false, fmt.Errorf("target %s: %w", s.targets[i], err)
		}
		if !empty {
			return false, nil
		}
	}
	return true, nil
}

// The graph's record and the load journal live on the first target.
func (s *Store) journal() (store.Journaler, error) {
	j, ok := s.stores[0].(store.Journaler)
	if !ok {
		return nil, errors.New("the store keeps no load record")
	}
	return j, nil
}

// GetMeta implements store.MetaStore (first target).
func (s *Store) GetMeta(ctx context.Context) (map[string]string, error) {
	j, err := s.journal()
	if err != nil {
		return map[string]string{}, nil
	}
	return j.GetMeta(ctx)
}

// PutMeta implements store.MetaStore (first target).
func (s *Store) PutMeta(ctx context.Context, meta map[string]string) error {
	j, err := s.journal()
	if err != nil {
		return nil
	}
	return j.PutMeta(ctx, meta)
}

// UpdateMeta implements store.Journaler (first target). A unit's rows are
// committed on their targets before the unit is marked done here.
func (s *Store) UpdateMeta(ctx context.Context, set map[string]string, deletePrefix string) error {
	j, err := s.journal()
	if err != nil {
		return err
	}
	return j.UpdateMeta(ctx, set, deletePrefix)
}

// ClaimMeta implements store.Journaler (first target).
func (s *Store) ClaimMeta(ctx context.Context, key, value string) (string, error) {
	j, err := s.journal()
	if err != nil {
		return "", err
	}
	return j.ClaimMeta(ctx, key, value)
}

// SizeOnDisk implements store.Sizer: the sum over the targets.
func (s *Store) SizeOnDisk(ctx context.Context) (int64, error) {
	var total int64
	for _, st := range s.stores {
		if sz, ok := st.(store.Sizer); ok {
			n, err := sz.SizeOnDisk(ctx)
			if err != nil {
				return 0, err
			}
			total += n
		}
	}
	return total, nil
}

// Servers implements store.ServerLocator: the servers of every target.
func (s *Store) Servers(ctx context.Context) ([]store.ServerInfo, error) {
	var out []store.ServerInfo
	for _, st := range s.stores {
		if l, ok := st.(store.ServerLocator); ok {
			infos, err := l.Servers(ctx)
			if err != nil {
				return nil, err
			}
			out = append(out, infos...)
		}
	}
	return out, nil
}

// Describe implements store.Describer: the first target's description and
// the list of targets.
func (s *Store) Describe(ctx context.Context) (store.Description, error) {
	d := store.Description{Settings: map[string]string{}}
	if ds, ok := s.stores[0].(store.Describer); ok {
		var err error
		if d, err = ds.Describe(ctx); err != nil {
			return d, err
		}
		if d.Settings == nil {
			d.Settings = map[string]string{}
		}
	}
	names := make([]string, len(s.targets))
	for i, t := range s.targets {
		names[i] = t.String()
	}
	d.Settings["targets"] = strings.Join(names, ", ")
	d.Settings["routing"] = fmt.Sprintf("id mod %d over a slot table", len(s.table))
	return d, nil
}
