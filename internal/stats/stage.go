package stats

// Stage is a named part of a phase with its own time and rows: the nodes,
// links and counts a load inserts (they overlap in time), and each step of
// the store's finishing work (an index build, statistics, a checkpoint, a
// flush), which follow one another.
type Stage struct {
	Name string `json:"name"`
	// Kind is StageInsert or StageFinish.
	Kind string `json:"kind"`
	// StartSec and EndSec are seconds from the start of the phase.
	StartSec float64 `json:"start_sec"`
	EndSec   float64 `json:"end_sec"`
	// Rows are the rows the stage wrote or worked on (0 when unknown).
	Rows       int64   `json:"rows,omitempty"`
	RowsPerSec float64 `json:"rows_per_sec,omitempty"`
}

// Stage kinds.
const (
	StageInsert = "insert"
	StageFinish = "finish"
)

// Seconds is the stage's duration.
func (s Stage) Seconds() float64 { return s.EndSec - s.StartSec }

// Close sets the end of the stage and its rate.
func (s *Stage) Close(endSec float64) {
	s.EndSec = endSec
	if d := s.Seconds(); d > 0 && s.Rows > 0 {
		s.RowsPerSec = float64(s.Rows) / d
	}
}
