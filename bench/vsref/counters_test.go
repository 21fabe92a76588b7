package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCountersAreReadAndDividedByRequests(t *testing.T) {
	// psql -A -F ' ' output and mariadb -N -B output, with a text value
	// and an empty one that are not counters.
	out := "db.datname linkdb0\ndb.xact_commit 1200\ndb.checksum_failures \nstatus.COM_COMMIT\t40\nwal.stats_reset 2026-11-26 16:17:21\n"
	a, err := parseCounters(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 2 || a["db.xact_commit"] != 1200 || a["status.COM_COMMIT"] != 40 {
		t.Fatalf("parsed %v, want the two numeric counters", a)
	}
	b := map[string]float64{"db.xact_commit": 1500, "status.COM_COMMIT": 40, "new": 7}
	d := counterDeltas(a, b, 100)
	if len(d) != 1 || d["db.xact_commit"] != 3 {
		t.Errorf("deltas %v, want only db.xact_commit = 3 per request (unchanged and one-sided counters left out)", d)
	}
	if _, err := parseCounters(strings.NewReader("ERROR: no such view\n")); err == nil {
		t.Error("an output without counters was accepted")
	}
	if _, err := readCounters("echo x 1; exit 3"); err == nil {
		t.Error("a failing counters command was accepted")
	}
}

func TestCounterDiffPutsTheLargestDifferenceFirst(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, r := range []Perf{
		{Label: "reference", Requesters: 16, ServerCounters: map[string]float64{"rows": 10, "reads": 2, "tiny": 0.001}},
		{Label: "linkbench", Requesters: 16, ServerCounters: map[string]float64{"rows": 11, "reads": 4, "tiny": 0.002, "waits": 0.5}},
	} {
		b, _ := json.Marshal(r)
		p := filepath.Join(dir, string(rune('a'+i))+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var w bytes.Buffer
	if err := counterDiff(&w, paths, 10, 0.01); err != nil {
		t.Fatal(err)
	}
	got := w.String()
	iw, ir, ix := strings.Index(got, "waits"), strings.Index(got, "reads"), strings.Index(got, "rows")
	if iw < 0 || ir < iw || ix < ir || strings.Contains(got, "tiny") {
		t.Errorf("want waits (one driver only), then reads (2x), then rows (1.1x), and no tiny:\n%s", got)
	}
	if !strings.Contains(got, "    2.00  reads") {
		t.Errorf("the reads' ratio is missing:\n%s", got)
	}
	// Runs without counters (an older perf.json) are passed over.
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte(`{"label": "reference", "requesters": 16}`), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Reset()
	if err := counterDiff(&w, []string{old}, 10, 0.01); err != nil || !strings.Contains(w.String(), "no server counters") {
		t.Errorf("runs without counters gave %v:\n%s", err, w.String())
	}
	w.Reset()
	if err := counterDiff(&w, append(paths, old), 10, 0.01); err != nil || !strings.Contains(w.String(), "medians of 1 and 1 runs") {
		t.Errorf("a run without counters was counted (%v):\n%s", err, w.String())
	}
}
