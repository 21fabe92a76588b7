package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/linkbench/linkbench/internal/store/storetest"
)

func pgURL(t *testing.T) string { return storetest.ServerURL(t, storetest.PostgresEnv) }

func pgExec(t *testing.T, url string, stmts ...string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		if _, err := conn.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestTwoDatabaseTarget shards the graph over two PostgreSQL databases:
// load, a write-heavy run and check all follow the routing, every id1's
// links and counts and every node live on exactly the database that owns
// the id, and check proves it across both.
func TestTwoDatabaseTarget(t *testing.T) {
	url := pgURL(t)
	prefix := fmt.Sprintf("lbshard%d_", os.Getpid())
	pgExec(t, url, "DROP DATABASE IF EXISTS "+prefix+"0", "DROP DATABASE IF EXISTS "+prefix+"1",
		"CREATE DATABASE "+prefix+"0", "CREATE DATABASE "+prefix+"1")
	t.Cleanup(func() {
		pgExec(t, url, "DROP DATABASE IF EXISTS "+prefix+"0 WITH (FORCE)", "DROP DATABASE IF EXISTS "+prefix+"1 WITH (FORCE)")
	})
	dir := t.TempDir()
	common := []string{"-c", repoConfig(t, "LinkConfigPgsql.properties"), "-D", "url=" + url, "-D", "dbcount=2", "-D", "dbprefix=" + prefix,
		"-D", "nlinks_func=const", "-D", "nlinks_default=6", "-D", "maxid1=3001", "--no-results"}
	if out, errOut, code := runCLI(t, dir, append([]string{"load", "--truncate"}, common...)...); code != 0 || !strings.Contains(out, "Loaded 3000 nodes") {
		t.Fatalf("load: exit %d\n%s\n%s", code, out, errOut)
	}
	mix := []string{"-D", "addlink=25", "-D", "deletelink=15", "-D", "updatelink=20", "-D", "getlinklist=20", "-D", "countlink=5",
		"-D", "getlink=5", "-D", "getnode=3", "-D", "addnode=3", "-D", "updatenode=2", "-D", "deletenode=2"}
	out, errOut, code := runCLI(t, dir, append(append([]string{"run", "-D", "requesters=4", "-D", "maxtime=3", "-D", "requests=0", "-D", "warmup_time=0"}, common...), mix...)...)
	if code != 0 || !strings.Contains(out, "REQUEST PHASE COMPLETED") || !strings.Contains(errOut, "targets = ") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, dir, append([]string{"check"}, common...)...); code != 0 || !strings.Contains(out, "check passed") {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errOut)
	}
	for i := 0; i < 2; i++ {
		conn, err := pgx.Connect(context.Background(), strings.Replace(url, "/linkdb0", "/"+prefix+fmt.Sprint(i), 1))
		if err != nil {
			t.Fatal(err)
		}
		schema := pgx.Identifier{prefix + fmt.Sprint(i)}.Sanitize()
		for _, q := range []string{
			"SELECT count(*), count(*) FILTER (WHERE id1 %% 2 <> $1) FROM %s.linktable",
			"SELECT count(*), count(*) FILTER (WHERE id %% 2 <> $1) FROM %s.counttable",
			"SELECT count(*), count(*) FILTER (WHERE id %% 2 <> $1) FROM %s.nodetable",
		} {
			var rows, stray int64
			if err := conn.QueryRow(context.Background(), fmt.Sprintf(q, schema), i).Scan(&rows, &stray); err != nil {
				t.Fatal(err)
			}
			if rows == 0 || stray != 0 {
				t.Errorf("database %d, %s: %d rows, %d of ids it does not own", i, q, rows, stray)
			}
		}
		conn.Close(context.Background())
	}
	// A row written behind the router's back: check names it.
	pgExec(t, strings.Replace(url, "/linkdb0", "/"+prefix+"1", 1),
		"INSERT INTO "+prefix+"1.counttable (id, link_type, count, time, version) VALUES (2, 999, 0, 0, 0)")
	if out, errOut, code := runCLI(t, dir, append([]string{"check"}, common...)...); code != 1 || !strings.Contains(out+errOut, "id1 2 link_type 999 is on target "+prefix+"1") {
		t.Fatalf("check with a misrouted row: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestThreeProcessLoadEqualsOne loads maxid1=100001 into PostgreSQL with
// three concurrent --shard processes and compares every row with a
// single-process load of the same graph.
func TestThreeProcessLoadEqualsOne(t *testing.T) {
	url := pgURL(t)
	bin := buildBinary(t)
	graph := []string{"-c", repoConfig(t, "LinkConfigPgsql.properties"), "-D", "url=" + url, "-D", "maxid1=100001", "-D", "loaders=1",
		"-D", "load_random_seed=123", "-D", "load_time_ms=1700000000000", "--no-results"}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, append(args, graph...)...)
		cmd.Dir = t.TempDir()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	run("load", "--truncate", "-D", "pg_schema=lbone")
	run("init", "--drop", "-D", "pg_schema=lbfleet")
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run("load", "--shard", fmt.Sprintf("%d/3", i), "-D", "pg_schema=lbfleet")
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if a, b := pgGraphDigest(t, url, "lbone"), pgGraphDigest(t, url, "lbfleet"); a != b {
		t.Fatalf("three processes loaded a different graph:\n%s\nvs one process:\n%s", b, a)
	}
}

// TestMergeFleetDirectory: report --merge given the parent directory of
// a fleet's results finds every shard's request bundle (not the load
// ones) and sums them.
func TestMergeFleetDirectory(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	graph := []string{"-D", "maxid1=2001", "-D", "nlinks_func=const", "-D", "nlinks_default=3"}
	if _, errOut, code := runCLI(t, dir, append([]string{"load", "--results-dir", filepath.Join(results, "load")}, graph...)...); code != 0 {
		t.Fatalf("load: %s", errOut)
	}
	var want int64
	for i := 0; i < 2; i++ {
		_, errOut, code := runCLI(t, dir, append([]string{"run", "-D", "requesters=2", "-D", "requests=500", "-D", "maxtime=30", "-D", "warmup_time=0",
			"--shard", fmt.Sprintf("%d/2", i), "--results-dir", filepath.Join(results, fmt.Sprintf("shard-%d", i))}, graph...)...)
		if code != 0 {
			t.Fatalf("shard %d: exit %d %s", i, code, errOut)
		}
		want += 2 * 500 // requesters x requests
	}
	out, errOut, code := runCLI(t, dir, "report", "--merge", results, "--results-dir", filepath.Join(dir, "merged"))
	if code != 0 || !strings.Contains(out, fmt.Sprintf("merged 2 bundles: %d requests", want)) {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, dir, "report", "--merge", filepath.Join(dir, "merged")); code != 1 || !strings.Contains(errOut, "holds no request-phase bundles") {
		t.Fatalf("merge of an empty path: exit %d %s", code, errOut)
	}
}

// TestTiDBLoadRunCheck drives TiDB through the MySQL store (opt-in: make
// test-tidb builds and starts it).
func TestTiDBLoadRunCheck(t *testing.T) {
	url := os.Getenv("LINKBENCH_TEST_TIDB")
	if url == "" {
		t.Skip("LINKBENCH_TEST_TIDB not set (make test-tidb)")
	}
	dir := t.TempDir()
	common := []string{"-c", repoConfig(t, "LinkConfigMysql.properties"), "-D", "url=" + url, "-D", "nlinks_func=const", "-D", "nlinks_default=5",
		"-D", "maxid1=5001", "-D", "loaders=2", "--no-results"}
	if out, errOut, code := runCLI(t, dir, append([]string{"load", "--truncate"}, common...)...); code != 0 || !strings.Contains(out, "LOAD PHASE COMPLETED") {
		t.Fatalf("load: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code := runCLI(t, dir, append([]string{"run", "-D", "requesters=8", "-D", "maxtime=10", "-D", "requests=0", "-D", "warmup_time=0"}, common...)...)
	if code != 0 || !strings.Contains(out, "REQUEST PHASE COMPLETED") || !strings.Contains(errOut, "server_kind = TiDB") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Log(out)
	if out, errOut, code := runCLI(t, dir, append([]string{"check"}, common...)...); code != 0 || !strings.Contains(out, "check passed") {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errOut)
	}
}
