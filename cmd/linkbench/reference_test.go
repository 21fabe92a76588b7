package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/linkbench/linkbench/internal/store/storetest"
	"github.com/linkbench/linkbench/internal/store/storetest/wiretap"
)

// TestReferenceSendsWhatLinkbenchSends runs the reference's own request
// phase through the wire tap beside linkbench's, on PostgreSQL and
// MariaDB, where the machine has the reference: LINKBENCH_REF_SRC names
// a built checkout of mdcallag/linkbench (target/FacebookLinkBench.jar,
// and java on the PATH; bench/vs-reference.sh builds one). Both drivers'
// link-write transactions are the paths of wiretap.RefPaths, every other
// request is one statement, and they send the same kinds of statement on
// the same kinds of connection. It checks the fixture the stores' tests
// hold linkbench to against the reference itself; without the reference
// it is skipped (the fixture is read from its source).
func TestReferenceSendsWhatLinkbenchSends(t *testing.T) {
	src := os.Getenv("LINKBENCH_REF_SRC")
	if src == "" {
		t.Skip("LINKBENCH_REF_SRC (a built mdcallag/linkbench checkout) not set")
	}
	jar := filepath.Join(src, "target", "FacebookLinkBench.jar")
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("LINKBENCH_REF_SRC: %v (build it with mvn -DskipTests package)", err)
	}
	for _, srv := range []struct {
		name, config, refConfig string
		proto                   wiretap.Protocol
		env                     string
		begin                   bool
	}{
		{"postgres", "LinkConfigPgsql.properties", "LinkConfigPgsql.properties", wiretap.Postgres, storetest.PostgresEnv, true},
		{"mariadb", "LinkConfigMysql.properties", "LinkConfigMysql.properties", wiretap.MySQL, storetest.MySQLEnv, false},
	} {
		t.Run(srv.name, func(t *testing.T) {
			u, err := url.Parse(storetest.ServerURL(t, srv.env))
			if err != nil {
				t.Fatal(err)
			}
			// Both drivers in the reference's layout: its database (linkbench
			// on PostgreSQL, with the schema dbid; dbid on MariaDB). The
			// reference knows no dbid key: dbid is dbprefix followed by 0.
			prefix := fmt.Sprintf("lbref%d_", os.Getpid())
			dbid := prefix + "0"
			host, port, _ := net.SplitHostPort(u.Host)
			user := u.User.Username()
			pw, _ := u.User.Password()
			if srv.proto == wiretap.Postgres {
				admin := *u
				admin.Path = "/postgres"
				if !pgHasDatabase(t, admin.String(), "linkbench") {
					pgExec(t, admin.String(), "CREATE DATABASE linkbench")
				}
				lb := *u
				lb.Path = "/linkbench"
				t.Cleanup(func() { pgExec(t, lb.String(), "DROP SCHEMA IF EXISTS "+dbid+" CASCADE") })
			} else {
				mysqlExec(t, "", "DROP DATABASE IF EXISTS "+dbid, "CREATE DATABASE "+dbid)
				t.Cleanup(func() { mysqlExec(t, "", "DROP DATABASE IF EXISTS "+dbid) })
			}
			graph := []string{"-D", "maxid1=2001", "-D", "nlinks_func=const", "-D", "nlinks_config=1", "-D", "nlinks_default=6", "-D", "dbprefix=" + prefix, "-D", "user=" + user, "-D", "password=" + pw}
			dir := t.TempDir()
			load := append([]string{"load", "--truncate", "--no-results", "-c", repoConfig(t, srv.config), "-D", "host=" + host, "-D", "port=" + port}, graph...)
			p, err := wiretap.Start(srv.proto, u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			_, pport, _ := net.SplitHostPort(p.Addr())
			for _, requesters := range []int{1, 4} {
				reqs := fmt.Sprint(2000 / requesters)
				var runs []wireRun
				for _, driver := range []string{"reference", "linkbench"} {
					if _, errOut, code := runCLI(t, dir, load...); code != 0 {
						t.Fatalf("load: exit %d\n%s", code, errOut)
					}
					p.Take()
					var ops map[string]float64
					if driver == "reference" {
						ops = runReference(t, src, jar, srv.refConfig, append(graph, "-D", "host=127.0.0.1", "-D", "port="+pport,
							"-D", fmt.Sprint("requesters=", requesters), "-D", "requests="+reqs, "-D", "warmup_time=0", "-D", "maxtime=120"))
					} else {
						res := filepath.Join(dir, fmt.Sprint("lb", requesters))
						args := append([]string{"run", "-c", repoConfig(t, srv.config), "-D", "host=127.0.0.1", "-D", "port=" + pport,
							"-D", fmt.Sprint("requesters=", requesters), "-D", "requests=" + reqs, "-D", "warmup_time=0", "-D", "maxtime=120", "--results-dir", res}, graph...)
						if _, errOut, code := runCLI(t, dir, args...); code != 0 {
							t.Fatalf("linkbench run: exit %d\n%s", code, errOut)
						}
						ops = bundleOps(t, res)
					}
					stmts, _ := p.Take()
					// The JDBC driver runs a statement unnamed its first few
					// times before it prepares it (pgJDBC's prepareThreshold):
					// a statement with parameters counts as prepared.
					for i := range stmts {
						if strings.Contains(stmts[i].Text, "$1") || strings.Contains(stmts[i].Text, "?") {
							stmts[i].Prepared = true
						}
					}
					r := summarizeOps(stmts, ops, srv.begin)
					r.name = fmt.Sprintf("%s at %d requesters", driver, requesters)
					r.requesters = requesters
					runs = append(runs, r)
				}
				compareKinds(t, runs)
			}
		})
	}
}

// runReference runs the reference's request phase with args and returns
// its requests of each op, from its per-op lines.
func runReference(t *testing.T, src, jar, config string, args []string) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-cp", jar, "com.facebook.LinkBench.LinkBenchDriver", "-c", filepath.Join(src, "config", config)}, append(args, "-r")...)...)
	cmd.Env = append(os.Environ(), "LINKBENCH_HOME="+src)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the reference: %v\n%s", err, out)
	}
	ops := map[string]float64{}
	for _, m := range refOpLine.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.ParseFloat(m[2], 64)
		ops[m[1]] = n
	}
	if len(ops) == 0 {
		t.Fatalf("the reference printed no per-op counts:\n%s", out)
	}
	return ops
}

var refOpLine = regexp.MustCompile(`\]: ([A-Z_]+) count = (\d+) `)

// compareKinds fails where the drivers' runs differ in what they sent:
// a transaction that is no path of the reference's, an op that is not one
// statement, or a kind of statement one sent and the other did not.
func compareKinds(t *testing.T, runs []wireRun) {
	t.Helper()
	kinds := func(r wireRun) []string {
		var ks []string
		for _, k := range r.shapes {
			if !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
		}
		slices.Sort(ks)
		return ks
	}
	for _, r := range runs {
		for _, s := range r.stray {
			t.Errorf("%s: %s", r.name, s)
		}
		for op, n := range r.perOp {
			if !strings.HasPrefix(op, "path ") && (n < 0.95 || n > 1.05) {
				t.Errorf("%s: %.3f statements per %s request", r.name, n, op)
			}
		}
		t.Logf("%s: %s", r.name, strings.Join(kinds(r), ", "))
	}
	// The link writes' transactions: as many per request, and as many
	// of them inserting, as two draws of that many requests come.
	txs := func(w wireRun) (extra, inserts, n float64) {
		all := 0.0
		for k, v := range w.perOp {
			if strings.HasPrefix(k, "path ") {
				all += v
			}
		}
		return all - 1, w.perOp["path insert"], w.ops["ADD_LINK"] + w.ops["UPDATE_LINK"] + w.ops["DELETE_LINK"]
	}
	a, ai, an := txs(runs[0])
	b, bi, bn := txs(runs[1])
	if !sameShare(a, an, b, bn) || !sameShare(ai, an, bi, bn) {
		t.Errorf("%s: %.3f transactions per link write (%.3f inserting), %s %.3f (%.3f)", runs[1].name, 1+b, bi, runs[0].name, 1+a, ai)
	}
	t.Logf("transactions per link write: %s %.3f (%.3f inserting), %s %.3f (%.3f)", runs[0].name, 1+a, ai, runs[1].name, 1+b, bi)
	if a, b := kinds(runs[0]), kinds(runs[1]); !slices.Equal(a, b) {
		t.Errorf("%s sent\n\t%s\n%s sent\n\t%s", runs[0].name, strings.Join(a, "\n\t"), runs[1].name, strings.Join(b, "\n\t"))
	}
}

// pgHasDatabase reports whether the server of url has the database name.
func pgHasDatabase(t *testing.T, url, name string) bool {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var ok bool
	if err := conn.QueryRow(context.Background(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}
