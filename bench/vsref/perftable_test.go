package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoopSharesFollowLittlesLaw(t *testing.T) {
	p := Perf{Requesters: 4, RequestsPerS: 10000, Ops: map[string]OpPerf{
		"ADD_LINK": {Count: 100, MeanMs: 1.0},
		"GET_NODE": {Count: 300, MeanMs: 0.2},
	}}
	mean, nx, share, rest := loopShares(p)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"mean", mean, 0.4}, {"N/X", nx, 0.4}, {"link-write share", share, 0.625}, {"rest", rest, 0.2}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if m, nx, sh, r := loopShares(Perf{Requesters: 4}); m != 0 || nx != 0 || sh != 0 || r != 0 {
		t.Errorf("a run without ops gave %v %v %v %v, want zeros", m, nx, sh, r)
	}
	var b bytes.Buffer
	closedLoop(&b, []int{4}, func(d string, n int) []Perf { return []Perf{p} })
	if !strings.Contains(b.String(), " 0.400  0.400    62.5%   0.200") {
		t.Errorf("the table lacks the cell's figures:\n%s", b.String())
	}
}

// Each round's pair is judged on its own: the medians over rounds can
// mix a pair that met both bounds with one that did not.
func TestPairVerdictsJudgeEachRound(t *testing.T) {
	ops := []string{"ADD_NODE", "GET_NODE"}
	run := func(rate, add, get float64) Perf {
		return Perf{RequestsPerS: rate, Ops: map[string]OpPerf{"ADD_NODE": {MeanMs: add}, "GET_NODE": {MeanMs: get}}}
	}
	ref := []Perf{run(16000, 0.50, 0.10), run(16800, 0.48, 0.10), run(16400, 0.47, 0.11)}
	lb := []Perf{run(16320, 0.47, 0.10), run(16500, 0.47, 0.09), run(16800, 0.48, 0.10)}
	var b bytes.Buffer
	pairVerdicts(&b, []int{4}, ops, func(d string, n int) []Perf {
		if d == "reference" {
			return ref
		}
		return lb
	})
	for _, want := range []string{
		"4 round 1 |  1.02 | none: both bounds",
		"4 round 2 |  0.98 | none\n",
		"4 round 3 |  1.02 | ADD_NODE +2.1%",
		"4: 1 of 3 pairs",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the verdicts lack %q:\n%s", want, b.String())
		}
	}
	// A slower list read comes with the pair's history reads, which set it.
	lists := func(rate, mean float64, hist int64) Perf {
		return Perf{RequestsPerS: rate, HistoryQueries: hist, ListRequests: 80000, Ops: map[string]OpPerf{"GET_LINKS_LIST": {MeanMs: mean}}}
	}
	b.Reset()
	pairVerdicts(&b, []int{4}, []string{"GET_LINKS_LIST"}, func(d string, n int) []Perf {
		if d == "reference" {
			return []Perf{lists(11000, 0.350, 190), lists(11000, 0.350, 190)}
		}
		return []Perf{lists(12000, 0.364, 250), lists(12000, 0.340, 250)}
	})
	if want := "4 round 1 |  1.09 | GET_LINKS_LIST +4.0% (history reads 0.237 / 0.312 per 100)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("the verdicts lack %q:\n%s", want, b.String())
	}
	if strings.Count(b.String(), "history reads") != 1 {
		t.Errorf("a pair whose list reads were not slower names its history reads:\n%s", b.String())
	}
	b.Reset()
	pairVerdicts(&b, []int{4}, ops, func(d string, n int) []Perf { return ref[:1] })
	if b.Len() != 0 {
		t.Errorf("one round has no pairs to set apart from the medians, printed:\n%s", b.String())
	}
}

// A MyRocks run whose block cache kept missing index blocks says so: its
// figures are the server's, whichever driver ran.
func TestPerfTableNamesIndexThrash(t *testing.T) {
	write := perfWriter(t)
	ops := map[string]OpPerf{"GET_NODE": {Count: 10, MeanMs: 0.2}}
	ref := write("ref.json", Perf{Label: "reference", Requesters: 16, RequestsPerS: 5204, Ops: ops,
		ServerCounters: map[string]float64{"status.ROCKSDB_BLOCK_CACHE_INDEX_MISS": 2.9e-5, "status.ROCKSDB_BLOCK_CACHE_INDEX_BYTES_INSERT": 40}})
	lb := write("lb.json", Perf{Label: "linkbench", Requesters: 16, RequestsPerS: 596, Ops: ops,
		ServerCounters: map[string]float64{"status.ROCKSDB_BLOCK_CACHE_INDEX_MISS": 1.974, "status.ROCKSDB_BLOCK_CACHE_INDEX_BYTES_INSERT": 3434776}})
	var b bytes.Buffer
	if err := perfTable(&b, "mariadb-rocksdb", []string{ref, lb}); err != nil {
		t.Fatal(err)
	}
	if want := "linkbench, 16 requesters, run 1: MyRocks's block cache missed 1.97 index blocks per request (3.3 MB read into it per request)"; !strings.Contains(b.String(), want) {
		t.Errorf("the table lacks %q:\n%s", want, b.String())
	}
	if strings.Count(b.String(), "index blocks per request") != 1 {
		t.Errorf("a run without index misses was named:\n%s", b.String())
	}
}

// TestPerfTableComparesStatements: the table says, per requester count,
// whether both drivers had the server run the same statements per
// request (within 2 %), from PostgreSQL's pg_stat_statements or MariaDB's
// Com_ counters, and names a cell where they did not as missing a goal.
func TestPerfTableComparesStatements(t *testing.T) {
	write := perfWriter(t)
	ops := map[string]OpPerf{"GET_NODE": {Count: 10, MeanMs: 0.2}}
	pg := func(sel, commit float64) map[string]float64 {
		// PostgreSQL's transaction counts stand for the ends, where
		// pg_stat_statements misses the COMMITs sent as prepared statements.
		return map[string]float64{"stmt.SELECT": sel, "stmt.INSERT": 0.15, "stmt.BEGIN": 0.1, "stmt.COMMIT": commit, "stmt.ROLLBACK": 0.01,
			"db.xact_commit": 1 + commit, "db.xact_rollback": 0.01}
	}
	paths := []string{
		write("r1.json", Perf{Label: "reference", Requesters: 1, RequestsPerS: 100, Ops: ops, ServerCounters: pg(1.0, 0.09)}),
		write("l1.json", Perf{Label: "linkbench", Requesters: 1, RequestsPerS: 130, Ops: ops, ServerCounters: pg(1.01, 0.09)}),
		write("r4.json", Perf{Label: "reference", Requesters: 4, RequestsPerS: 100, Ops: ops, ServerCounters: pg(1.0, 0.09)}),
		write("l4.json", Perf{Label: "linkbench", Requesters: 4, RequestsPerS: 130, Ops: ops, ServerCounters: pg(0.7, 0.02)}),
	}
	var b bytes.Buffer
	if err := perfTable(&b, "postgres", paths); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"         1 |    1.350    1.360  1.007 |   1.090 / 0.010   1.090 / 0.010 | the same",
		"         4 |    1.350    0.980  0.726 |   1.090 / 0.010   1.020 / 0.010 | NOT the same",
		"4 requesters: 0.980 statements per request against the reference's 1.350",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// perfWriter writes runs' Perf records into a new directory, each to the
// file it names, and returns the file's path.
func perfWriter(t *testing.T) func(name string, p Perf) string {
	dir := t.TempDir()
	return func(name string, p Perf) string {
		t.Helper()
		path := filepath.Join(dir, name)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
}
