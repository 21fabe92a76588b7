package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// statement is one statement a driver sent, with its parameters already
// substituted, and the rows the server returned (-1 when unknown).
type statement struct {
	sql  string
	rows int64
	conn string // the server's id of the connection that sent it
}

// readPostgresCSV reads a PostgreSQL csvlog written with log_statement =
// all and auto_explain (log_min_duration 0, log_analyze, JSON format):
// each "execute ...:" or "statement:" entry is a statement (its
// parameters in the detail field), and the next plan its backend logs
// carries the rows its top node returned.
func readPostgresCSV(r io.Reader, user string) ([]statement, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	var out []statement
	last := map[string]int{} // backend pid -> index in out of its last statement
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("csvlog: %w", err)
		}
		if len(rec) < 15 || rec[1] != user {
			continue
		}
		pid, msg, detail := rec[3], rec[13], rec[14]
		if rec[11] == "ERROR" {
			// A failed statement ends its transaction: record it as the
			// rollback the client sends next, so a retry is recognised.
			out = append(out, statement{sql: "rollback", rows: -1, conn: pid})
			continue
		}
		if sql, ok := pgStatement(msg); ok {
			out = append(out, statement{sql: substitute(sql, detail), rows: -1, conn: pid})
			last[pid] = len(out) - 1
			continue
		}
		if i, ok := last[pid]; ok && strings.Contains(msg, "plan:") && out[i].rows < 0 {
			if m := actualRows.FindStringSubmatch(msg); m != nil {
				out[i].rows, _ = strconv.ParseInt(m[1], 10, 64)
			}
		}
	}
}

// actualRows finds the first "Actual Rows" of a JSON plan: the top node's.
var actualRows = regexp.MustCompile(`"Actual Rows": (\d+)`)

// pgStatement extracts the statement text of a log_statement entry.
func pgStatement(msg string) (string, bool) {
	if rest, ok := strings.CutPrefix(msg, "statement: "); ok {
		return rest, true
	}
	if rest, ok := strings.CutPrefix(msg, "execute "); ok {
		if _, sql, ok := strings.Cut(rest, ": "); ok {
			return sql, true
		}
	}
	return "", false
}

// pgParam matches one "$n = 'value'" of a detail line (” escapes a quote).
var pgParam = regexp.MustCompile(`\$(\d+) = (NULL|'(?:[^']|'')*')`)

// substitute puts the parameters of a PostgreSQL detail line into the
// statement, highest placeholder first so that $1 does not eat $10.
func substitute(sql, detail string) string {
	ms := pgParam.FindAllStringSubmatch(detail, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		sql = strings.ReplaceAll(sql, "$"+ms[i][1], ms[i][2])
	}
	return sql
}

// readMySQLSlowLog reads a MariaDB/MySQL slow query log written with
// long_query_time = 0: every statement with its values, and Rows_sent.
func readMySQLSlowLog(r io.Reader, user string) ([]statement, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var out []statement
	var cur statement
	var body []string
	mine, inEntry := false, false
	flush := func() {
		if inEntry && mine && len(body) > 0 {
			cur.sql = strings.Join(body, " ")
			out = append(out, cur)
		}
		cur, body, mine, inEntry = statement{rows: -1}, nil, false, false
	}
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			l := string(bytes.TrimRight(line, "\r\n"))
			switch {
			case strings.HasPrefix(l, "# User@Host: "):
				flush()
				inEntry = true
				name, _, _ := strings.Cut(strings.TrimPrefix(l, "# User@Host: "), "[")
				mine = name == user
			case strings.HasPrefix(l, "# Time: "):
			case strings.HasPrefix(l, "# "):
				if m := rowsSent.FindStringSubmatch(l); m != nil {
					cur.rows, _ = strconv.ParseInt(m[1], 10, 64)
				}
				if m := threadID.FindStringSubmatch(l); m != nil {
					cur.conn = m[1]
				}
			case strings.HasPrefix(l, "SET timestamp="), strings.HasPrefix(l, "use "):
			case inEntry:
				body = append(body, l)
			}
		}
		if err == io.EOF {
			flush()
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

var (
	rowsSent = regexp.MustCompile(`Rows_sent: (\d+)`)
	threadID = regexp.MustCompile(`Thread_id: (\d+)`)
)
