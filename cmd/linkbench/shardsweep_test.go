package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

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
	// The shards leave the finish to a final step: until it runs, the
	// graph is refused.
	for i := 0; i < 3; i++ {
		if _, errOut, code := runCLI(t, sharded, append([]string{"load", "--no-finish", "--shard", fmt.Sprintf("%d/3", i)}, graph...)...); code != 0 {
			t.Fatalf("shard %d: %s", i, errOut)
		}
	}
	if _, errOut, code := runCLI(t, sharded, append([]string{"check"}, graph...)...); code != 1 || !strings.Contains(errOut, "finishing steps (index builds, statistics) have not run") || !strings.Contains(errOut, "linkbench load --finish") {
		t.Fatalf("check before load --finish: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, sharded, append([]string{"load", "--shard", "1/3"}, graph...)...); code != 1 || !strings.Contains(errOut, "shard 1/3 of this load is in the store already") {
		t.Fatalf("a loaded shard again: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, sharded, append([]string{"load", "--shard", "1/2"}, graph...)...); code != 1 || !strings.Contains(errOut, "a --shard load of 3 shards, this process is one of 2") {
		t.Fatalf("a shard of another fleet: exit %d %s", code, errOut)
	}
	out, errOut, code := runCLI(t, sharded, append([]string{"load", "--finish"}, graph...)...)
	if code != 0 || !strings.Contains(errOut, "stage build index id1_type: started") {
		t.Fatalf("load --finish: exit %d %s %s", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, sharded, append([]string{"check"}, graph...)...); code != 0 || !strings.Contains(out, "check passed") {
		t.Fatalf("check after load --finish: exit %d %s %s", code, out, errOut)
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
