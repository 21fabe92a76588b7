package sqlstore

import (
	"errors"
	"fmt"

	"github.com/linkbench/linkbench/internal/graph"
)

// RefTx is one link write's transaction as the reference's SQL stores
// send it (LinkStoreSql's newLinkLoop and deleteLinkImpl), on a
// connection whose autocommit is off: its first statement begins a
// transaction, which Commit or Rollback ends. Each method is one statement
// and returns the server's error as it is; RefUpsert and RefDelete decide
// what follows. A store keeps one per connection, so a write allocates
// nothing for its steps.
type RefTx interface {
	// Insert is the plain INSERT of the link. dup reports the server's
	// duplicate-key error: the key exists, the transaction is to be
	// rolled back.
	Insert() (dup bool, err error)
	// AddCount upserts the count row after an insert: created with base,
	// or count + base, version + 1 and time = now.
	AddCount(base int64) error
	// ReadVisibility reads the link's visibility for update.
	ReadVisibility() (vis uint8, found bool, err error)
	// Update rewrites the link's visibility, data, version and time and
	// returns the rows the server reports: those it changed (MySQL) or
	// matched (PostgreSQL).
	Update() (n int64, err error)
	// Hide sets the link's visibility hidden; Expunge deletes it. Each
	// returns the rows the server reports.
	Hide() (n int64, err error)
	Expunge() (n int64, err error)
	// IncCount adds delta to the count row (an UPDATE, no insert) and
	// returns the rows the server reports.
	IncCount(delta int64) (n int64, err error)
	// Commit and Rollback end the transaction.
	Commit() error
	Rollback() error
}

// maxPathSwitches bounds how often an upsert goes from the insert to the
// update path and back within one call (a concurrent writer inserted or
// deleted the link in between). Beyond it the write fails as transient and
// the retry policy runs it again from the start.
const maxPathSwitches = 4

// RefUpsert runs ADD_LINK (readFirst false: the insert first) or
// UPDATE_LINK (readFirst: the update path first) as the reference does.
//
// The insert path inserts the link; on a duplicate key it rolls back and
// takes the update path. Otherwise it upserts the count row with 1 for a
// visible link (0 for a hidden one) and commits: graph.Inserted.
//
// The update path reads the visibility for update; with no link it rolls
// back and takes the insert path. Otherwise it updates the link. When the
// server reports no row it rolls back: graph.Unchanged (MySQL reports the
// rows it changed, so this is an identical rewrite; PostgreSQL reports the
// rows it matched, one). Then, when the visibility changes, it adds +1 or
// -1 to the count row, and commits: graph.Updated.
func RefUpsert(st RefTx, l *graph.Link, readFirst bool) (graph.WriteResult, error) {
	insert := !readFirst
	for switches := 0; ; switches++ {
		if switches > maxPathSwitches {
			return 0, graph.Transient(fmt.Errorf("the link was inserted and deleted by other writers %d times during this write; try again", switches))
		}
		if insert {
			dup, err := st.Insert()
			if dup {
				if err := st.Rollback(); err != nil {
					return 0, err
				}
				insert = false
				continue
			}
			if err != nil {
				return 0, rollback(st, err)
			}
			base := int64(0)
			if l.Visibility == graph.VisibilityDefault {
				base = 1
			}
			if err := st.AddCount(base); err != nil {
				return 0, rollback(st, err)
			}
			return graph.Inserted, st.Commit()
		}
		vis, found, err := st.ReadVisibility()
		if err != nil {
			return 0, rollback(st, err)
		}
		if !found {
			if err := st.Rollback(); err != nil {
				return 0, err
			}
			insert = true
			continue
		}
		n, err := st.Update()
		switch {
		case err != nil:
			return 0, rollback(st, err)
		case n == 0:
			return graph.Unchanged, st.Rollback()
		case n != 1:
			return 0, rollback(st, fmt.Errorf("the link update reported %d rows, want 1", n))
		}
		if vis != l.Visibility {
			delta := int64(-1)
			if l.Visibility == graph.VisibilityDefault {
				delta = 1
			}
			if err := incCount(st, delta); err != nil {
				return 0, rollback(st, err)
			}
		}
		return graph.Updated, st.Commit()
	}
}

// RefDelete runs DELETE_LINK as the reference does: it reads the
// visibility for update; with no link, or a hidden one that is not to be
// expunged, it rolls back. Otherwise it hides or deletes the link, takes 1
// from the count row when the link was visible, and commits. It reports
// whether the link existed.
//
// The reference also takes 1 from the count when it expunges a hidden
// link, which leaves the count below the visible links; this does not (no
// request does it: the request phase only hides).
func RefDelete(st RefTx, expunge bool) (bool, error) {
	vis, found, err := st.ReadVisibility()
	if err != nil {
		return false, rollback(st, err)
	}
	if !found || vis != graph.VisibilityDefault && !expunge {
		return found, st.Rollback()
	}
	var n int64
	if expunge {
		n, err = st.Expunge()
	} else {
		n, err = st.Hide()
	}
	if err == nil && n != 1 {
		err = fmt.Errorf("the link's delete reported %d rows, want 1", n)
	}
	if err == nil && vis == graph.VisibilityDefault {
		err = incCount(st, -1)
	}
	if err != nil {
		return false, rollback(st, err)
	}
	return true, st.Commit()
}

// incCount adds delta to the count row, which must exist.
func incCount(st RefTx, delta int64) error {
	n, err := st.IncCount(delta)
	if err == nil && n != 1 {
		err = fmt.Errorf("the count row's update reported %d rows, want 1 (a link without its count row: run `linkbench check`)", n)
	}
	return err
}

// rollback ends the transaction after err and returns err, joined with
// the rollback's own error when it failed too.
func rollback(st RefTx, err error) error {
	if rerr := st.Rollback(); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}
