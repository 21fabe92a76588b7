package mysql

import (
	"context"
	"database/sql"
	"strings"

	"github.com/linkbench/linkbench/internal/graph"
)

// The link writes of the request phase are transactions of six statements
// (start, count-row lock, read, write, count update, commit) whose later
// statements depend on what the read found. Run from the client they cost
// six round trips; the stored procedure below runs the same statements in
// the server for one CALL, as the PostgreSQL store's function does. The
// locks taken, their order and the rows written are those of the client
// transaction (linkWrite), which stays for TiDB (no stored procedures),
// for databases whose schema was made without the procedure, and for
// mysql_write_procedure = false.

// writeProc is the procedure's name, one per link table.
func (s *Store) writeProc() string { return q("linkbench_write_" + s.t.Link) }

// procDDL creates the procedure. Data is compared as binary strings: the
// latin1 column's collation would call 'a' and 'A' equal.
func (s *Store) procDDL() string {
	return strings.NewReplacer("{{LINKS}}", q(s.t.Link), "{{COUNTS}}", q(s.t.Count), "{{PROC}}", s.writeProc()).Replace(`
CREATE PROCEDURE {{PROC}}(p_id1 BIGINT UNSIGNED, p_lt BIGINT UNSIGNED, p_id2 BIGINT UNSIGNED,
  p_vis TINYINT, p_data VARCHAR(255) CHARACTER SET latin1, p_time BIGINT UNSIGNED,
  p_version INT UNSIGNED, p_now BIGINT UNSIGNED, p_mode INT)
BEGIN
  DECLARE o_vis TINYINT;
  DECLARE o_data VARCHAR(255) CHARACTER SET latin1;
  DECLARE o_time BIGINT UNSIGNED;
  DECLARE o_version INT UNSIGNED;
  DECLARE found INT DEFAULT 1;
  DECLARE delta INT DEFAULT 0;
  DECLARE res INT DEFAULT 1;
  DECLARE bump INT DEFAULT 1;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  INSERT INTO {{COUNTS}} (id, link_type, count, time, version) VALUES (p_id1, p_lt, 0, p_now, 0)
    ON DUPLICATE KEY UPDATE version = version;
  SELECT visibility, data, time, version INTO o_vis, o_data, o_time, o_version
    FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2 FOR UPDATE;
  IF p_mode = 0 THEN
    IF found = 0 THEN
      INSERT INTO {{LINKS}} (id1, id2, link_type, visibility, data, time, version)
        VALUES (p_id1, p_id2, p_lt, p_vis, p_data, p_time, p_version);
      IF p_vis = 1 THEN SET delta = 1; END IF;
    ELSE
      IF o_vis = p_vis AND o_time = p_time AND o_version = p_version AND CAST(o_data AS BINARY) = CAST(p_data AS BINARY) THEN
        SET res = 0;
      ELSE
        UPDATE {{LINKS}} SET visibility = p_vis, data = p_data, time = p_time, version = p_version
          WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
        SET res = 2;
      END IF;
      IF o_vis <> 1 AND p_vis = 1 THEN SET delta = 1;
      ELSEIF o_vis = 1 AND p_vis <> 1 THEN SET delta = -1;
      END IF;
    END IF;
  ELSEIF found = 0 OR o_vis <> 1 THEN
    SET res = found, bump = 0;
    IF found = 1 AND p_mode = 2 THEN
      DELETE FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
    END IF;
    DELETE FROM {{COUNTS}} WHERE id = p_id1 AND link_type = p_lt AND count = 0 AND version = 0;
  ELSE
    IF p_mode = 2 THEN
      DELETE FROM {{LINKS}} WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
    ELSE
      UPDATE {{LINKS}} SET visibility = 0 WHERE link_type = p_lt AND id1 = p_id1 AND id2 = p_id2;
    END IF;
    SET delta = -1;
  END IF;
  IF bump = 1 THEN
    UPDATE {{COUNTS}} SET count = GREATEST(CAST(count AS SIGNED) + delta, 0), time = p_now, version = version + 1
      WHERE id = p_id1 AND link_type = p_lt;
  END IF;
  COMMIT;
  SELECT res;
END`)
}

// createProc replaces the procedure. Concurrent --shard inits may both
// drop and create it; the loser's "already exists" (1304) is success. A
// user without the privilege to create routines (1044, 1142, 1227, 1370,
// 1419) keeps the client transaction rather than failing the load.
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

// prepareProc prepares the CALL when the procedure exists; nil otherwise.
func (s *Store) prepareProc(ctx context.Context) (*sql.Stmt, error) {
	if s.kind == "TiDB" || !s.useProc {
		return nil, nil
	}
	var n int
	err := s.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE' AND routine_name = ?",
		"linkbench_write_"+s.t.Link).Scan(&n)
	if err != nil || n == 0 {
		return nil, classify(err)
	}
	return s.w.PrepareContext(ctx, "CALL "+s.writeProc()+"(?, ?, ?, ?, ?, ?, ?, ?, ?)")
}

// procWrite is linkWrite in one CALL.
func (s *Store) procWrite(ctx context.Context, call *sql.Stmt, id1, lt, id2 int64, vis uint8, data []byte, tm int64, ver int32, mode graph.WriteMode) (int, error) {
	var res int
	err := call.QueryRowContext(ctx, id1, lt, id2, vis, nonNil(data), tm, ver, nowMs(), int(mode)).Scan(&res)
	return res, classify(err)
}
