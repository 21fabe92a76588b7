package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/linkbench/linkbench/internal/graph"
)

// The procedure below runs a link write in the server for one CALL
// (link_writes = routine, an opt-in): fewer round trips than the
// reference's statements from the client, which are the default. Its
// statements are the reference's in kind: ADD_LINK inserts the link and,
// when the key exists, reads it for update and rewrites it; UPDATE_LINK
// reads it for update first and inserts it when absent; DELETE_LINK reads
// it for update, then hides or deletes it. It compares the stored link
// with the new one and skips an identical rewrite, and writes the count
// row last, in one upsert, when the link is inserted or its visibility
// changes (graph.WritesCount). The link row is always locked before the
// count row, so writers of one list queue on the count row without
// deadlocking; two upserts of one existing link can still deadlock (both
// hold the shared lock of the duplicate key, both want it exclusive), and
// the retry policy runs the loser again. Its link UPDATE and DELETE name
// the primary key: on a small table MariaDB plans them as a range over
// id1_type, and MyRocks would lock every row of the list it reads. A
// SELECT returns its result only to a caller that reads it (p_report; the
// request phase does not).

// writeProc is the procedure's name, one per link table.
func (s *Store) writeProc() string { return q(procPrefix + s.t.Link) }

// procVersion is the procedure's COMMENT. prepareProc uses a procedure
// only when its comment matches: one made by an older linkbench takes
// other modes and is left for the client transaction until init replaces
// it.
const procVersion = "linkbench link writes 5"

// procUpsertReadFirst is the procedure's mode for UPDATE_LINK's upsert,
// which reads the link before writing it; graph.WriteUpsert (0) inserts
// first, as ADD_LINK does.
const procUpsertReadFirst = 3

// procDDL creates the procedure. Data is compared as binary strings: the
// latin1 column's collation would call 'a' and 'A' equal.
func (s *Store) procDDL() string {
	return strings.NewReplacer("{{LINKS}}", q(s.t.Link), "{{COUNTS}}", q(s.t.Count), "{{PROC}}", s.writeProc(), "{{VERSION}}", procVersion).Replace(`
CREATE PROCEDURE {{PROC}}(p_id1 BIGINT UNSIGNED, p_lt BIGINT UNSIGNED, p_id2 BIGINT UNSIGNED,
  p_vis TINYINT, p_data VARCHAR(255) CHARACTER SET latin1, p_time BIGINT UNSIGNED,
  p_version INT UNSIGNED, p_now BIGINT UNSIGNED, p_mode INT, p_report BOOLEAN)
COMMENT '{{VERSION}}'
BEGIN
  DECLARE o_vis TINYINT;
  DECLARE o_data VARCHAR(255) CHARACTER SET latin1;
  DECLARE o_time BIGINT UNSIGNED;
  DECLARE o_version INT UNSIGNED;
  DECLARE found INT DEFAULT 0;
  DECLARE dup INT DEFAULT 0;
  DECLARE delta INT DEFAULT 0;
  DECLARE res INT DEFAULT 1;
  DECLARE bump INT DEFAULT 1;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET found = 0;
  DECLARE CONTINUE HANDLER FOR 1062 SET dup = 1;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  IF p_mode <> 1 AND p_mode <> 2 THEN
    IF p_mode = 3 THEN
      SET found = 1;
      SELECT visibility, data, time, version INTO o_vis, o_data, o_time, o_version
        FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2 FOR UPDATE;
    END IF;
    IF found = 0 THEN
      INSERT INTO {{LINKS}} (id1, id2, link_type, visibility, data, time, version)
        VALUES (p_id1, p_id2, p_lt, p_vis, p_data, p_time, p_version);
      IF dup = 1 THEN
        -- The failed insert holds the row's shared lock: it is still there.
        SET found = 1;
        SELECT visibility, data, time, version INTO o_vis, o_data, o_time, o_version
          FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2 FOR UPDATE;
        IF found = 0 THEN
          SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'the link vanished between insert and read; try again';
        END IF;
      ELSEIF p_vis = 1 THEN
        SET delta = 1;
      END IF;
    END IF;
    IF found = 1 THEN
      IF o_vis = p_vis AND o_time = p_time AND o_version = p_version AND CAST(o_data AS BINARY) = CAST(p_data AS BINARY) THEN
        SET res = 0;
      ELSE
        UPDATE {{LINKS}} FORCE INDEX (PRIMARY) SET visibility = p_vis, data = p_data, time = p_time, version = p_version
          WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
        SET res = 2;
      END IF;
      IF o_vis <> 1 AND p_vis = 1 THEN SET delta = 1;
      ELSEIF o_vis = 1 AND p_vis <> 1 THEN SET delta = -1;
      ELSE SET bump = 0;
      END IF;
    END IF;
  ELSE
    SET found = 1;
    SELECT visibility, data, time, version INTO o_vis, o_data, o_time, o_version
      FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2 FOR UPDATE;
    SET res = found;
    IF found = 1 AND p_mode = 2 THEN
      DELETE l FROM {{LINKS}} l FORCE INDEX (PRIMARY) WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
    ELSEIF found = 1 AND o_vis = 1 THEN
      UPDATE {{LINKS}} FORCE INDEX (PRIMARY) SET visibility = 0 WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
    END IF;
    IF found = 1 AND o_vis = 1 THEN SET delta = -1; ELSE SET bump = 0; END IF;
  END IF;
  IF bump = 1 THEN
    INSERT INTO {{COUNTS}} (id, link_type, count, time, version) VALUES (p_id1, p_lt, GREATEST(delta, 0), p_now, 1)
      ON DUPLICATE KEY UPDATE count = GREATEST(CAST(count AS SIGNED) + delta, 0), time = p_now, version = version + 1;
  END IF;
  COMMIT;
  IF p_report THEN
    SELECT res;
  END IF;
END`)
}

// createProc replaces the procedure when link_writes = routine.
// Concurrent --shard inits may both drop and create it; the loser's
// "already exists" (1304) is success. A user without the privilege to
// create routines (1044, 1142, 1227, 1370, 1419) is told so when a run
// needs it (prepareProc), rather than failing the load.
func (s *Store) createProc(ctx context.Context) error {
	if s.kind == "TiDB" || !s.useProc {
		return nil
	}
	denied := []uint16{1044, 1142, 1227, 1370, 1419}
	if _, err := s.w.ExecContext(ctx, "DROP PROCEDURE IF EXISTS "+s.writeProc()); err != nil {
		if isMySQLError(err, denied...) {
			return nil
		}
		return classify(err)
	}
	if _, err := s.w.ExecContext(ctx, s.procDDL()); err != nil && !isMySQLError(err, 1304) {
		if isMySQLError(err, denied...) {
			return nil
		}
		return classify(err)
	}
	return nil
}

// prepareProc prepares the CALL of this linkbench's procedure, which
// link_writes = routine asks for.
func (s *Store) prepareProc(ctx context.Context) (*sql.Stmt, error) {
	if s.kind == "TiDB" {
		return nil, fmt.Errorf("link_writes = routine: TiDB has no stored procedures; use link_writes = reference")
	}
	var n int
	err := s.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE' AND routine_name = ? AND routine_comment = ?",
		"linkbench_write_"+s.t.Link, procVersion).Scan(&n)
	if err != nil {
		return nil, classify(err)
	}
	if n == 0 {
		return nil, graph.Schema(fmt.Errorf("link_writes = routine calls the procedure %s, which is missing at %s or was made by an older linkbench; run `linkbench init -D link_writes=routine` (the data is kept; the user needs the privilege to create routines)", s.writeProc(), s.addr))
	}
	return s.w.PrepareContext(ctx, s.callSQL())
}

// callSQL is the procedure's CALL.
func (s *Store) callSQL() string { return "CALL " + s.writeProc() + "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" }

// procWrite is linkWrite in one CALL; mode is a graph.WriteMode or
// procUpsertReadFirst. Without report the procedure ends at its COMMIT:
// the SELECT that returns its result, a statement the reference does not
// send, costs the server 11-15 % of a CALL's CPU (docs/performance.md).
func (s *Store) procWrite(ctx context.Context, call *sql.Stmt, l *graph.Link, mode int, report bool) (int, error) {
	if !report {
		_, err := call.ExecContext(ctx, l.ID1, l.LinkType, l.ID2, l.Visibility, nonNil(l.Data), l.Time, l.Version, nowMs(), mode, false)
		return 0, classify(err)
	}
	var res int
	err := call.QueryRowContext(ctx, l.ID1, l.LinkType, l.ID2, l.Visibility, nonNil(l.Data), l.Time, l.Version, nowMs(), mode, true).Scan(&res)
	return res, classify(err)
}
