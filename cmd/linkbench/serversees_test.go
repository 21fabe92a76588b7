package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/store/storetest"
	"github.com/linkbench/linkbench/internal/store/storetest/wiretap"
)

// TestServerSeesOneWorkload: a request phase asks the server for the same
// work per request whatever the requesters and whether they are paced, as
// the server sees it (wiretap: the statements on the wire and their
// outcomes). At 1, 4 and 16 requesters flat out and at 1 and 16 paced, on
// PostgreSQL and MariaDB:
//   - the requesters send the same statement shapes, link writes on
//     connections of their own and everything else on others;
//   - every link write's transaction is one of the reference's paths
//     (wiretap.RefPaths), and every other request one statement;
//   - the statements and transactions per request of each op are the
//     same, within what the runs' own random draws move them;
//   - each requester opens two connections.
//
// Before, link writes went as one call of a server routine at 1 and at
// 16 requesters paced, and as the reference's statements at 4 and 16
// flat out (PostgreSQL), with one connection per requester paced.
func TestServerSeesOneWorkload(t *testing.T) {
	for _, srv := range []struct {
		name, config string
		proto        wiretap.Protocol
		env          string
		// prepare makes the test's schema or database, named in u or in
		// the keys it returns.
		prepare func(t *testing.T, u *url.URL) []string
		begin   bool
	}{
		{"postgres", "LinkConfigPgsql.properties", wiretap.Postgres, storetest.PostgresEnv, func(t *testing.T, u *url.URL) []string {
			schema := fmt.Sprintf("lbsees%d", os.Getpid())
			t.Cleanup(func() { pgExec(t, u.String(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
			return []string{"-D", "pg_schema=" + schema}
		}, true},
		{"mariadb", "LinkConfigMysql.properties", wiretap.MySQL, storetest.MySQLEnv, func(t *testing.T, u *url.URL) []string {
			db := fmt.Sprintf("lbsees%d", os.Getpid())
			mysqlExec(t, "", "DROP DATABASE IF EXISTS "+db, "CREATE DATABASE "+db)
			t.Cleanup(func() { mysqlExec(t, "", "DROP DATABASE IF EXISTS "+db) })
			u.Path = "/" + db
			return nil
		}, false},
	} {
		t.Run(srv.name, func(t *testing.T) {
			u, err := url.Parse(storetest.ServerURL(t, srv.env))
			if err != nil {
				t.Fatal(err)
			}
			common := append([]string{"-c", repoConfig(t, srv.config), "-D", "maxid1=2001", "-D", "nlinks_func=const", "-D", "nlinks_default=6",
				"-D", "warmup_time=0", "--no-results"}, srv.prepare(t, u)...)
			dir := t.TempDir()
			p, err := wiretap.Start(srv.proto, u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			pu := *u
			pu.Host = p.Addr()
			var runs []wireRun
			load := append([]string{"load", "--truncate", "-D", "url=" + u.String()}, common...)
			// A count of requests, not a time: a run on a loaded machine
			// makes as many as on a quiet one.
			for _, c := range []struct {
				requesters int
				pace       []string
			}{
				{1, []string{"-D", "requests=1500"}},
				{4, []string{"-D", "requests=400"}},
				{16, []string{"-D", "requests=100"}},
				{1, []string{"-D", "requests=1000", "-D", "requestrate=500"}},
				{16, []string{"-D", "requests=100", "-D", "arrival_rate=2000"}},
			} {
				// Each run starts from the graph the load leaves: the
				// paths a link write takes follow the links the runs
				// before it added and hid.
				if _, errOut, code := runCLI(t, dir, load...); code != 0 {
					t.Fatalf("load: exit %d\n%s", code, errOut)
				}
				p.Take()
				res := filepath.Join(dir, fmt.Sprint("r", len(runs)))
				args := append([]string{"run", "-D", "url=" + pu.String(), "-D", fmt.Sprint("requesters=", c.requesters), "-D", "maxtime=120"}, common...)
				args = append(append(args, c.pace...), "--results-dir", res)
				args = slices.DeleteFunc(args, func(s string) bool { return s == "--no-results" })
				if _, errOut, code := runCLI(t, dir, args...); code != 0 {
					t.Fatalf("run at %d requesters %v: exit %d\n%s", c.requesters, c.pace, code, errOut)
				}
				stmts, conns := p.Take()
				r := summarize(t, stmts, res, srv.begin)
				r.name = fmt.Sprintf("%d requesters %s", c.requesters, map[bool]string{true: "flat out", false: "paced"}[len(c.pace) == 2])
				r.requesters, r.conns = c.requesters, conns-sumConns(runs)
				runs = append(runs, r)
			}
			compareRuns(t, runs)
		})
	}
}

// wireRun is what the server saw of one request phase.
type wireRun struct {
	name                  string
	requesters, conns     int
	readConns, writeConns int                // the connections that sent requests: other requests, link writes
	shapes                map[string]string  // the statement shapes of the requests, with their Kinds
	ops                   map[string]float64 // requests of each op (and its retries)
	perOp                 map[string]float64 // statements of each op's kind per request of it
	stray                 []string           // what fits no path of the reference's
}

func sumConns(runs []wireRun) int {
	n := 0
	for _, r := range runs {
		n += r.conns
	}
	return n
}

// The read and node requests, one statement each, by their Kind.
var oneStatement = map[string]string{
	"SELECT NODETABLE": "GET_NODE", "INSERT NODETABLE": "ADD_NODE", "UPDATE NODETABLE": "UPDATE_NODE",
	"DELETE NODETABLE": "DELETE_NODE", "SELECT COUNTTABLE": "COUNT_LINK", "SELECT LINKTABLE": "GET_LINKS_LIST",
	"SELECT LINKTABLE TEXT": "MULTIGET_LINK",
}

// summarize reads the statements of a run and its results bundle.
func summarize(t *testing.T, stmts []wiretap.Stmt, resultsDir string, begin bool) wireRun {
	t.Helper()
	return summarizeOps(stmts, bundleOps(t, resultsDir), begin)
}

// bundleOps reads the requests of each op (and their retries) from a
// request phase's results bundle.
func bundleOps(t *testing.T, resultsDir string) map[string]float64 {
	t.Helper()
	ops := map[string]float64{}
	files, _ := filepath.Glob(filepath.Join(resultsDir, "*-request", "summary.json"))
	if len(files) != 1 {
		t.Fatalf("results in %s: %v", resultsDir, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Ops []struct {
			Op      string `json:"op"`
			Count   int64  `json:"count"`
			Retries int64  `json:"retries"`
		} `json:"ops"`
		// The ops of an open-loop run due before its measured window
		// starts, sent and not counted.
		PaceUncounted float64 `json:"pace_uncounted"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for _, o := range sum.Ops {
		ops[o.Op] += float64(o.Count + o.Retries)
	}
	ops[uncounted] = sum.PaceUncounted
	return ops
}

// uncounted keys, in a run's ops, the requests it sent and did not count.
const uncounted = "(uncounted)"

// summarizeOps reads the statements of a run that made ops requests.
func summarizeOps(stmts []wiretap.Stmt, ops map[string]float64, begin bool) wireRun {
	r := wireRun{ops: ops, perOp: map[string]float64{}}
	// Each connection's statements in order: a link-write connection's
	// transactions, or a reading connection's statements.
	byConn := map[int][]wiretap.Stmt{}
	for _, s := range stmts {
		byConn[s.Conn] = append(byConn[s.Conn], s)
	}
	r.shapes = map[string]string{}
	kinds := map[string]float64{}
	for _, ss := range byConn {
		writes, reads := 0, 0
		for _, s := range ss {
			switch k := requestKind(s); {
			case oneStatement[k] != "":
				reads++
			case strings.Contains(k, "LINKTABLE") || strings.Contains(k, "COUNTTABLE"):
				writes++
			}
		}
		if writes > 0 && reads > 0 {
			r.stray = append(r.stray, fmt.Sprintf("a connection sent %d link-write and %d other statements", writes, reads))
		}
		if writes == 0 && reads == 0 {
			continue // the store's own (its lock, its metadata, its description)
		}
		if writes > 0 {
			r.writeConns++
		} else {
			r.readConns++
		}
		for _, s := range ss {
			k := requestKind(s)
			// A request's statements; the store's own (its schema check,
			// its description) may run on a connection a requester takes
			// later, and are left out.
			if isRequest(k) {
				if s.Err == "" {
					r.shapes[wiretap.Shape(s.Text)] = k
				}
				kinds[k]++
			}
		}
		if writes > 0 {
			for _, tx := range transactions(ss, begin) {
				path := refPath(tx)
				if path == "" {
					r.stray = append(r.stray, "a transaction the reference never sends: "+strings.Join(tx, ", "))
				}
				kinds["path "+path]++
			}
		}
	}
	for k, n := range kinds {
		if op := oneStatement[k]; op != "" {
			r.perOp[op] = n / r.ops[op]
		} else if strings.HasPrefix(k, "path ") {
			r.perOp[k] = n / (r.ops["ADD_LINK"] + r.ops["UPDATE_LINK"] + r.ops["DELETE_LINK"])
		}
	}
	return r
}

// requestKind is s's wiretap.Kind, "" for a statement no request sends
// though its Kind is a request's: the store's own reads of the graph's
// tables (whether a table is empty, the node ids' range) are told apart
// by what a request's statement says.
func requestKind(s wiretap.Stmt) string {
	k := wiretap.Kind(s)
	bare := func(s string) string { return strings.ReplaceAll(s, " ", "") }
	if mark, ok := requestMarks[k]; ok && !strings.Contains(bare(wiretap.Shape(s.Text)), bare(mark)) {
		return ""
	}
	return k
}

// requestMarks are, for the Kinds the store's own statements share with
// requests, what only the request's statement says.
var requestMarks = map[string]string{
	"SELECT LINKTABLE TEXT": "ID2 IN (",
	"SELECT LINKTABLE":      "ORDER BY TIME DESC",
	"SELECT NODETABLE":      "WHERE ID = ?",
	"SELECT COUNTTABLE":     "WHERE ID = ? AND LINK_TYPE = ?",
}

// isRequest says whether a statement of Kind k is one a request sends:
// a read or write of the graph's tables, or a transaction's BEGIN, COMMIT
// or ROLLBACK.
func isRequest(k string) bool {
	switch {
	case oneStatement[k] != "", k == "BEGIN", k == "COMMIT", k == "ROLLBACK":
		return true
	}
	return strings.Contains(k, "LINKTABLE") || strings.Contains(k, "COUNTTABLE")
}

// transactions splits a link-write connection's request statements at
// each COMMIT and ROLLBACK, leaving out the BEGINs.
func transactions(ss []wiretap.Stmt, begin bool) [][]string {
	var all [][]string
	var tx []string
	for _, s := range ss {
		k := requestKind(s)
		if !isRequest(k) || begin && k == "BEGIN" {
			continue
		}
		tx = append(tx, k)
		if k == "COMMIT" || k == "ROLLBACK" {
			all = append(all, tx)
			tx = nil
		}
	}
	if tx != nil {
		all = append(all, tx)
	}
	return all
}

// refPath names the reference's transaction tx is, "" for none. A
// statement may fail with a transient error (a deadlock, a lock wait),
// after which the transaction rolls back.
func refPath(tx []string) string {
	dup := func(k string) bool { return k == "INSERT LINKTABLE !23505" || k == "INSERT LINKTABLE !1062" }
	for i, k := range tx {
		if strings.Contains(k, " !") && !dup(k) {
			if i == len(tx)-2 && tx[i+1] == "ROLLBACK" {
				return "failed, rolled back"
			}
			return ""
		}
	}
	// A MySQL driver sends no ROLLBACK after a failed first statement
	// (wiretap.Dialect.Elide): the duplicate key's update path follows in
	// the same transaction.
	if len(tx) > 1 && dup(tx[0]) && tx[1] != "ROLLBACK" {
		if p := refPath(tx[1:]); strings.HasPrefix(p, "update") {
			return "duplicate key, " + p
		}
		return ""
	}
	got := strings.Join(tx, ", ")
	for name, want := range map[string]string{
		"insert":          "INSERT LINKTABLE, INSERT COUNTTABLE UPSERT, COMMIT",
		"duplicate key":   "INSERT LINKTABLE !, ROLLBACK",
		"absent":          "SELECT LINKTABLE FOR UPDATE, ROLLBACK",
		"update":          "SELECT LINKTABLE FOR UPDATE, UPDATE LINKTABLE, COMMIT",
		"update, count":   "SELECT LINKTABLE FOR UPDATE, UPDATE LINKTABLE, UPDATE COUNTTABLE, COMMIT",
		"update, nothing": "SELECT LINKTABLE FOR UPDATE, UPDATE LINKTABLE, ROLLBACK",
	} {
		if got == want || name == "duplicate key" && len(tx) == 2 && dup(tx[0]) && tx[1] == "ROLLBACK" {
			return name
		}
	}
	return ""
}

// compareRuns fails where a run's server-side figures differ from the
// first's.
func compareRuns(t *testing.T, runs []wireRun) {
	t.Helper()
	first := runs[0]
	all := map[string]string{}
	for _, r := range runs {
		maps.Copy(all, r.shapes)
	}
	for _, r := range runs {
		for _, s := range r.stray {
			t.Errorf("%s: %s", r.name, s)
		}
		// Two per requester, taken at its first request, and up to two of
		// the store's own (its lock, its description).
		if r.conns > 2*r.requesters+2 || r.writeConns > r.requesters || r.readConns > r.requesters {
			t.Errorf("%s: %d connections for %d requesters, %d of them sent link writes and %d the other requests; want 2 per requester, one of each", r.name, r.conns, r.requesters, r.writeConns, r.readConns)
		}
		// Every run sent every statement any run sent, but those of an op
		// it happened not to draw (a node delete in a short paced run).
		var missing []string
		for shape, k := range all {
			if _, ok := r.shapes[shape]; !ok && (oneStatement[k] == "" || r.ops[oneStatement[k]] > 0) {
				missing = append(missing, shape)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s did not send statements other runs sent, so it sent others:\n\t%s\nall runs sent:\n\t%s", r.name, strings.Join(missing, "\n\t"), strings.Join(slices.Sorted(maps.Keys(all)), "\n\t"))
		}
		for op, n := range r.perOp {
			if strings.HasPrefix(op, "path ") {
				continue // their shares follow the graph's state, below
			}
			// One statement each; a requester's last request may have been
			// sent as the phase ended and not counted, and an open-loop
			// run's first ones were due before its measured window.
			if d := (n - 1) * r.ops[op]; math.Abs(d) > float64(r.requesters)+0.5+r.ops[uncounted] {
				t.Errorf("%s: %.4f statements per %s request (%.0f requests), want 1", r.name, n, op, r.ops[op])
			}
		}
		// The link writes: the share of their requests that took a second
		// transaction (a duplicate key, or no link to update) and the share
		// that inserted, each as close to the first run's as two draws of
		// that many requests come (4 standard errors of the difference of
		// two proportions).
		txs := func(w wireRun) (extra, inserts, n float64) {
			all := 0.0
			for k, v := range w.perOp {
				if strings.HasPrefix(k, "path ") {
					all += v
				}
			}
			n = w.ops["ADD_LINK"] + w.ops["UPDATE_LINK"] + w.ops["DELETE_LINK"]
			return all - 1, w.perOp["path insert"], n
		}
		a, ai, an := txs(r)
		b, bi, bn := txs(first)
		if !sameShare(a, an, b, bn) || !sameShare(ai, an, bi, bn) {
			t.Errorf("%s: %.3f transactions per link write (%.3f inserting), %s %.3f (%.3f)", r.name, 1+a, ai, first.name, 1+b, bi)
		}
		t.Logf("%s: %d connections, %.3f transactions per link write, %.3f inserting", r.name, r.conns, 1+a, ai)
	}
}

// sameShare says whether shares a of na requests and b of nb are as close
// as two draws of one share come: within 4 standard errors of their
// difference.
func sameShare(a, na, b, nb float64) bool {
	p := (a*na + b*nb) / (na + nb)
	se := math.Sqrt(max(p*(1-p), 0.01) * (1/na + 1/nb))
	return math.Abs(a-b) <= 4*se
}
