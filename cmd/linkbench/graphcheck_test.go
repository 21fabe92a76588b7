package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
	"github.com/linkbench/linkbench/internal/workload"
)

// graphCheckStores are the store kinds whose graph outlives the process,
// each with the arguments that point the CLI at a private copy of it.
func graphCheckStores() []struct {
	name string
	args func(t *testing.T, dir string) []string
} {
	unique := fmt.Sprintf("lbgraph_%d", os.Getpid())
	return []struct {
		name string
		args func(t *testing.T, dir string) []string
	}{
		{"sqlite", func(*testing.T, string) []string { return nil }},
		{"pebble", func(*testing.T, string) []string { return []string{"-D", "store=pebble"} }},
		{"postgres", func(t *testing.T, _ string) []string {
			u := storetest.ServerURL(t, storetest.PostgresEnv)
			return []string{"-c", repoConfig(t, "LinkConfigPgsql.properties"), "-D", "url=" + u, "-D", "pg_schema=" + unique}
		}},
		{"mariadb", func(t *testing.T, _ string) []string {
			u, err := url.Parse(storetest.ServerURL(t, storetest.MySQLEnv))
			if err != nil {
				t.Fatal(err)
			}
			pw, _ := u.User.Password()
			admin, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/", u.User.Username(), pw, u.Host))
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			if _, err := admin.Exec("CREATE DATABASE IF NOT EXISTS " + unique); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/", u.User.Username(), pw, u.Host)); err == nil {
					db.Exec("DROP DATABASE IF EXISTS " + unique)
					db.Close()
				}
			})
			u.Path = "/" + unique
			return []string{"-c", repoConfig(t, "LinkConfigMysql.properties"), "-D", "url=" + u.String()}
		}},
		{"mongodb", func(t *testing.T, _ string) []string {
			u := mongoURL(t)
			t.Cleanup(func() { dropMongoDB(t, u, unique) })
			return []string{"-c", repoConfig(t, "LinkConfigMongoDb2.properties"), "-D", "url=" + u.String(), "-D", "dbid=" + unique}
		}},
	}
}

// TestRunRefusesAGraphThatDoesNotMatch: on every store kind, run and check
// refuse an empty store, run refuses a graph loaded with other parameters,
// and both refuse a graph whose load did not complete, each with one line
// naming what was found and the command that fixes it.
// Reliability(load): `run`, `sweep` or `check` on a store with no graph (`linkbench init` then `run`), on a half-loaded graph (interrupted load, a `--shard` process not finished), or `run`/`sweep` with graph parameters (startid1, maxid1, link_type_count, randomid2max, load_random_seed, nlinks_func, data file) that differ from the loaded graph's (SQLite, Pebble, PostgreSQL, MariaDB, FerretDB) | refused before any request: one line naming what was found and the command that fixes it (`linkbench load`, `load --resume`, `load --truncate`, `-l -r` for the memory store), a line per difference when there are several, exit 1. Parameters the user did not set are taken from the graph (and logged). `--ignore-graph` goes ahead with a warning, recorded as `graph_check` in summary.json
func TestRunRefusesAGraphThatDoesNotMatch(t *testing.T) {
	small := []string{"-D", "nlinks_func=const", "-D", "nlinks_default=3", "-D", "maxid1=301", "-D", "loaders=2",
		"-D", "load_random_seed=11", "-D", "maxtime=1", "-D", "warmup_time=0", "-D", "requesters=1", "--no-results"}
	for _, kind := range graphCheckStores() {
		t.Run(kind.name, func(t *testing.T) {
			dir := t.TempDir()
			common := append(kind.args(t, dir), small...)
			cli := func(cmd string, extra ...string) (string, string, int) {
				return runCLI(t, dir, append(append([]string{cmd}, common...), extra...)...)
			}
			if _, errOut, code := cli("init", "--drop"); code != 0 {
				t.Fatalf("init: %s", errOut)
			}
			for _, cmd := range []string{"run", "check"} {
				_, errOut, code := cli(cmd)
				if want := "refusing to " + cmd + ": the store holds no graph (no nodes, links or counts); load it first with `linkbench load`"; code != 1 || !strings.Contains(errOut, want) {
					t.Fatalf("%s on an empty store: exit %d, want 1 and %q:\n%s", cmd, code, want, errOut)
				}
			}
			if _, errOut, code := cli("load"); code != 0 {
				t.Fatalf("load: %s", errOut)
			}
			_, errOut, code := cli("run", "-D", "maxid1=401", "-D", "load_random_seed=12")
			for _, want := range []string{"refusing to run: the store's graph does not match the configuration",
				"maxid1: the store's graph has 301, the configuration says 401 (-D)",
				"load_random_seed: the store's graph has 11, the configuration says 12 (-D)", "linkbench load --truncate"} {
				if code != 1 || !strings.Contains(errOut, want) {
					t.Errorf("run with another maxid1 and seed: exit %d, want 1 and %q:\n%s", code, want, errOut)
				}
			}
			markUnfinished(t, dir, common)
			for _, cmd := range []string{"run", "check"} {
				_, errOut, code := cli(cmd)
				if want := "refusing to " + cmd + ": the load of this graph did not complete; finish it with `linkbench load --resume`"; code != 1 || !strings.Contains(errOut, want) {
					t.Fatalf("%s on a half-loaded store: exit %d, want 1 and %q:\n%s", cmd, code, want, errOut)
				}
			}
		})
	}
}

// markUnfinished writes what an interrupted load leaves in the store's
// record: the graph is marked incomplete and its journal open.
func markUnfinished(t *testing.T, dir string, args []string) {
	t.Helper()
	old, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(old)
	a := newApp(&bytes.Buffer{}, &bytes.Buffer{})
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-c":
			a.opts.configFile = args[i+1]
		case "-D":
			a.opts.overrides = append(a.opts.overrides, args[i+1])
		}
	}
	e, err := a.setup()
	if err != nil {
		t.Fatal(err)
	}
	defer e.log.close()
	ctx := context.Background()
	st, err := e.open(ctx, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	j, ok := st.(store.Journaler)
	if !ok {
		t.Fatalf("store %s keeps no load journal", e.drv.Name)
	}
	err = j.UpdateMeta(ctx, map[string]string{workload.MetaComplete: "false", workload.JournalPrefix(0, 1) + workload.JournalState: workload.JournalOpen}, "")
	if err != nil {
		t.Fatal(err)
	}
}

// TestMemoryStoreRunNeedsLoadInTheSameProcess: the memory store is empty
// in every new process, so a run alone is refused with the command that
// works (-l -r); -l -r itself runs.
// Reliability(load): `run`, `sweep` or `check` on a store with no graph (`linkbench init` then `run`), on a half-loaded graph (interrupted load, a `--shard` process not finished), or `run`/`sweep` with graph parameters (startid1, maxid1, link_type_count, randomid2max, load_random_seed, nlinks_func, data file) that differ from the loaded graph's (SQLite, Pebble, PostgreSQL, MariaDB, FerretDB) | refused before any request: one line naming what was found and the command that fixes it (`linkbench load`, `load --resume`, `load --truncate`, `-l -r` for the memory store), a line per difference when there are several, exit 1. Parameters the user did not set are taken from the graph (and logged). `--ignore-graph` goes ahead with a warning, recorded as `graph_check` in summary.json
func TestMemoryStoreRunNeedsLoadInTheSameProcess(t *testing.T) {
	dir := t.TempDir()
	common := []string{"-c", repoConfig(t, "LinkConfigMemory.properties"), "-D", "maxid1=301", "-D", "nlinks_func=const",
		"-D", "nlinks_default=2", "-D", "maxtime=1", "-D", "warmup_time=0", "-D", "requesters=1", "--no-results"}
	_, errOut, code := runCLI(t, dir, append([]string{"run"}, common...)...)
	if want := "this store keeps its data only while the process runs; load and run in one process with `linkbench -l -r`"; code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("run: exit %d, want 1 and %q:\n%s", code, want, errOut)
	}
	if out, errOut, code := runCLI(t, dir, append([]string{"-l", "-r"}, common...)...); code != 0 || !strings.Contains(out, "REQUEST PHASE COMPLETED") {
		t.Fatalf("-l -r: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestIgnoreGraphRunsAndIsRecorded: --ignore-graph runs against an empty
// store, warns, and the results say so.
// Reliability(load): `run`, `sweep` or `check` on a store with no graph (`linkbench init` then `run`), on a half-loaded graph (interrupted load, a `--shard` process not finished), or `run`/`sweep` with graph parameters (startid1, maxid1, link_type_count, randomid2max, load_random_seed, nlinks_func, data file) that differ from the loaded graph's (SQLite, Pebble, PostgreSQL, MariaDB, FerretDB) | refused before any request: one line naming what was found and the command that fixes it (`linkbench load`, `load --resume`, `load --truncate`, `-l -r` for the memory store), a line per difference when there are several, exit 1. Parameters the user did not set are taken from the graph (and logged). `--ignore-graph` goes ahead with a warning, recorded as `graph_check` in summary.json
func TestIgnoreGraphRunsAndIsRecorded(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := runCLI(t, dir, "init"); code != 0 {
		t.Fatal(errOut)
	}
	out, errOut, code := runCLI(t, dir, "run", "--ignore-graph", "-D", "maxid1=301", "-D", "maxtime=1", "-D", "warmup_time=0", "-D", "requesters=1")
	if code != 0 || !strings.Contains(out, "REQUEST PHASE COMPLETED") || !strings.Contains(errOut, "WARN") || !strings.Contains(errOut, "--ignore-graph: the store holds no graph") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(latestBundle(t, dir, "request"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"ignored": true`) || !strings.Contains(string(b), "the store holds no graph") {
		t.Errorf("summary.json does not record the ignored problem:\n%s", b[:min(len(b), 1500)])
	}
}
