package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file; if the change is intended run go test ./internal/report -update", name)
	}
}

func TestGoldenResultsJSON(t *testing.T) {
	dir, err := WriteBundle(t.TempDir(), sampleResults("memory", 1), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.json.golden", b)
}

func TestGoldenHTML(t *testing.T) {
	var single, cmp bytes.Buffer
	if err := WriteHTML(&single, []*Results{sampleResults("sqlite", 1)}, []string{"run"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.html.golden", single.Bytes())
	if err := WriteHTML(&cmp, []*Results{sampleResults("sqlite", 1), sampleResults("pebble", 2)}, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "comparison.html.golden", cmp.Bytes())
}

func TestGoldenCSV(t *testing.T) {
	r := sampleResults("memory", 1)
	var b bytes.Buffer
	if err := WriteCSVStats(&b, r.Ops, 4); err != nil {
		t.Fatal(err)
	}
	sw, err := NewStreamWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	for _, iv := range r.Intervals {
		if err := sw.Write(iv); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "csv.golden", b.Bytes())
}
