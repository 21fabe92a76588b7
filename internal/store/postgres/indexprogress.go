package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/linkbench/linkbench/internal/store"
)

// indexStage is the name EndLoad gives the build of the deferred index.
const indexStage = "build index id1_type"

// The parts of a B-tree build's time spent in each of the phases
// PostgreSQL reports, measured on a 49-million-link build here (scanning
// 76 s, sorting 10 s, loading 58 s): the overall fraction done is the
// phases before plus the reported part of the current one.
const (
	scanShare = 0.53
	sortShare = 0.07
)

// StepProgress implements store.StepProgresser for the index build, from
// pg_stat_progress_create_index: the blocks of the table scanned, then
// the tuples loaded into the new index's tree. The view shows a backend's
// build to its own user and to pg_read_all_stats; any other step, or no
// build under way, is not known.
func (s *Store) StepProgress(ctx context.Context, step store.StepStatus) (store.StepProgress, bool, error) {
	if step.Name != indexStage {
		return store.StepProgress{}, false, nil
	}
	var phase string
	var blocksTotal, blocksDone, tuplesTotal, tuplesDone int64
	err := s.pool.QueryRow(ctx, `SELECT phase, blocks_total, blocks_done, tuples_total, tuples_done
		FROM pg_stat_progress_create_index WHERE relid = $1::regclass ORDER BY pid LIMIT 1`, s.t.Link).
		Scan(&phase, &blocksTotal, &blocksDone, &tuplesTotal, &tuplesDone)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.StepProgress{}, false, nil
	}
	if err != nil {
		return store.StepProgress{}, false, classify(err)
	}
	return buildProgress(phase, blocksTotal, blocksDone, tuplesTotal, tuplesDone, step.Rows), true, nil
}

// buildProgress turns a row of pg_stat_progress_create_index into rows
// done of rows (the table's rows read while scanning, the tuples loaded
// after sorting) and the fraction of the whole build.
func buildProgress(phase string, blocksTotal, blocksDone, tuplesTotal, tuplesDone, rows int64) store.StepProgress {
	p := store.StepProgress{Phase: strings.TrimPrefix(phase, "building index: "), Total: rows}
	switch {
	case strings.HasSuffix(phase, "scanning table") && blocksTotal > 0:
		f := float64(blocksDone) / float64(blocksTotal)
		p.Done, p.Fraction = int64(f*float64(rows)), scanShare*f
	case strings.HasSuffix(phase, "sorting live tuples"):
		p.Done, p.Fraction = rows, scanShare
	case strings.HasSuffix(phase, "loading tuples in tree") && tuplesTotal > 0:
		f := float64(tuplesDone) / float64(tuplesTotal)
		p.Done, p.Total, p.Fraction = tuplesDone, tuplesTotal, scanShare+sortShare+(1-scanShare-sortShare)*f
	}
	return p
}
