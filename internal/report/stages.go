package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/linkbench/linkbench/internal/stats"
)

// WriteStageTable writes a load's stages, one line each: rows, seconds and
// rows per second, then the split of the load's time between inserting
// rows and the store's finishing work.
func WriteStageTable(w io.Writer, stages []stats.Stage, insertSec, finishSec float64) error {
	if len(stages) == 0 {
		return nil
	}
	width := len("stage")
	for _, s := range stages {
		width = max(width, len(s.Name))
	}
	if _, err := fmt.Fprintf(w, "%-*s %-6s %13s %9s %11s\n", width, "stage", "kind", "rows", "seconds", "rows/s"); err != nil {
		return err
	}
	for _, s := range stages {
		rows, rate := "-", "-"
		if s.Rows > 0 {
			rows = strconv.FormatInt(s.Rows, 10)
		}
		if s.RowsPerSec > 0 {
			rate = strconv.FormatFloat(s.RowsPerSec, 'f', 0, 64)
		}
		if _, err := fmt.Fprintf(w, "%-*s %-6s %13s %9.1f %11s\n", width, s.Name, s.Kind, rows, s.Seconds(), rate); err != nil {
			return err
		}
	}
	total := insertSec + finishSec
	if total <= 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "inserting rows %.1f s (%.0f%%), finishing work %.1f s (%.0f%%)\n", insertSec, 100*insertSec/total, finishSec, 100*finishSec/total)
	return err
}
