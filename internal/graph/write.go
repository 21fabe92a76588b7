package graph

import "bytes"

// WriteMode is what one link write does to the row of (id1, link_type,
// id2): the stores that have a single write path (and the MySQL stored
// procedure, whose p_mode takes these values) are called with it.
type WriteMode int

// Link write modes.
const (
	// WriteUpsert inserts the link or replaces the stored one.
	WriteUpsert WriteMode = iota
	// WriteHide marks the stored link hidden (DELETE_LINK).
	WriteHide
	// WriteExpunge removes the stored link (DELETE_LINK with expunge).
	WriteExpunge
)

// DeleteMode is the write mode of a DELETE_LINK: expunge removes the row,
// else the link is hidden.
func DeleteMode(expunge bool) WriteMode {
	if expunge {
		return WriteExpunge
	}
	return WriteHide
}

// CountDelta is how a link write changes the visible-link count of its
// (id1, link_type): +1 when the link becomes visible, -1 when it stops
// being visible, else 0. A count never goes below zero (the stores clamp).
func CountDelta(wasVisible, isVisible bool) int64 {
	switch {
	case !wasVisible && isVisible:
		return 1
	case wasVisible && !isVisible:
		return -1
	}
	return 0
}

// WriteOutcome is the count rule of ADD_LINK and UPDATE_LINK: what the
// upsert of l over the stored link old (found false: none) reports, and
// its change to the visible-link count. Only old's visibility, time,
// version and data are read. Every store applies this rule; the SQL stored procedures keep
// their own copy, which the conformance suite checks against it.
func WriteOutcome(found bool, old Link, l *Link) (WriteResult, int64) {
	isVisible := l.Visibility == VisibilityDefault
	if !found {
		return Inserted, CountDelta(false, isVisible)
	}
	res := Updated
	if old.Visibility == l.Visibility && old.Time == l.Time && old.Version == l.Version && bytes.Equal(old.Data, l.Data) {
		res = Unchanged
	}
	return res, CountDelta(old.Visibility == VisibilityDefault, isVisible)
}

// WritesCount says whether an upsert writes its count row (count, time =
// now, version + 1): when it inserts the link or changes its visibility
// (delta from WriteOutcome not 0). An upsert over a stored link that keeps
// its visibility leaves the count row alone, as the reference's
// UPDATE_LINK does (it runs the count statement only when the visibility
// changes).
func WritesCount(found bool, delta int64) bool { return !found || delta != 0 }
