package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// tableHash digests every row of the three tables in primary-key order.
func tableHash(t *testing.T, path string) string {
	t.Helper()
	return queryHash(t, path, "SELECT id, type, version, time, hex(data) FROM nodetable ORDER BY id")
}

// queryHash digests the link and count tables and the result of nodes.
func queryHash(t *testing.T, path, nodes string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := sha256.New()
	for _, q := range []string{
		"SELECT id1, id2, link_type, visibility, hex(data), time, version FROM linktable ORDER BY link_type, id1, id2",
		"SELECT id, link_type, count, time, version FROM counttable ORDER BY id, link_type",
		nodes,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			rows.Scan(ptrs...)
			fmt.Fprintln(h, vals...)
		}
		rows.Close()
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestShardedLoadEqualsSingleLoad(t *testing.T) {
	graph := []string{"-D", "nlinks_func=const", "-D", "nlinks_default=7", "-D", "maxid1=3001", "-D", "loader_chunk_size=100",
		"-D", "load_random_seed=11", "-D", "load_time_ms=1700000000000", "--no-results"}
	one := t.TempDir()
	if _, errOut, code := runCLI(t, one, append([]string{"load"}, graph...)...); code != 0 {
		t.Fatalf("single load: %s", errOut)
	}
	sharded := t.TempDir()
	if _, errOut, code := runCLI(t, sharded, append([]string{"init"}, graph[:len(graph)-1]...)...); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	for i := 0; i < 3; i++ {
		if _, errOut, code := runCLI(t, sharded, append([]string{"load", "--shard", fmt.Sprintf("%d/3", i)}, graph...)...); code != 0 {
			t.Fatalf("shard %d: %s", i, errOut)
		}
	}
	a := tableHash(t, filepath.Join(one, "linkbench-data", "linkbench.db"))
	b := tableHash(t, filepath.Join(sharded, "linkbench-data", "linkbench.db"))
	if a != b {
		t.Fatalf("three shards loaded a different graph: %s vs %s", b, a)
	}
	if _, errOut, code := runCLI(t, sharded, append([]string{"load", "--shard", "0/3", "-D", "load_random_seed=1"}, "--no-results")...); code != 1 || !strings.Contains(errOut, "load_time_ms") {
		t.Fatalf("shard without a fixed time: exit %d %s", code, errOut)
	}
}

// latestBundle returns the summary.json of the newest bundle of phase.
func latestBundle(t *testing.T, dir, phase string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "linkbench-results", "*-"+phase, "summary.json"))
	if len(m) == 0 {
		t.Fatalf("no %s bundle in %s", phase, dir)
	}
	return m[len(m)-1]
}

func TestSweepWritesCurveAndBundles(t *testing.T) {
	dir := t.TempDir()
	// The memory store starts empty in every process: a sweep is refused
	// unless --ignore-graph, which the results record.
	args := []string{"sweep", "-c", repoConfig(t, "LinkConfigMemory.properties"), "-D", "maxid1=2001",
		"-D", "nlinks_func=const", "-D", "nlinks_default=3", "-D", "requesters=2", "--rates", "200,400", "--point-time", "1",
		"-D", "arrival_rate=50", "-D", "maxtime=7"}
	if _, errOut, code := runCLI(t, dir, args...); code != 1 || !strings.Contains(errOut, "refusing to sweep: the store holds no graph") {
		t.Fatalf("sweep of an empty store: exit %d\n%s", code, errOut)
	}
	out, errOut, code := runCLI(t, dir, append(args, "--ignore-graph")...)
	if code != 0 || !strings.Contains(out, "SWEEP COMPLETED. 2 points.") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	sweeps, _ := filepath.Glob(filepath.Join(dir, "linkbench-results", "*-sweep", "sweep.json"))
	points, _ := filepath.Glob(filepath.Join(dir, "linkbench-results", "*-request", "summary.json"))
	if len(sweeps) != 1 || len(points) != 2 {
		t.Fatalf("sweep bundles %v, point bundles %v", sweeps, points)
	}
	if b, _ := os.ReadFile(points[0]); !strings.Contains(string(b), `"ignored": true`) {
		t.Errorf("a point's summary.json does not record --ignore-graph:\n%.600s", b)
	}
	// Each point's results record the settings it ran with (its rate and
	// --point-time), not the file's, and say where they came from.
	rates := map[string]bool{}
	for _, p := range points {
		var r struct {
			Config []struct{ Key, Value, Origin string } `json:"config"`
		}
		b, _ := os.ReadFile(p)
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		for _, e := range r.Config {
			switch {
			case e.Key == "arrival_rate":
				rates[e.Value] = true
				fallthrough
			case e.Key == "maxtime":
				if !strings.HasPrefix(e.Origin, "sweep point") {
					t.Errorf("%s: %s = %s from %q, want a sweep point's", p, e.Key, e.Value, e.Origin)
				}
				if e.Key == "maxtime" && e.Value != "1" {
					t.Errorf("%s: maxtime = %s, want the point's 1", p, e.Value)
				}
			}
		}
	}
	if !rates["200"] || !rates["400"] {
		t.Errorf("the points record arrival_rate %v, want 200 and 400", rates)
	}
	page, _ := os.ReadFile(filepath.Join(filepath.Dir(sweeps[0]), "report.html"))
	for _, want := range []string{`id="throughput"`, `id="latency-get_node"`, "Latency of all requests against throughput"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("sweep report lacks %s", want)
		}
	}
	var sw struct {
		Points []struct {
			Offered  float64 `json:"offered_ops_per_sec"`
			Achieved float64 `json:"achieved_ops_per_sec"`
		} `json:"points"`
	}
	b, _ := os.ReadFile(sweeps[0])
	if err := json.Unmarshal(b, &sw); err != nil || len(sw.Points) != 2 || sw.Points[1].Achieved <= sw.Points[0].Achieved {
		t.Fatalf("sweep.json %v %+v", err, sw)
	}
}
