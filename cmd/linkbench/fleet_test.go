package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/linkbench/linkbench/internal/store/storetest"
	"github.com/linkbench/linkbench/internal/workload"
)

// cappedDataFile writes Distribution.dat with its out-degrees capped at
// maxLinks: the graph keeps its shape and one super node split into
// pieces, with a fifth of the rows the full tail gives at 200,000 ids.
func cappedDataFile(t *testing.T, maxLinks int64) string {
	t.Helper()
	b, err := os.ReadFile(repoConfig(t, "Distribution.dat"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []string
	section, last := "", -1
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 1 {
			section = f[0]
		}
		if section == "nlinks" && len(f) == 2 {
			if v, _ := strconv.ParseInt(f[0], 10, 64); v > maxLinks {
				continue
			}
			last = len(out)
		}
		out = append(out, l)
	}
	out[last] = strings.Fields(out[last])[0] + " 100"
	p := filepath.Join(t.TempDir(), "capped.dat")
	if err := os.WriteFile(p, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fleetTarget is one server kind of TestShardFleetLoadsLikeOneProcess: the
// arguments that point a process at the database named db, and the
// digest of db's three tables.
type fleetTarget struct {
	name   string
	args   func(t *testing.T, db string) []string
	digest func(t *testing.T, db string) string
	meta   func(t *testing.T, db, key string) string
}

func fleetTargets() []fleetTarget {
	return []fleetTarget{
		{"postgres", func(t *testing.T, db string) []string {
			t.Cleanup(func() { pgExec(t, pgURL(t), "DROP SCHEMA IF EXISTS "+db+" CASCADE") })
			return []string{"-c", repoConfig(t, "LinkConfigPgsql.properties"), "-D", "url=" + pgURL(t), "-D", "pg_schema=" + db}
		}, func(t *testing.T, db string) string { return pgGraphDigest(t, pgURL(t), db) },
			func(t *testing.T, db, key string) string {
				conn, err := pgx.Connect(context.Background(), pgURL(t))
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(context.Background())
				var v string
				conn.QueryRow(context.Background(), "SELECT v FROM "+db+".linkbench_meta WHERE k = $1", key).Scan(&v)
				return v
			}},
		{"mariadb", func(t *testing.T, db string) []string {
			mysqlExec(t, "", "CREATE DATABASE IF NOT EXISTS "+db)
			t.Cleanup(func() { mysqlExec(t, "", "DROP DATABASE IF EXISTS "+db) })
			url := strings.TrimSuffix(storetest.ServerURL(t, storetest.MySQLEnv), "/linkdb0") + "/" + db
			return []string{"-c", repoConfig(t, "LinkConfigMysql.properties"), "-D", "url=" + url}
		}, mysqlGraphDigest, func(t *testing.T, db, key string) string {
			var v string
			mysqlQuery(t, db, func(h *sql.DB) { h.QueryRow("SELECT v FROM linkbench_meta WHERE k = ?", key).Scan(&v) })
			return v
		}},
	}
}

// mysqlQuery calls fn with a connection to database db of the MariaDB
// server.
func mysqlQuery(t *testing.T, db string, fn func(h *sql.DB)) {
	t.Helper()
	u := storetest.ServerURL(t, storetest.MySQLEnv)
	cred, hostPath, _ := strings.Cut(strings.TrimPrefix(u, "mysql://"), "@")
	user, pw, _ := strings.Cut(cred, ":")
	host, _, _ := strings.Cut(hostPath, "/")
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, pw, "tcp", host, db
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := sql.OpenDB(conn)
	defer h.Close()
	fn(h)
}

// mysqlGraphDigest sums a hash of every row of db's three tables.
func mysqlGraphDigest(t *testing.T, db string) string {
	t.Helper()
	var b strings.Builder
	mysqlQuery(t, db, func(h *sql.DB) {
		for _, q := range []string{
			"SELECT count(*), sum(crc32(concat_ws(',', id1, id2, link_type, visibility, hex(data), time, version))) FROM linktable",
			"SELECT count(*), sum(crc32(concat_ws(',', id, link_type, count, time, version))) FROM counttable",
			"SELECT count(*), sum(crc32(concat_ws(',', id, type, version, time, hex(data)))) FROM nodetable",
		} {
			var n int64
			var sum string
			if err := h.QueryRow(q).Scan(&n, &sum); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			fmt.Fprintf(&b, "%d rows %s\n", n, sum)
		}
	})
	return b.String()
}

// TestShardFleetLoadsLikeOneProcess: four --shard processes load 200,000
// ids into one PostgreSQL and one MariaDB database with op_timeout=5,
// two started together and two more together once the first has ended
// (one of them may start while the other loads, or after). Every process
// succeeds, the database equals a single-process load row for row, and
// exactly one process builds id1_type: before, each shard built it at
// its own end, the first under the others' inserts.
func TestShardFleetLoadsLikeOneProcess(t *testing.T) {
	bin := buildBinary(t)
	data := cappedDataFile(t, 200000)
	graph := []string{"-D", "maxid1=200001", "-D", "data_file=" + data, "-D", "loaders=2", "-D", "op_timeout=5",
		"-D", "load_random_seed=123", "-D", "load_time_ms=1700000000000", "--no-results"}
	for _, target := range fleetTargets() {
		t.Run(target.name, func(t *testing.T) {
			one, fleet := fmt.Sprintf("lbone%d", os.Getpid()), fmt.Sprintf("lbfleet%d", os.Getpid())
			oneArgs, fleetArgs := target.args(t, one), target.args(t, fleet)
			run := func(args ...string) (string, error) {
				cmd := exec.Command(bin, append(args, graph...)...)
				cmd.Dir = t.TempDir()
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			must := func(out string, err error) string {
				t.Helper()
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				return out
			}
			must(run(append([]string{"load", "--truncate"}, oneArgs...)...))
			must(run(append([]string{"init", "--drop"}, fleetArgs...)...))
			outs := make([]string, 4)
			var wg sync.WaitGroup
			shard := func(i int) {
				defer wg.Done()
				out, err := run(append([]string{"load", "--shard", fmt.Sprintf("%d/4", i)}, fleetArgs...)...)
				outs[i] = out
				if err != nil {
					t.Errorf("shard %d/4: %v\n%s", i, err, out)
				}
			}
			wg.Add(2)
			first := make(chan struct{})
			go func() { shard(0); close(first) }()
			go shard(1)
			<-first
			wg.Add(2)
			go shard(2)
			go shard(3)
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			all := strings.Join(outs, "\n")
			if n := strings.Count(all, "stage build index id1_type: started"); n != 1 {
				t.Errorf("%d processes built id1_type, want exactly 1:\n%s", n, all)
			}
			finisher := target.meta(t, fleet, workload.MetaFleetFinisher)
			if !strings.HasPrefix(finisher, "shard ") || target.meta(t, fleet, workload.MetaFleetFinished) != "true" {
				t.Errorf("the load record says the graph was finished by %q (finished %q)", finisher, target.meta(t, fleet, workload.MetaFleetFinished))
			}
			if a, b := target.digest(t, one), target.digest(t, fleet); a != b {
				t.Fatalf("four shards loaded a different graph:\n%s\nvs one process:\n%s", b, a)
			}
			if out := must(run(append([]string{"load", "--finish"}, fleetArgs...)...)); !strings.Contains(out, "finished already (by "+finisher+")") {
				t.Errorf("load --finish of a finished load:\n%s", out)
			}
		})
	}
}
