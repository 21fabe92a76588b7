package sqlstore

import (
	"errors"

	"github.com/linkbench/linkbench/internal/graph"
)

// LinkSteps are the statements of one link write sent from the client, in
// the transaction its caller runs and ends.
type LinkSteps struct {
	// Read reads the stored link for update; found is false when there is
	// none. A delete uses only old's Visibility.
	Read func() (old graph.Link, found bool, err error)
	// Insert inserts the link; exists reports that its key was there
	// already and the row was left alone.
	Insert func() (exists bool, err error)
	// Update rewrites the stored link with the new one.
	Update func() error
	// Hide marks the stored link hidden; Expunge deletes it.
	Hide, Expunge func() error
	// Count adds delta to the link's count row, inserting it when absent.
	Count func(delta int64) error
	// Vanished is returned when the key that Insert found is gone when read
	// (a concurrent delete committed in between); nil: a transient error.
	Vanished error
}

// VanishedMessage says why a link write failed when the link its insert
// found was gone when read, and what to do.
const VanishedMessage = "the link vanished between insert and read; try again"

// WriteLink runs a link write's steps in the stored procedures' order: the
// link row is read for update first (a delete, or an upsert with
// readFirst) or inserted first, then written, and the count row written
// last, only when the write inserts a link or changes its visibility
// (graph.WriteOutcome, graph.WritesCount), so every writer locks the link
// row before the count row. It returns the graph.WriteResult of an upsert,
// or 0 absent / 1 existed for a delete (mode graph.WriteHide or
// graph.WriteExpunge).
func WriteLink(st LinkSteps, l *graph.Link, mode graph.WriteMode, readFirst bool) (int, error) {
	var (
		old   graph.Link
		found bool
		err   error
	)
	if mode != graph.WriteUpsert || readFirst {
		if old, found, err = st.Read(); err != nil {
			return 0, err
		}
	}
	if mode != graph.WriteUpsert {
		if !found {
			return 0, nil
		}
		switch {
		case mode == graph.WriteExpunge:
			err = st.Expunge()
		case old.Visibility == graph.VisibilityDefault:
			err = st.Hide()
		}
		if err != nil || old.Visibility != graph.VisibilityDefault {
			return 1, err
		}
		return 1, st.Count(-1)
	}
	if !found {
		exists, err := st.Insert()
		if err != nil {
			return 0, err
		}
		if exists {
			if old, found, err = st.Read(); err != nil {
				return 0, err
			}
			if !found {
				if st.Vanished != nil {
					return 0, st.Vanished
				}
				return 0, graph.Transient(errors.New(VanishedMessage))
			}
		}
	}
	wr, delta := graph.WriteOutcome(found, old, l)
	if found && wr == graph.Updated {
		if err := st.Update(); err != nil {
			return 0, err
		}
	}
	if !graph.WritesCount(found, delta) {
		return int(wr), nil
	}
	return int(wr), st.Count(delta)
}
