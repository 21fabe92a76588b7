package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// item is one row of a target's scan, keyed by (id1, link_type).
type item[T any] struct {
	id1, lt int64
	v       T
}

// errMisrouted names a row found on a target that does not own its id1.
type errMisrouted struct {
	what       string
	id1, lt    int64
	on, belong string
}

func (e errMisrouted) Error() string {
	return fmt.Sprintf("%s of id1 %d link_type %d is on target %s, but id1 %d belongs to target %s: the data was not written with this routing (same hosts, dbcount and dbload?)",
		e.what, e.id1, e.lt, e.on, e.id1, e.belong)
}

// merge runs scan on every target at once and passes the rows to fn in
// (id1, link_type) order, as each target's scan is ordered. A row on a
// target that does not own its id1 stops the scan with an error, so the
// consistency check also proves the routing.
func merge[T any](ctx context.Context, s *Store, what string, scan func(ctx context.Context, sc store.Scanner, emit func(id1, lt int64, v T) error) error, fn func(T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chans := make([]chan item[T], len(s.stores))
	errs := make([]error, len(s.stores))
	var wg sync.WaitGroup
	for i, st := range s.stores {
		sc, ok := st.(store.Scanner)
		if !ok {
			return errors.New("the store cannot scan its tables")
		}
		ch := make(chan item[T], 512)
		chans[i] = ch
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(ch)
			errs[i] = scan(ctx, sc, func(id1, lt int64, v T) error {
				select {
				case ch <- item[T]{id1, lt, v}:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
		}()
	}
	heads := make([]item[T], len(chans))
	live := make([]bool, len(chans))
	next := func(i int) {
		heads[i], live[i] = <-chans[i]
	}
	for i := range chans {
		next(i)
	}
	var err error
	for err == nil {
		best := -1
		for i := range heads {
			if live[i] && (best < 0 || heads[i].id1 < heads[best].id1 || heads[i].id1 == heads[best].id1 && heads[i].lt < heads[best].lt) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		h := heads[best]
		if owner := s.Route(h.id1); owner != best {
			err = errMisrouted{what, h.id1, h.lt, s.targets[best].String(), s.targets[owner].String()}
			break
		}
		if err = fn(h.v); err != nil {
			break
		}
		next(best)
	}
	cancel()
	for _, ch := range chans {
		for range ch {
		}
	}
	wg.Wait()
	if err != nil {
		return err
	}
	for i, e := range errs {
		if e != nil {
			return fmt.Errorf("target %s: %w", s.targets[i], e)
		}
	}
	return nil
}

// ScanCounts implements store.Scanner over all targets, in order.
func (s *Store) ScanCounts(ctx context.Context, fn func(c graph.Count) error) error {
	return merge(ctx, s, "the count row", func(ctx context.Context, sc store.Scanner, emit func(id1, lt int64, c graph.Count) error) error {
		return sc.ScanCounts(ctx, func(c graph.Count) error { return emit(c.ID1, c.LinkType, c) })
	}, fn)
}

type visibleCount struct{ id1, lt, n int64 }

// ScanVisibleLinkCounts implements store.Scanner over all targets, in order.
func (s *Store) ScanVisibleLinkCounts(ctx context.Context, fn func(id1, linkType, visible int64) error) error {
	return merge(ctx, s, "a visible link", func(ctx context.Context, sc store.Scanner, emit func(id1, lt int64, v visibleCount) error) error {
		return sc.ScanVisibleLinkCounts(ctx, func(id1, lt, n int64) error { return emit(id1, lt, visibleCount{id1, lt, n}) })
	}, func(v visibleCount) error { return fn(v.id1, v.lt, v.n) })
}

// NodeIDRange implements store.Scanner: the range over all targets.
func (s *Store) NodeIDRange(ctx context.Context) (lo, hi int64, ok bool, err error) {
	for i, st := range s.stores {
		sc, isScanner := st.(store.Scanner)
		if !isScanner {
			return 0, 0, false, errors.New("the store cannot scan its tables")
		}
		a, b, has, err := sc.NodeIDRange(ctx)
		if err != nil {
			return 0, 0, false, fmt.Errorf("target %s: %w", s.targets[i], err)
		}
		if !has {
			continue
		}
		if !ok || a < lo {
			lo = a
		}
		if !ok || b > hi {
			hi = b
		}
		ok = true
	}
	return lo, hi, ok, nil
}
