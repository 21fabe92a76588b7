package mysql

import (
	"context"
	"database/sql"
	"errors"
	"math"

	"github.com/linkbench/linkbench/internal/store"
)

// indexStage is the name EndLoad gives the build of the deferred index.
const indexStage = "build index id1_type"

// StepProgress implements store.StepProgresser for the index build on
// MariaDB: while the ALTER TABLE that adds the index is in the process
// list, InnoDB's Innodb_onlineddl_pct_progress (hundredths of a percent
// of an in-place ALTER; the server's one figure, whichever table) gives
// the part done, or the process list's own PROGRESS (MariaDB's progress
// reports, of engines that send them) when InnoDB's is 0. MySQL reports
// neither: its builds are not known.
func (s *Store) StepProgress(ctx context.Context, step store.StepStatus) (store.StepProgress, bool, error) {
	if step.Name != indexStage || s.kind != "MariaDB" {
		return store.StepProgress{}, false, nil
	}
	var listed float64
	var state sql.NullString
	var innodb sql.NullFloat64
	err := s.r.QueryRowContext(ctx, `SELECT p.PROGRESS, p.STATE,
		(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_ONLINEDDL_PCT_PROGRESS')
		FROM information_schema.PROCESSLIST p WHERE p.DB = DATABASE() AND p.INFO LIKE ? ORDER BY p.ID LIMIT 1`,
		"ALTER TABLE "+q(s.t.Link)+" ADD INDEX id1_type %").Scan(&listed, &state, &innodb)
	if errors.Is(err, sql.ErrNoRows) {
		return store.StepProgress{}, false, nil
	}
	if err != nil {
		return store.StepProgress{}, false, classify(err)
	}
	f := listed / 100
	if innodb.Valid && innodb.Float64 > 0 {
		f = innodb.Float64 / 10000
	}
	f = math.Min(math.Max(f, 0), 1)
	return store.StepProgress{Done: int64(f * float64(step.Rows)), Total: step.Rows, Fraction: f, Phase: state.String}, true, nil
}
