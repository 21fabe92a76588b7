package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/store"
	_ "modernc.org/sqlite"
)

// runCLI runs the command line in dir and returns stdout, stderr and the
// exit code main would use.
func runCLI(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	return runCLIWatching(t, dir, nil, args...)
}

// runCLIWatching is runCLI that also copies what the command writes on
// stderr to watch as it is written, so a test can act at a given moment.
func runCLIWatching(t *testing.T, dir string, watch io.Writer, args ...string) (string, string, int) {
	t.Helper()
	return runCLIWith(t, context.Background(), dir, watch, args...)
}

func repoConfig(t *testing.T, name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "config", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLegacyFlagsLoadAndRequestInOneProcess(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "stats.csv")
	stream := filepath.Join(dir, "stream.csv")
	out, errOut, code := runCLI(t, dir, "-c", repoConfig(t, "LinkConfigMemory.properties"),
		"-D", "maxid1=5001", "-D", "nlinks_func=const", "-D", "nlinks_default=4", "-Dmaxtime=2", "-D", "requesters=2", "-csvstats", csv, "-csvstream", stream, "-L", filepath.Join(dir, "log.txt"), "-l", "-r")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"LOAD PHASE COMPLETED. Loaded 5000 nodes (Expected 5000), 20000 links (4.00 /node), 10000 counts (2.00 /node). ", "REQUEST PHASE COMPLETED. ", "GET_NODE ", "p99.9 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	// The results are printed once, in lines narrower than a terminal; the
	// reference's per-op lines go to the -L log for the scripts that
	// parse them.
	if strings.Count(out, "REQUEST PHASE COMPLETED") != 1 || strings.Contains(out, "GET_NODE count = ") {
		t.Errorf("stdout prints the results more than once:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		// The reference's LOAD line keeps its format, which scripts
		// parse, whatever its width.
		if len(l) > 160 && !strings.HasPrefix(l, "LOAD PHASE COMPLETED. ") {
			t.Errorf("stdout line of %d columns: %q", len(l), l)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "log.txt")); !strings.Contains(string(log), "GET_NODE count = ") {
		t.Error("the -L log file lacks the reference's per-op lines")
	}
	b, err := os.ReadFile(csv)
	if err != nil || !strings.HasPrefix(string(b), "op,count,p25_low,p25_high,p50_low,p50_high,p75_low,p75_high,p95_low,p95_high,p99_low,p99_high,max,mean,threads") {
		t.Errorf("csvstats: %v %q", err, b)
	}
	b, err = os.ReadFile(stream)
	if err != nil || !strings.HasPrefix(string(b), "threadID,timestamp,op,totalops,totalerrors,ops,sampleDuration_us") || strings.Count(string(b), "\n") < 3 {
		t.Errorf("csvstream: %v %q", err, b)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "log.txt")); !strings.Contains(string(log), "REQUEST PHASE COMPLETED") {
		t.Error("the -L log file lacks the results")
	}
	bundles, _ := filepath.Glob(filepath.Join(dir, "linkbench-results", "*-request", "summary.json"))
	if len(bundles) != 1 {
		t.Fatalf("results bundles: %v", bundles)
	}
	var res struct {
		Phase  string `json:"phase"`
		Totals struct {
			Requests int64 `json:"requests"`
		} `json:"totals"`
		Ops []struct {
			Op    string  `json:"op"`
			P99   float64 `json:"p99_ms"`
			Count int64   `json:"count"`
		} `json:"ops"`
	}
	b, _ = os.ReadFile(bundles[0])
	if err := json.Unmarshal(b, &res); err != nil || res.Phase != "request" || res.Totals.Requests == 0 || len(res.Ops) < 5 {
		t.Fatalf("summary.json: %v %+v", err, res)
	}
}

// Reliability(load): load into a store that already holds a graph | refused unless `--truncate` (or `--resume` for an interrupted load)
func TestZeroConfigSQLiteLoadRunCheck(t *testing.T) {
	dir := t.TempDir()
	small := []string{"-D", "nlinks_func=const", "-D", "nlinks_default=5", "-D", "maxid1=2001", "-D", "maxtime=2", "-D", "warmup_time=0", "-D", "requesters=2"}
	out, errOut, code := runCLI(t, dir, append([]string{"load"}, small...)...)
	if code != 0 || !strings.Contains(out, "LOAD PHASE COMPLETED") {
		t.Fatalf("load: exit %d\n%s\n%s", code, out, errOut)
	}
	// A second load without --truncate is refused; with it, it reloads.
	if _, errOut, code := runCLI(t, dir, append([]string{"load"}, small...)...); code != 1 || !strings.Contains(errOut, "--truncate") {
		t.Fatalf("second load: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, dir, append([]string{"load", "--truncate"}, small...)...); code != 0 {
		t.Fatalf("reload: exit %d %s", code, errOut)
	}
	// run adopts the loaded maxid1 when the user does not repeat it...
	writeHeavy := []string{"-D", "addlink=30", "-D", "deletelink=20", "-D", "updatelink=30", "-D", "getlinklist=20", "-D", "countlink=0",
		"-D", "getlink=0", "-D", "getnode=0", "-D", "addnode=0", "-D", "updatenode=0", "-D", "deletenode=0"}
	out, errOut, code = runCLI(t, dir, append([]string{"run", "-D", "nlinks_func=const", "-D", "nlinks_default=5", "-D", "maxtime=2", "-D", "warmup_time=0", "-D", "requesters=8"}, writeHeavy...)...)
	if code != 0 || !strings.Contains(out, "REQUEST PHASE COMPLETED") || !strings.Contains(errOut, "maxid1=2001") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	// The bundle of the write-heavy run carries efficiency figures measured from /proc.
	if b, err := os.ReadFile(latestBundle(t, dir, "request")); err == nil {
		var res struct {
			Efficiency struct {
				CPU     float64 `json:"driver_cpu_us_per_op"`
				WriteKB float64 `json:"disk_write_kb_per_op"`
			} `json:"efficiency"`
		}
		if err := json.Unmarshal(b, &res); err != nil || res.Efficiency.CPU <= 0 || res.Efficiency.WriteKB <= 0 {
			t.Errorf("efficiency after a SQLite run: %+v (%v); want CPU/op > 0 and KB written/op > 0", res.Efficiency, err)
		}
	} else {
		t.Error(err)
	}
	// ...and refuses a different one.
	if _, errOut, code := runCLI(t, dir, "run", "-D", "nlinks_func=const", "-D", "nlinks_default=5", "-D", "maxid1=3001"); code != 1 || !strings.Contains(errOut, "maxid1: the store's graph has 2001, the configuration says 3001 (-D)") {
		t.Fatalf("mismatch: exit %d %s", code, errOut)
	}
	out, errOut, code = runCLI(t, dir, "check")
	if code != 0 || !strings.Contains(out, "check passed") {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errOut)
	}
	// Corrupt one count row: check names it and exits 1.
	db, err := sql.Open("sqlite", filepath.Join(dir, "linkbench-data", "linkbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE counttable SET count = count + 5 WHERE id = 77 AND link_type = 123456789"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, _, code = runCLI(t, dir, "check")
	if code != 1 || !strings.Contains(out, "MISMATCH id1 77 link_type 123456789") {
		t.Fatalf("corrupted check: exit %d\n%s", code, out)
	}
}

// Reliability(input): malformed value, unknown key (`--strict`), percentages off by 1e-3, NaN/Inf, negative or zero sizes, `maxid1 <= startid1`, 10 GB payloads, bad class names, missing workload or data file | one message naming the key, its file and line (or -D) and the expected form, exit 1, before anything is written
// Reliability(output): an output that cannot be written (`--csvstats` or `--csvstream` in a missing directory, `-L`, `--cpuprofile`, a results directory under a file) | one line before the store is opened, exit 1
func TestBadInputExitsWithOneClearLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.properties")
	os.WriteFile(bad, []byte("store = memory\nmaxid1 = lots\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "-c", bad}, "maxid1 = \"lots\""},
		{[]string{"load", "-c", filepath.Join(dir, "missing.properties")}, "cannot read config file"},
		{[]string{"load", "-D", "store=memory", "-D", "data_file=/nonexistent.dat"}, "data_file"},
		{[]string{"load", "-D", "store=memory", "-D", "getnode=50"}, "operation mix sums to"},
		{[]string{"load", "-D", "store=nosuchdb"}, "unknown store \"nosuchdb\""},
		{[]string{"load", "-D", "store=memory", "--results-dir", filepath.Join(bad, "sub")}, "results_dir"},
	} {
		_, errOut, code := runCLI(t, dir, c.args...)
		if code != 1 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "goroutine ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", c.args, code, errOut, c.want)
		}
	}
}

func TestConfigCommandShowsOrigins(t *testing.T) {
	out, errOut, code := runCLI(t, t.TempDir(), "config", "-D", "requesters=3", "-D", "password=hunter2")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	for _, want := range []string{"requesters", "-D", "zero-config default", "workload embedded:FBWorkload.properties", "******"} {
		if !strings.Contains(out, want) {
			t.Errorf("config output lacks %q", want)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Error("the password is printed")
	}
}

// TestConfigAllListsEveryKey: config lists the keys of the store in use
// with their defaults, and config --all every key of linkbench and of
// every store, set or not.
func TestConfigAllListsEveryKey(t *testing.T) {
	rows := func(args ...string) map[string]string {
		out, errOut, code := runCLI(t, t.TempDir(), args...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		m := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 1 {
				m[f[0]] += strings.Join(f[1:], " ") + "; "
			}
		}
		return m
	}
	plain := rows("config")
	if got := plain["sqlite_synchronous"]; got != "FULL default of store sqlite (in use); " {
		t.Errorf("config: sqlite_synchronous %q", got)
	}
	if _, ok := plain["pg_database"]; ok {
		t.Error("config without --all lists the keys of other stores")
	}
	all := rows("config", "--all")
	for _, k := range config.AllKeys() {
		if all[k.Name] == "" {
			t.Errorf("config --all lacks %s", k.Name)
		}
	}
	for _, d := range store.Drivers() {
		for _, k := range d.Keys {
			if !strings.Contains(all[k.Name], d.Name) && !strings.Contains(all[k.Name], "default of store sqlite") {
				t.Errorf("config --all lacks store %s's key %s: %q", d.Name, k.Name, all[k.Name])
			}
		}
	}
	for key, want := range map[string]string{"host": "- unset; ", "pg_database": "linkbench default of store postgres; ",
		"maxtime": "60 zero-config default; ", "tls": "false default of store mongodb; - default of store mysql; "} {
		if all[key] != want {
			t.Errorf("config --all: %s %q, want %q", key, all[key], want)
		}
	}
}
