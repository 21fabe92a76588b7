package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// wallClockUses are the functions that may read the wall clock as a
// number (Unix, UnixMilli, UnixMicro, UnixNano), each with why: a
// timestamp that is stored or printed, or a seed. Elapsed times,
// timeouts and deadlines subtract readings of time.Now (monotonic).
var wallClockUses = map[string]string{
	"internal/config/build.go seed":                        "a time-based seed",
	"internal/report/merge.go alignIntervals":              "the shard processes' intervals are aligned by their wall-clock second",
	"internal/report/results.go writeHlog":                 "timestamps stored in the HdrHistogram log",
	"internal/report/csv.go Write":                         "the timestamp column of --csvstream",
	"internal/store/mysql/ops.go nowMs":                    "a count row's stored time",
	"internal/store/postgres/ops.go nowMs":                 "a count row's stored time",
	"internal/store/sqlite/ops.go nowMs":                   "a count row's stored time",
	"internal/store/pebble/pebble.go nowMs":                "a count row's stored time",
	"internal/store/memory/memory.go nowMs":                "a count row's stored time",
	"internal/store/mongo/lock.go Lock":                    "a lock document's unique id",
	"internal/store/mongo/links.go countUpdate":            "a count document's stored time",
	"internal/store/storetest/storetest.go readCount":      "checks a stored time",
	"internal/store/storetest/storetest.go testVisibility": "a count row's stored time",
	"internal/workload/requester.go do":                    "the stored time of a link or node written",
	"internal/run/load.go adopt":                           "the load's reference time, stored in every link",
	"internal/run/load.go Phase":                           "the stored time of a node loaded",
	"internal/run/request.go PrepareRequest":               "the request phase's reference time for generated links",
}

// TestWallClockOnlyForTimestamps: every elapsed time, timeout and
// deadline comes from the monotonic clock. A function that turns a time
// into a wall-clock number must be in wallClockUses with its reason;
// before, the op_timeout watchdog and the blocking sockets' deadlines
// compared UnixNano readings, so a forward step of the clock by an hour
// timed out every operation in flight and a backward step none.
// Reliability(server): the wall clock stepped (NTP, a resumed VM) during a run | nothing: op_timeout, the phase's end, the blocking sockets' deadlines and every elapsed time run on the monotonic clock; the wall clock is only read for stored or printed timestamps (a test lists each use)
func TestWallClockOnlyForTimestamps(t *testing.T) {
	root := filepath.Join("..", "..")
	found := map[string]bool{}
	var stray []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || len(call.Args) != 0 {
					return true
				}
				switch sel.Sel.Name {
				case "Unix", "UnixMilli", "UnixMicro", "UnixNano":
					key := rel + " " + fn.Name.Name
					if _, ok := wallClockUses[key]; ok {
						found[key] = true
					} else {
						stray = append(stray, key)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(stray)
	for _, s := range stray {
		t.Errorf("%s reads the wall clock as a number: use differences of time.Now readings (monotonic) for elapsed times and deadlines, or add it to wallClockUses with why it is a timestamp", s)
	}
	for k := range wallClockUses {
		if !found[k] {
			t.Errorf("wallClockUses lists %s, which no longer reads the wall clock: remove it", k)
		}
	}
}
