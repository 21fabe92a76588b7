// Package check verifies the consistency invariant of SPEC section 2 on
// any store: for every (id1, link_type), the count row equals the number
// of visible links. It merges two ordered streams from the store in one
// pass, so it needs O(1) memory whatever the graph's size.
package check

import (
	"context"
	"errors"
	"fmt"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// Options tune a check.
type Options struct {
	// MaxReported is how many mismatches are kept in full (default 20).
	MaxReported int
}

// Mismatch is one (id1, link_type) whose count row disagrees with its links.
type Mismatch struct {
	ID1, LinkType int64
	Count         int64 // the count row's value (0 when HasRow is false)
	HasRow        bool
	Visible       int64 // visible links
}

func (m Mismatch) String() string {
	row := fmt.Sprintf("count row %d", m.Count)
	if !m.HasRow {
		row = "no count row"
	}
	return fmt.Sprintf("id1 %d link_type %d: %s, %d visible links", m.ID1, m.LinkType, row, m.Visible)
}

// Result is what a check found.
type Result struct {
	Keys       int64      // (id1, link_type) keys checked
	Mismatches int64      // total
	First      []Mismatch // the first MaxReported
	Nodes      bool       // there are nodes
	MinNode    int64
	MaxNode    int64
	NodeIssues []string
}

// OK reports whether the store is consistent.
func (r *Result) OK() bool { return r.Mismatches == 0 && len(r.NodeIssues) == 0 }

type visible struct{ id1, lt, n int64 }

var errStop = errors.New("stop")

// Run checks the store.
func Run(ctx context.Context, s store.Scanner, o Options) (*Result, error) {
	if o.MaxReported <= 0 {
		o.MaxReported = 20
	}
	res := &Result{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The visible-link stream runs in its own goroutine, in batches.
	ch := make(chan []visible, 4)
	scanErr := make(chan error, 1)
	go func() {
		defer close(ch)
		batch := make([]visible, 0, 1024)
		err := s.ScanVisibleLinkCounts(ctx, func(id1, lt, n int64) error {
			batch = append(batch, visible{id1, lt, n})
			if len(batch) == cap(batch) {
				select {
				case ch <- batch:
				case <-ctx.Done():
					return errStop
				}
				batch = make([]visible, 0, 1024)
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			select {
			case ch <- batch:
			case <-ctx.Done():
			}
		}
		scanErr <- err
	}()
	var pending []visible
	next := func() (visible, bool) {
		if len(pending) == 0 {
			b, ok := <-ch
			if !ok {
				return visible{}, false
			}
			pending = b
		}
		return pending[0], true
	}
	pop := func() { pending = pending[1:] }
	report := func(m Mismatch) {
		res.Mismatches++
		if len(res.First) < o.MaxReported {
			res.First = append(res.First, m)
		}
	}
	less := func(a1, t1, a2, t2 int64) bool { return a1 < a2 || (a1 == a2 && t1 < t2) }
	err := s.ScanCounts(ctx, func(c graph.Count) error {
		res.Keys++
		// Visible lists before this count row have no row.
		for {
			v, ok := next()
			if !ok || !less(v.id1, v.lt, c.ID1, c.LinkType) {
				break
			}
			report(Mismatch{ID1: v.id1, LinkType: v.lt, Visible: v.n})
			res.Keys++
			pop()
		}
		var n int64
		if v, ok := next(); ok && v.id1 == c.ID1 && v.lt == c.LinkType {
			n = v.n
			pop()
		}
		if n != c.Count {
			report(Mismatch{ID1: c.ID1, LinkType: c.LinkType, Count: c.Count, HasRow: true, Visible: n})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan counts: %w", err)
	}
	for {
		v, ok := next()
		if !ok {
			break
		}
		report(Mismatch{ID1: v.id1, LinkType: v.lt, Visible: v.n})
		res.Keys++
		pop()
	}
	if err := <-scanErr; err != nil && !errors.Is(err, errStop) {
		return nil, fmt.Errorf("scan links: %w", err)
	}
	lo, hi, ok, err := s.NodeIDRange(ctx)
	if err != nil {
		return nil, fmt.Errorf("node ids: %w", err)
	}
	res.Nodes, res.MinNode, res.MaxNode = ok, lo, hi
	if ok && lo < 1 {
		res.NodeIssues = append(res.NodeIssues, fmt.Sprintf("node id %d is below 1", lo))
	}
	return res, nil
}
