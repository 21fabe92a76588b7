package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated table of docs/reliability.md")

// reliabilityGroups order the table: each marker names its group.
var reliabilityGroups = []string{"server", "load", "input", "secret", "writer", "output", "store"}

// reliabilityRow is one fault or hostile input and the tests that show
// what the user sees.
type reliabilityRow struct {
	group, fault, sees string
	tests              []string
}

// reliabilityRows reads the markers of the repository's tests: a line
//
//	// Reliability(group): fault or input | what the user sees
//
// in the doc comment of a test (or of a storetest helper every store's
// suite runs). Rows with the same fault and outcome are merged.
func reliabilityRows(t *testing.T, root string) []reliabilityRow {
	t.Helper()
	byKey := map[string]*reliabilityRow{}
	var rows []*reliabilityRow
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || (!strings.HasSuffix(path, "_test.go") && !strings.Contains(path, "storetest")) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		pkg, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Doc == nil {
				continue
			}
			for _, c := range fn.Doc.List {
				text, ok := strings.CutPrefix(c.Text, "// Reliability(")
				if !ok {
					continue
				}
				group, rest, ok1 := strings.Cut(text, "): ")
				fault, sees, ok2 := strings.Cut(rest, " | ")
				if !ok1 || !ok2 {
					t.Errorf("%s: %s: malformed marker %q", path, fn.Name.Name, c.Text)
					continue
				}
				key := fault + "\x00" + sees
				r := byKey[key]
				if r == nil {
					r = &reliabilityRow{group: group, fault: strings.TrimSpace(fault), sees: strings.TrimSpace(sees)}
					byKey[key] = r
					rows = append(rows, r)
				}
				r.tests = append(r.tests, fmt.Sprintf("`%s` %s", filepath.ToSlash(pkg), fn.Name.Name))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rank := map[string]int{}
	for i, g := range reliabilityGroups {
		rank[g] = i + 1
	}
	out := make([]reliabilityRow, 0, len(rows))
	for _, r := range rows {
		if rank[r.group] == 0 {
			t.Errorf("unknown group %q (of %s)", r.group, r.tests)
		}
		out = append(out, *r)
	}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].group] < rank[out[j].group] })
	return out
}

const (
	tableStart = "<!-- The table is generated from the tests' Reliability(...) markers: go test ./cmd/linkbench -run TestReliabilityDoc -update-docs -->\n"
	tableEnd   = "<!-- end of the generated table -->\n"
)

// TestReliabilityDoc keeps the table of docs/reliability.md equal to the
// markers of the tests that show each behaviour.
func TestReliabilityDoc(t *testing.T) {
	var b strings.Builder
	b.WriteString(tableStart)
	b.WriteString("| fault or input | what the user sees | test |\n|---|---|---|\n")
	for _, r := range reliabilityRows(t, filepath.Join("..", "..")) {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.fault, r.sees, strings.Join(r.tests, ", "))
	}
	b.WriteString(tableEnd)
	path := filepath.Join("..", "..", "docs", "reliability.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, tableStart), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated table's markers", path)
	}
	want := s[:i] + b.String() + s[j+len(tableEnd):]
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != s {
		t.Fatalf("docs/reliability.md is out of date: run go test ./cmd/linkbench -run TestReliabilityDoc -update-docs")
	}
}
