package sqlstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/graph"
)

// stored is a fake server's state of one link for the RefSteps tests.
type stored struct {
	found   bool
	vis     uint8
	changes bool  // Update changes the row (MySQL reports 0 rows otherwise)
	vanish  int   // the next reads that find nothing (a concurrent delete)
	fail    error // the error of the step named by failAt
	failAt  string
}

// fakeTx runs writes against a stored link and traces their steps.
type fakeTx struct {
	s     *stored
	trace *[]string
	// incCount, when set, replaces IncCount.
	incCount func(int64) (int64, error)
}

func (s *stored) steps(trace *[]string) *fakeTx { return &fakeTx{s: s, trace: trace} }

func (f *fakeTx) step(name string) error {
	*f.trace = append(*f.trace, name)
	if name == f.s.failAt {
		return f.s.fail
	}
	return nil
}

func (f *fakeTx) rows(name string) (int64, error) {
	if err := f.step(name); err != nil {
		return 0, err
	}
	return 1, nil
}

func (f *fakeTx) Insert() (bool, error) {
	err := f.step("insert")
	if f.s.found {
		*f.trace = append(*f.trace, "(duplicate key)")
		return true, nil
	}
	return false, err
}

func (f *fakeTx) AddCount(base int64) error { return f.step([]string{"count+=0", "count+=1"}[base]) }

func (f *fakeTx) ReadVisibility() (uint8, bool, error) {
	err := f.step("read")
	if f.s.vanish > 0 {
		f.s.vanish--
		return 0, false, err
	}
	return f.s.vis, f.s.found, err
}

func (f *fakeTx) Update() (int64, error) {
	if err := f.step("update"); err != nil || !f.s.changes {
		return 0, err
	}
	return 1, nil
}

func (f *fakeTx) Hide() (int64, error)    { return f.rows("hide") }
func (f *fakeTx) Expunge() (int64, error) { return f.rows("expunge") }

func (f *fakeTx) IncCount(delta int64) (int64, error) {
	if f.incCount != nil {
		return f.incCount(delta)
	}
	if delta > 0 {
		return f.rows("count+1")
	}
	return f.rows("count-1")
}

func (f *fakeTx) Commit() error   { return f.step("commit") }
func (f *fakeTx) Rollback() error { return f.step("rollback") }

// TestRefUpsertAndDelete: each path of a link write sends the reference's
// statements in its order, rolls back where it does, and reports its
// result.
func TestRefUpsertAndDelete(t *testing.T) {
	visible, hidden := graph.VisibilityDefault, graph.VisibilityHidden
	for _, c := range []struct {
		name    string
		op      string // add, update, hide, expunge
		s       stored
		vis     uint8 // the write's visibility
		res     string
		want    string
		wantErr string
	}{
		{"ADD_LINK of a new visible link", "add", stored{}, visible, "inserted", "insert count+=1 commit", ""},
		{"ADD_LINK of a new hidden link", "add", stored{}, hidden, "inserted", "insert count+=0 commit", ""},
		{"ADD_LINK over a visible link, kept visible", "add", stored{found: true, vis: visible, changes: true}, visible, "updated",
			"insert (duplicate key) rollback read update commit", ""},
		{"ADD_LINK hiding a visible link", "add", stored{found: true, vis: visible, changes: true}, hidden, "updated",
			"insert (duplicate key) rollback read update count-1 commit", ""},
		{"ADD_LINK identical (MySQL: no row changed)", "add", stored{found: true, vis: visible}, visible, "unchanged",
			"insert (duplicate key) rollback read update rollback", ""},
		{"UPDATE_LINK showing a hidden link", "update", stored{found: true, vis: hidden, changes: true}, visible, "updated",
			"read update count+1 commit", ""},
		{"UPDATE_LINK of no link", "update", stored{}, visible, "inserted", "read rollback insert count+=1 commit", ""},
		{"UPDATE_LINK whose link vanishes after a duplicate key", "update", stored{found: true, vis: visible, changes: true, vanish: 1}, visible, "updated",
			"read rollback insert (duplicate key) rollback read update commit", ""},
		{"UPDATE_LINK failing in the update", "update", stored{found: true, vis: visible, changes: true, fail: errors.New("boom"), failAt: "update"}, hidden, "",
			"read update rollback", "boom"},
		{"DELETE_LINK of no link", "hide", stored{}, 0, "absent", "read rollback", ""},
		{"DELETE_LINK of a hidden link", "hide", stored{found: true, vis: hidden}, 0, "existed", "read rollback", ""},
		{"DELETE_LINK of a visible link", "hide", stored{found: true, vis: visible}, 0, "existed", "read hide count-1 commit", ""},
		{"DELETE_LINK expunging a hidden link", "expunge", stored{found: true, vis: hidden}, 0, "existed", "read expunge commit", ""},
		{"DELETE_LINK expunging a visible link", "expunge", stored{found: true, vis: visible}, 0, "existed", "read expunge count-1 commit", ""},
	} {
		var trace []string
		st := c.s.steps(&trace)
		l := graph.Link{Visibility: c.vis}
		var res string
		var err error
		switch c.op {
		case "add", "update":
			var wr graph.WriteResult
			wr, err = RefUpsert(st, &l, c.op == "update")
			res = wr.String()
		default:
			var existed bool
			existed, err = RefDelete(st, c.op == "expunge")
			res = map[bool]string{false: "absent", true: "existed"}[existed]
		}
		got := strings.Join(trace, " ")
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || got != c.want {
				t.Errorf("%s: err %v, steps %q; want an error %q, steps %q", c.name, err, got, c.wantErr, c.want)
			}
			continue
		}
		if err != nil || res != c.res || got != c.want {
			t.Errorf("%s: %s, %v, steps %q; want %s, steps %q", c.name, res, err, got, c.res, c.want)
		}
	}
}

// TestRefUpsertGivesUpSwitching: a link that other writers keep
// inserting and deleting ends the write with a transient error after a
// few switches between the paths, not a loop without end.
func TestRefUpsertGivesUpSwitching(t *testing.T) {
	var trace []string
	s := stored{found: true, vanish: 1 << 30}
	_, err := RefUpsert(s.steps(&trace), &graph.Link{Visibility: graph.VisibilityDefault}, false)
	if !errors.Is(err, graph.ErrTransient) {
		t.Fatalf("err %v, want a transient error", err)
	}
	if n := strings.Count(strings.Join(trace, " "), "insert"); n > maxPathSwitches {
		t.Fatalf("%d inserts before giving up: %v", n, trace)
	}
}

// TestRefCountRowMissing: a count row that the update path's UPDATE does
// not find fails the write and rolls it back, as the reference's does.
func TestRefCountRowMissing(t *testing.T) {
	var trace []string
	s := stored{found: true, vis: graph.VisibilityHidden, changes: true}
	st := s.steps(&trace)
	st.incCount = func(int64) (int64, error) { trace = append(trace, "count+1"); return 0, nil }
	_, err := RefUpsert(st, &graph.Link{Visibility: graph.VisibilityDefault}, true)
	if err == nil || !strings.Contains(err.Error(), "count row") || trace[len(trace)-1] != "rollback" {
		t.Fatalf("err %v, steps %v; want a count-row error and a rollback", err, trace)
	}
}
