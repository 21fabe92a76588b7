package workload

import (
	"reflect"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/config"
)

// Reliability(load): `run`, `sweep` or `check` on a store with no graph (`linkbench init` then `run`), on a half-loaded graph (interrupted load, a `--shard` process not finished), or `run`/`sweep` with graph parameters (startid1, maxid1, link_type_count, randomid2max, load_random_seed, nlinks_func, data file) that differ from the loaded graph's (SQLite, Pebble, PostgreSQL, MariaDB, FerretDB) | refused before any request: one line naming what was found and the command that fixes it (`linkbench load`, `load --resume`, `load --truncate`, `-l -r` for the memory store), a line per difference when there are several, exit 1. Parameters the user did not set are taken from the graph (and logged). `--ignore-graph` goes ahead with a warning, recorded as `graph_check` in summary.json
func TestCheckGraph(t *testing.T) {
	// The preset values (maxid1 3001, seed 42) are not the user's: a graph
	// loaded with others is adopted. The -D values are the user's.
	load := func(overrides ...string) *config.Config {
		cfg, _, err := config.Load(config.Source{
			Defaults:  map[string]string{"store": "memory", "workload_file": "config/FBWorkload.properties", "maxid1": "3001", "load_random_seed": "42"},
			Overrides: overrides,
		})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	meta := func(extra ...string) map[string]string {
		m := GraphMeta(load(), "", "test", true)
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	loaded := GraphState{EmptyKnown: true}
	for _, c := range []struct {
		name      string
		overrides []string
		state     GraphState
		adopted   []string
		problems  []string // each problem's String() contains this, in order
	}{
		{"same graph", nil, with(loaded, meta()), nil, nil},
		{"empty store", nil, GraphState{EmptyKnown: true, Empty: true, Meta: meta()}, nil,
			[]string{"the store holds no graph (no nodes, links or counts); load it first with `linkbench load`"}},
		{"per-process store", nil, GraphState{EmptyKnown: true, Empty: true, PerProcess: true}, nil,
			[]string{"only while the process runs; load and run in one process with `linkbench -l -r`"}},
		{"graph from another tool", nil, loaded, nil, nil},
		{"unset values adopted", nil, with(loaded, meta(MetaMaxID1, "20001", MetaSeed, "7")), []string{"maxid1=20001", "load_random_seed=7"}, nil},
		{"user values differ", []string{"maxid1=3001", "load_random_seed=42", "link_type_count=2"}, with(loaded, meta(MetaMaxID1, "20001", MetaSeed, "7", MetaLinkTypeCount, "3")), nil,
			[]string{"maxid1: the store's graph has 20001, the configuration says 3001 (-D); remove maxid1",
				"link_type_count: the store's graph has 3, the configuration says 2 (-D)",
				"load_random_seed: the store's graph has 7, the configuration says 42 (-D)"}},
		{"other degree function", nil, with(loaded, meta(MetaNLinksFunc, "const")), nil,
			[]string{"nlinks_func: the store's graph has const, the configuration says real; load the configured graph with `linkbench load --truncate`"}},
		{"old degree placement", nil, with(loaded, meta(MetaPlacement, "")), nil,
			[]string{"placement_version: the store's graph has 1, the configuration says 2; it was loaded by an older linkbench that placed degrees on other ids than the reference's; load the configured graph with `linkbench load --truncate`"}},
		{"other degree placement", nil, with(loaded, meta(MetaPlacement, "3")), nil,
			[]string{"placement_version: the store's graph has 3, the configuration says 2"}},
		{"interrupted load", nil, with(loaded, meta(MetaComplete, "false", JournalPrefix(0, 1)+JournalState, JournalOpen)), nil,
			[]string{"the load of this graph did not complete; finish it with `linkbench load --resume`"}},
		{"shards missing", nil, with(loaded, meta(JournalPrefix(0, 3)+JournalState, JournalDone, JournalPrefix(2, 3)+JournalState, JournalOpen)), nil,
			[]string{"did not complete (shard 1/3 never loaded, shard 2/3 interrupted or still loading)"}},
		{"every shard done", nil, with(loaded, meta(JournalPrefix(0, 2)+JournalState, JournalDone, JournalPrefix(1, 2)+JournalState, JournalDone)), nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := load(c.overrides...)
			v := CheckGraph(cfg, c.state, "")
			if !reflect.DeepEqual(v.Adopted, c.adopted) {
				t.Errorf("adopted %q, want %q", v.Adopted, c.adopted)
			}
			if len(v.Problems) != len(c.problems) {
				t.Fatalf("problems %q, want %d", v.Problems, len(c.problems))
			}
			for i, p := range v.Problems {
				if !strings.Contains(p.String(), c.problems[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, p, c.problems[i])
				}
			}
			if c.name == "unset values adopted" && (v.Config.MaxID1 != 20001 || v.Config.LoadRandomSeed != 7) {
				t.Errorf("config not adopted: maxid1 %d seed %d", v.Config.MaxID1, v.Config.LoadRandomSeed)
			}
			if c.name == "unset values adopted" && (cfg.MaxID1 == 20001 || cfg.LoadRandomSeed == 7) {
				t.Errorf("the given config was written: maxid1 %d seed %d", cfg.MaxID1, cfg.LoadRandomSeed)
			}
		})
	}
}

func with(s GraphState, meta map[string]string) GraphState {
	s.Meta = meta
	return s
}

func TestGraphErrorIsOneLineForOneProblem(t *testing.T) {
	one := GraphError("run", []GraphProblem{{Key: ProblemNoGraph, Found: "the store holds no graph", Fix: "load it first"}})
	if got := one.Error(); got != "refusing to run: the store holds no graph; load it first (or add --ignore-graph to run anyway)" {
		t.Errorf("one problem: %q", got)
	}
	two := GraphError("sweep", []GraphProblem{{Key: "maxid1", Found: "2", Want: "says 3", Fix: "fix a"}, {Key: "startid1", Found: "1", Want: "says 5", Fix: "fix b"}})
	if lines := strings.Split(two.Error(), "\n"); len(lines) != 3 || !strings.Contains(lines[0], "add --ignore-graph to sweep anyway") {
		t.Errorf("two problems: %q", two)
	}
}
