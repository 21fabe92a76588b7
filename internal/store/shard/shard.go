// Package shard spreads one graph over several databases of the same kind,
// as Facebook's graph is spread over MySQL shards: every id1 (its links and
// counts) and every node id lives on exactly one target, chosen by a
// stable function of the id, so load, run and check all agree on where a
// row is.
//
// Targets come from `hosts` (host:port list) and `dbcount` (databases
// <dbprefix>0 .. <dbprefix>(dbcount-1) on each host). An id goes to target
// table[id mod len(table)]: with equal weights the table is 0..N-1 (plain
// modulo); `dbload` percentages build a 100-slot table whose slots are
// interleaved in proportion to the weights.
package shard

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// Target is one database of a sharded store.
type Target struct {
	Host     string // host:port, empty for the store's own
	Database string // empty for the store's own
}

func (t Target) String() string {
	switch {
	case t.Host != "" && t.Database != "":
		return t.Host + "/" + t.Database
	case t.Host != "":
		return t.Host
	}
	return t.Database
}

// Targets reads hosts, dbcount, dbprefix and dbload. It returns one target
// and a nil table when the config names a single database.
func Targets(p store.Props) ([]Target, []int, error) {
	var hosts []string
	if v := store.String(p, "hosts", ""); v != "" {
		for _, h := range strings.Split(v, ",") {
			h = strings.TrimSpace(h)
			if h == "" {
				continue
			}
			if _, _, err := net.SplitHostPort(h); err != nil {
				return nil, nil, fmt.Errorf("hosts (%s): %q is not host:port", p.Where("hosts"), h)
			}
			hosts = append(hosts, h)
		}
	}
	n, err := store.Int(p, "dbcount", 1)
	if err != nil || n < 1 || n > 1024 {
		return nil, nil, fmt.Errorf("dbcount (%s): expected a whole number from 1 to 1024", p.Where("dbcount"))
	}
	var dbs []string
	if n > 1 {
		prefix := store.String(p, "dbprefix", "linkdb")
		for i := range n {
			dbs = append(dbs, prefix+strconv.FormatInt(i, 10))
		}
	}
	var ts []Target
	switch {
	case len(hosts) == 0 && len(dbs) == 0:
		return []Target{{}}, nil, nil
	case len(hosts) == 0:
		for _, d := range dbs {
			ts = append(ts, Target{Database: d})
		}
	case len(dbs) == 0:
		for _, h := range hosts {
			ts = append(ts, Target{Host: h})
		}
	default:
		for _, h := range hosts {
			for _, d := range dbs {
				ts = append(ts, Target{Host: h, Database: d})
			}
		}
	}
	table, err := slotTable(p, len(ts))
	if err != nil {
		return nil, nil, err
	}
	return ts, table, nil
}

// slotTable maps id mod len(table) to a target. Weights from dbload (one
// percentage per target) are spread with smooth weighted round robin, so
// consecutive ids alternate between targets in proportion.
func slotTable(p store.Props, n int) ([]int, error) {
	v := store.String(p, "dbload", "")
	if v == "" {
		t := make([]int, n)
		for i := range t {
			t[i] = i
		}
		return t, nil
	}
	parts := strings.Split(v, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("dbload (%s): %d values for %d targets; give one percentage per target", p.Where("dbload"), len(parts), n)
	}
	w := make([]int, n)
	sum := 0
	for i, s := range parts {
		x, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || x < 0 {
			return nil, fmt.Errorf("dbload (%s): %q is not a whole percentage", p.Where("dbload"), s)
		}
		w[i] = x
		sum += x
	}
	if sum != 100 {
		return nil, fmt.Errorf("dbload (%s): the percentages sum to %d, not 100", p.Where("dbload"), sum)
	}
	table := make([]int, 100)
	cur := make([]int, n)
	for s := range table {
		best := -1
		for i := range cur {
			cur[i] += w[i]
			if best < 0 || cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= 100
		table[s] = best
	}
	return table, nil
}

// overlay gives a target's store its host and database on top of the
// user's keys.
type overlay struct {
	store.Props
	t Target
}

func (o overlay) Get(key string) (string, bool) {
	switch {
	case key == "target_host" && o.t.Host != "":
		return o.t.Host, true
	case key == "target_database" && o.t.Database != "":
		return o.t.Database, true
	case key == "dbid" && o.t.Database != "":
		return o.t.Database, true
	case (key == "host" || key == "port") && o.t.Host != "":
		h, port, _ := net.SplitHostPort(o.t.Host)
		if key == "host" {
			return h, true
		}
		return port, true
	}
	return o.Props.Get(key)
}

// Open opens drv once per target. With a single target it returns that
// store itself.
func Open(ctx context.Context, drv *store.Driver, o store.Options) (store.Store, error) {
	ts, table, err := Targets(o.Props)
	if err != nil {
		return nil, err
	}
	if len(ts) == 1 {
		return drv.Open(ctx, o)
	}
	if drv.CheckTargets != nil && ts[0].Host != "" {
		if err := drv.CheckTargets(o.Props); err != nil {
			return nil, err
		}
	}
	if drv.Embedded { // one file or directory; sharding needs servers
		return nil, fmt.Errorf("hosts/dbcount: the %s store keeps one local database; sharding needs a server store (postgres, mysql, mongodb)", drv.Name)
	}
	s := &Store{targets: ts, table: table}
	for _, t := range ts {
		to := o
		to.Props = overlay{Props: o.Props, t: t}
		st, err := drv.Open(ctx, to)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("target %s: %w", t, err)
		}
		if _, ok := st.(store.BulkLoader); !ok {
			st.Close()
			s.Close()
			return nil, fmt.Errorf("store %s cannot bulk load", drv.Name)
		}
		s.stores = append(s.stores, st)
	}
	return s, nil
}

// Store routes every call to the target that owns its id.
type Store struct {
	targets []Target
	table   []int
	stores  []store.Store
}

// Lock implements store.Locker: every target's lock, in target order.
func (s *Store) Lock(ctx context.Context, mode store.LockMode, holder string) (func(), error) {
	var releases []func()
	release := func() {
		for i := len(releases) - 1; i >= 0; i-- {
			releases[i]()
		}
	}
	for i, st := range s.stores {
		l, ok := st.(store.Locker)
		if !ok {
			continue
		}
		r, err := l.Lock(ctx, mode, holder)
		if err != nil {
			release()
			return nil, fmt.Errorf("target %s: %w", s.targets[i], err)
		}
		releases = append(releases, r)
	}
	return release, nil
}

// Ping implements store.Pinger: every target must answer.
func (s *Store) Ping(ctx context.Context) error {
	return s.each(func(_ int, st store.Store) error {
		if p, ok := st.(store.Pinger); ok {
			return p.Ping(ctx)
		}
		return nil
	})
}

// Addr implements store.Addresser: every target's address.
func (s *Store) Addr() string {
	var out []string
	for _, st := range s.stores {
		out = append(out, store.AddrOf(st))
	}
	return strings.Join(out, ", ")
}

// Route returns the index of the target that owns id.
func (s *Store) Route(id int64) int {
	m := int64(len(s.table))
	return s.table[((id%m)+m)%m]
}

// Targets lists the targets in routing order.
func (s *Store) Targets() []Target { return s.targets }

func (s *Store) of(id int64) store.Store { return s.stores[s.Route(id)] }

// AddLink implements store.Store.
func (s *Store) AddLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.of(l.ID1).AddLink(ctx, l)
}

// UpdateLink implements store.Store.
func (s *Store) UpdateLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.of(l.ID1).UpdateLink(ctx, l)
}

// DeleteLink implements store.Store.
func (s *Store) DeleteLink(ctx context.Context, id1, linkType, id2 int64, expunge bool) (bool, error) {
	return s.of(id1).DeleteLink(ctx, id1, linkType, id2, expunge)
}

// MultigetLinks implements store.Store.
func (s *Store) MultigetLinks(ctx context.Context, id1, linkType int64, id2s []int64, dst []graph.Link) ([]graph.Link, error) {
	return s.of(id1).MultigetLinks(ctx, id1, linkType, id2s, dst)
}

// GetLinkList implements store.Store.
func (s *Store) GetLinkList(ctx context.Context, q graph.ListQuery, dst []graph.Link) ([]graph.Link, error) {
	return s.of(q.ID1).GetLinkList(ctx, q, dst)
}

// CountLinks implements store.Store.
func (s *Store) CountLinks(ctx context.Context, id1, linkType int64) (int64, error) {
	return s.of(id1).CountLinks(ctx, id1, linkType)
}

// AddNode implements store.Store. The id comes from the first target's
// allocator, the one allocator of the fleet, so ids are unique across
// targets and processes; a node whose id another target owns is then
// moved there (written with its id, deleted from the first target), so
// ADD_NODE costs three statements for (N-1)/N of the nodes.
func (s *Store) AddNode(ctx context.Context, n *graph.Node) (int64, error) {
	id, err := s.stores[0].AddNode(ctx, n)
	if err != nil {
		return 0, err
	}
	owner := s.Route(id)
	if owner == 0 {
		return id, nil
	}
	moved := *n
	moved.ID = id
	if err := s.stores[owner].(store.BulkLoader).LoadNodes(ctx, []graph.Node{moved}); err != nil {
		return 0, fmt.Errorf("move new node %d to target %s: %w", id, s.targets[owner], err)
	}
	if _, err := s.stores[0].DeleteNode(ctx, n.Type, id); err != nil {
		return 0, fmt.Errorf("move new node %d off target %s: %w", id, s.targets[0], err)
	}
	return id, nil
}

// GetNode implements store.Store.
func (s *Store) GetNode(ctx context.Context, nodeType int32, id int64) (graph.Node, bool, error) {
	return s.of(id).GetNode(ctx, nodeType, id)
}

// UpdateNode implements store.Store.
func (s *Store) UpdateNode(ctx context.Context, n *graph.Node) (bool, error) {
	return s.of(n.ID).UpdateNode(ctx, n)
}

// DeleteNode implements store.Store.
func (s *Store) DeleteNode(ctx context.Context, nodeType int32, id int64) (bool, error) {
	return s.of(id).DeleteNode(ctx, nodeType, id)
}

// Close implements store.Store.
func (s *Store) Close() error {
	var first error
	for _, st := range s.stores {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// each runs fn on every target at once and returns the first error, named
// by target.
func (s *Store) each(fn func(i int, st store.Store) error) error {
	errs := make([]error, len(s.stores))
	var wg sync.WaitGroup
	for i, st := range s.stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i, st)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("target %s: %w", s.targets[i], err)
		}
	}
	return nil
}
