package sqlstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/graph"
)

// TestWriteLinkSteps: each kind of link write runs the steps of the
// stored procedures, in their order, and returns their result.
func TestWriteLinkSteps(t *testing.T) {
	visible := graph.Link{Visibility: graph.VisibilityDefault, Data: []byte("d"), Time: 5, Version: 1}
	hidden := visible
	hidden.Visibility = graph.VisibilityHidden
	for _, c := range []struct {
		name      string
		mode      graph.WriteMode
		readFirst bool
		stored    *graph.Link // nil: no link
		exists    bool        // Insert finds the key (a concurrent insert)
		l         graph.Link
		res       int
		steps     string
	}{
		{"ADD_LINK of a new link", graph.WriteUpsert, false, nil, false, visible, 1, "insert count+1"},
		{"ADD_LINK of a link inserted meanwhile", graph.WriteUpsert, false, &visible, true, visible, 0, "insert read"},
		{"ADD_LINK hiding a link inserted meanwhile", graph.WriteUpsert, false, &visible, true, hidden, 2, "insert read update count-1"},
		{"UPDATE_LINK keeping the visibility", graph.WriteUpsert, true, &hidden, false, hidden, 0, "read"},
		{"UPDATE_LINK showing a hidden link", graph.WriteUpsert, true, &hidden, false, visible, 2, "read update count+1"},
		{"UPDATE_LINK of a new link", graph.WriteUpsert, true, nil, false, visible, 1, "read insert count+1"},
		{"DELETE_LINK of no link", graph.WriteHide, false, nil, false, visible, 0, "read"},
		{"DELETE_LINK of a hidden link", graph.WriteHide, false, &hidden, false, visible, 1, "read"},
		{"DELETE_LINK of a visible link", graph.WriteHide, false, &visible, false, visible, 1, "read hide count-1"},
		{"DELETE_LINK expunging a hidden link", graph.WriteExpunge, false, &hidden, false, visible, 1, "read expunge"},
	} {
		var steps []string
		step := func(s string) error { steps = append(steps, s); return nil }
		res, err := WriteLink(LinkSteps{
			Read: func() (graph.Link, bool, error) {
				step("read")
				if c.stored == nil {
					return graph.Link{}, false, nil
				}
				return *c.stored, true, nil
			},
			Insert:  func() (bool, error) { return c.exists, step("insert") },
			Update:  func() error { return step("update") },
			Hide:    func() error { return step("hide") },
			Expunge: func() error { return step("expunge") },
			Count: func(delta int64) error {
				if delta > 0 {
					return step("count+1")
				}
				return step("count-1")
			},
		}, &c.l, c.mode, c.readFirst)
		if got := strings.Join(steps, " "); err != nil || res != c.res || got != c.steps {
			t.Errorf("%s: %d, %v, steps %q; want %d, nil, %q", c.name, res, err, got, c.res, c.steps)
		}
	}

	// The key Insert found is gone when read: the store's error, or a
	// transient one.
	gone := LinkSteps{
		Read:   func() (graph.Link, bool, error) { return graph.Link{}, false, nil },
		Insert: func() (bool, error) { return true, nil },
	}
	if _, err := WriteLink(gone, &visible, graph.WriteUpsert, false); !errors.Is(err, graph.ErrTransient) || !strings.Contains(err.Error(), "vanished") {
		t.Errorf("vanished link: %v, want a transient error", err)
	}
	mine := errors.New("mine")
	gone.Vanished = mine
	if _, err := WriteLink(gone, &visible, graph.WriteUpsert, false); err != mine {
		t.Errorf("vanished link with the store's error: %v, want it", err)
	}
}
