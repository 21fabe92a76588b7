package main

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/memory"
)

// schemaCalls records the schema calls of the "schema-recorder" store, a
// memory store with a schema, for TestTruncateEmptiesBeforeCreatingSchema.
var schemaCalls struct {
	sync.Mutex
	list []string
}

type schemaRecorder struct{ *memory.Store }

func record(call string) {
	schemaCalls.Lock()
	schemaCalls.list = append(schemaCalls.list, call)
	schemaCalls.Unlock()
}

func (s schemaRecorder) CheckSchema(context.Context) error { record("check"); return nil }
func (s schemaRecorder) Init(context.Context, bool) error  { record("init"); return nil }
func (s schemaRecorder) Reset(ctx context.Context) error {
	record("reset")
	return s.Store.Reset(ctx)
}

func init() {
	store.Register(store.Driver{Name: "schema-recorder", Embedded: true, PerProcess: true,
		Open: func(context.Context, store.Options) (store.Store, error) { return schemaRecorder{memory.New()}, nil }})
}

// TestTruncateEmptiesBeforeCreatingSchema: over an existing schema, load
// --truncate empties the tables before Init can create anything (an index
// built by Init over the partial tables of an interrupted load cost 32 s of
// silence); a plain load creates the schema first.
// Reliability(load): `load --truncate` (or `--resume`) after an interrupted load, whose deferred index is missing | the tables are emptied (or the load resumed) without first rebuilding the index over the partial tables (that cost 32 s of silence on SQLite); the index is built once, at the end, as a named stage
func TestTruncateEmptiesBeforeCreatingSchema(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-D", "store=schema-recorder", "-D", "maxid1=101", "-D", "nlinks_func=const", "-D", "nlinks_default=1", "--no-results"}
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--truncate"}, "check reset init check"},
		{nil, "init check"},
	} {
		schemaCalls.Lock()
		schemaCalls.list = nil
		schemaCalls.Unlock()
		if _, errOut, code := runCLI(t, dir, append(append([]string{"load"}, c.flags...), args...)...); code != 0 {
			t.Fatalf("load %v: %s", c.flags, errOut)
		}
		schemaCalls.Lock()
		got := strings.Join(schemaCalls.list, " ")
		schemaCalls.Unlock()
		if got != c.want {
			t.Errorf("load %v: schema calls %q, want %q", c.flags, got, c.want)
		}
	}
}

// TestLoadStagesNamedAndRecorded: a SQLite load names every stage (the
// inserts and each finishing step) in the log, prints them with their rows
// and rates, and records them in summary.json with the split of insert
// and finishing time.
func TestLoadStagesNamedAndRecorded(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := runCLI(t, dir, "load", "-D", "maxid1=1001", "-D", "nlinks_func=const", "-D", "nlinks_default=3", "-D", "loaders=2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"stage nodes: 1,000 rows in", "stage links: 2,000 rows in", "stage build index id1_type: started (2,000 rows)",
		"stage build index id1_type: 2,000 rows in", "stage checkpoint WAL: done in", "stage analyze: "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("log lacks %q:\n%s", want, errOut)
		}
	}
	for _, want := range []string{"stage ", "build index id1_type  finish", "links                 insert", "inserting rows ", "finishing work ", "LOAD PHASE COMPLETED"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "count = ") {
		t.Errorf("stdout repeats the results in the reference's per-op lines:\n%s", out)
	}
	b, err := os.ReadFile(latestBundle(t, dir, "load"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Environment struct {
			CPUs        int      `json:"cpus"`
			CPUModel    string   `json:"cpu_model"`
			Kernel      string   `json:"kernel"`
			MemoryBytes int64    `json:"memory_bytes"`
			GoVersion   string   `json:"go_version"`
			CommandLine []string `json:"command_line"`
			Build       struct {
				Version string `json:"version"`
			} `json:"build"`
			DataFS struct {
				Path, Type, Device string
			} `json:"data_fs"`
		} `json:"environment"`
		Totals struct {
			InsertSec float64 `json:"insert_sec"`
			FinishSec float64 `json:"finish_sec"`
		} `json:"totals"`
		Stages []struct {
			Name       string  `json:"name"`
			Kind       string  `json:"kind"`
			Start      float64 `json:"start_sec"`
			End        float64 `json:"end_sec"`
			Rows       int64   `json:"rows"`
			RowsPerSec float64 `json:"rows_per_sec"`
		} `json:"load_stages"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	env := res.Environment
	if env.CPUs <= 0 || env.GoVersion == "" || env.Build.Version == "" || strings.Join(env.CommandLine, " ") != "linkbench load -D maxid1=1001 -D nlinks_func=const -D nlinks_default=3 -D loaders=2" ||
		!strings.HasSuffix(env.DataFS.Path, "linkbench.db") {
		t.Errorf("environment %+v", env)
	}
	if runtime.GOOS == "linux" && (env.Kernel == "" || env.MemoryBytes <= 0 || env.DataFS.Type == "" || env.DataFS.Device == "") {
		t.Errorf("environment lacks Linux facts: %+v", env)
	}
	if res.Totals.InsertSec <= 0 || res.Totals.FinishSec <= 0 {
		t.Errorf("totals: insert %v s, finish %v s", res.Totals.InsertSec, res.Totals.FinishSec)
	}
	kinds := map[string]string{}
	for _, s := range res.Stages {
		kinds[s.Name] = s.Kind
		if s.End < s.Start || (s.Kind == "finish" && s.Start < res.Totals.InsertSec-0.01) {
			t.Errorf("stage %+v: bad times (inserts took %.3f s)", s, res.Totals.InsertSec)
		}
		if s.Name == "links" && (s.Rows != 2000 || s.RowsPerSec <= 0) {
			t.Errorf("links stage %+v", s)
		}
	}
	for name, kind := range map[string]string{"nodes": "insert", "links": "insert", "counts": "insert", "build index id1_type": "finish", "checkpoint WAL": "finish", "analyze": "finish"} {
		if kinds[name] != kind {
			t.Errorf("load_stages: %q has kind %q, want %q (all: %v)", name, kinds[name], kind, kinds)
		}
	}
}
