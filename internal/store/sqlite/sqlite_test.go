package sqlite

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

func open(t *testing.T, props store.MapProps) *Store {
	t.Helper()
	if props["sqlite_path"] == "" {
		props["sqlite_path"] = filepath.Join(t.TempDir(), "lb.db")
	}
	s, err := Open(context.Background(), store.Options{Props: props, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := open(t, store.MapProps{"sqlite_synchronous": "NORMAL"})
		if err := s.Init(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// Reliability(store): corrupt or foreign SQLite file, path under a regular file, foreign Pebble directory | one line naming the path and the fix
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.db")
	os.WriteFile(corrupt, []byte(strings.Repeat("this is not sqlite ", 1000)), 0o644)
	if _, err := Open(ctx, store.Options{Props: store.MapProps{"sqlite_path": corrupt}}); err == nil || !strings.Contains(err.Error(), "not a SQLite database or is corrupt") {
		t.Errorf("corrupt file: %v", err)
	}
	if os.Getuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o500)
		if _, err := Open(ctx, store.Options{Props: store.MapProps{"sqlite_path": filepath.Join(ro, "x", "lb.db")}}); err == nil || !strings.Contains(err.Error(), "writable") {
			t.Errorf("unwritable dir: %v", err)
		}
	}
	file := filepath.Join(dir, "plainfile")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(ctx, store.Options{Props: store.MapProps{"sqlite_path": filepath.Join(file, "lb.db")}}); err == nil || !strings.Contains(err.Error(), "writable") {
		t.Errorf("path under a file: %v", err)
	}
	if _, err := Open(ctx, store.Options{Props: store.MapProps{"sqlite_path": filepath.Join(dir, "a.db"), "sqlite_synchronous": "SOMETIMES"}}); err == nil || !strings.Contains(err.Error(), "sqlite_synchronous") {
		t.Errorf("bad synchronous: %v", err)
	}
	// A database made by another program: tables exist with other columns.
	other := open(t, store.MapProps{"sqlite_path": filepath.Join(dir, "other.db")})
	if _, err := other.w.Exec("CREATE TABLE linktable (a INTEGER, b TEXT)"); err != nil {
		t.Fatal(err)
	}
	if err := other.CheckSchema(ctx); err == nil || !strings.Contains(err.Error(), "no column") {
		t.Errorf("foreign schema: %v", err)
	}
	empty := open(t, store.MapProps{})
	if err := empty.CheckSchema(ctx); err == nil || !strings.Contains(err.Error(), "`linkbench load` creates the schema") {
		t.Errorf("missing tables: %v", err)
	}
}

// TestLockRules: load, truncate and runs on one database file follow the
// one-writer rule (lock files beside it, flock), naming the holder.
func TestLockRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lb.db")
	storetest.LockRules(t, func(t *testing.T) store.Store {
		s, err := Open(context.Background(), store.Options{Props: store.MapProps{"sqlite_path": path}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestTableNamesAreQuoted: a table name with SQL in it is a name, not a
// statement: the store creates and uses a table of that name, and the
// node table it meant to drop is still there (the config refuses such
// names; a program opening the store directly is protected by quoting).
// Reliability(store): SQL in a table name of a store opened directly | quoted: it names a table and never changes a statement
func TestTableNamesAreQuoted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lb.db")
	evil := `x"; DROP TABLE nodetable; --`
	s, err := Open(context.Background(), store.Options{Props: store.MapProps{"sqlite_path": path, "linktable": evil}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 2, Visibility: 1, Data: []byte("d")}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountLinks(ctx, 1, 1); err != nil || n != 1 {
		t.Fatalf("count %d, %v", n, err)
	}
	var names []string
	rows, _ := s.r.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	if !slices.Contains(names, evil) || !slices.Contains(names, "nodetable") {
		t.Fatalf("tables %q", names)
	}
}

// TestIndexBuildEstimate: SQLite says nothing while it builds an index;
// the store estimates the rows done from the time the build has run at
// indexPace times the load's insert rate, marked as an estimate and held
// under the whole until the build ends. A real build is asked as a load
// asks it.
func TestIndexBuildEstimate(t *testing.T) {
	step := store.StepStatus{Name: indexStage, Rows: 1000000, Elapsed: 5 * time.Second, InsertRowsPerSec: 100000}
	s := open(t, store.MapProps{})
	p, ok, err := s.StepProgress(context.Background(), step)
	// 5 s at 0.77 x 100,000 rows/s: 385,000 of 1,000,000 rows.
	if err != nil || !ok || !p.Estimated || p.Done != 385000 || p.Total != 1000000 || math.Abs(p.Fraction-0.385) > 1e-9 {
		t.Errorf("estimate after 5 s: %+v %v %v", p, ok, err)
	}
	step.Elapsed = time.Minute
	if p, _, _ := s.StepProgress(context.Background(), step); p.Fraction != 0.99 || p.Done != 990000 {
		t.Errorf("a build past its estimate: %+v, want 99%%", p)
	}
	for _, other := range []store.StepStatus{{Name: "analyze", Rows: 5, Elapsed: time.Second, InsertRowsPerSec: 1}, {Name: indexStage, Rows: 5, Elapsed: time.Second}} {
		if _, ok, _ := s.StepProgress(context.Background(), other); ok {
			t.Errorf("%+v: an estimate without its grounds", other)
		}
	}
	if err := s.Init(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	for _, p := range storetest.IndexBuildProgress(t, s, 50000) {
		if !p.Estimated {
			t.Errorf("an estimate not marked as one: %+v", p)
		}
	}
}
