package store

import (
	"context"
	"time"
)

// StepStatus is what a load knows of a step of the store's finishing
// work under way (EndLoad's index build, say).
type StepStatus struct {
	// Name is the step's name as the store gave it to LoadInfo.BeginStage,
	// and Rows the rows it covers (0 when unknown).
	Name string
	Rows int64
	// Elapsed is how long the step has run.
	Elapsed time.Duration
	// InsertRowsPerSec is the rate at which the load inserted its links:
	// the machine's and the store's pace, for a store that can only
	// estimate.
	InsertRowsPerSec float64
}

// StepProgress is how far a step of a load's finishing work has got.
type StepProgress struct {
	// Done of Total rows (Done may be an estimate, see Estimated).
	Done, Total int64
	// Fraction is the part of the whole step done, 0 to 1: a step may pass
	// over its rows more than once (a scan, a sort, then the tree), so it
	// is not always Done/Total.
	Fraction float64
	// Phase names what the step does now in the server's words ("scanning
	// table"), "" when the store names none.
	Phase string
	// Estimated marks a store's estimate rather than the server's count.
	Estimated bool
}

// StepProgresser is a store that can tell how far a step of its
// finishing work has got. StepProgress is called about once a second
// while EndLoad runs, from another goroutine than EndLoad's; ok is false
// when the store cannot tell for that step (or not yet). It must not
// block for long: ctx carries a short deadline.
type StepProgresser interface {
	StepProgress(ctx context.Context, step StepStatus) (p StepProgress, ok bool, err error)
}
