// Package grafana holds a Grafana dashboard of linkbench's live metrics;
// this test checks it against the metrics the exporter serves.
package grafana

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/stats"
)

type panel struct {
	ID         int             `json:"id"`
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Datasource json.RawMessage `json:"datasource"`
	Targets    []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

var metricRef = regexp.MustCompile(`linkbench_[a-z0-9_]+`)

// TestDashboardQueriesNameExportedMetrics loads the dashboard and checks
// that every query names only metrics the exporter serves, and that every
// metric is shown somewhere.
func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("linkbench-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string  `json:"title"`
		UID    string  `json:"uid"`
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the dashboard is not valid JSON: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard without title, uid or panels")
	}
	exported := map[string]bool{}
	for _, n := range stats.MetricNames() {
		exported[n] = true
	}
	used := map[string]bool{}
	ids := map[int]bool{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel id %d used twice", p.ID)
			}
			ids[p.ID] = true
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 || len(p.Datasource) == 0 {
				t.Errorf("panel %q has no query or no data source", p.Title)
			}
			for _, q := range p.Targets {
				refs := metricRef.FindAllString(q.Expr, -1)
				if len(refs) == 0 {
					t.Errorf("panel %q query %s names no linkbench metric: %s", p.Title, q.RefID, q.Expr)
				}
				if strings.Count(q.Expr, "(") != strings.Count(q.Expr, ")") || strings.Count(q.Expr, "{") != strings.Count(q.Expr, "}") {
					t.Errorf("panel %q query %s is unbalanced: %s", p.Title, q.RefID, q.Expr)
				}
				for _, r := range refs {
					if !exported[r] {
						t.Errorf("panel %q query %s names %s, which linkbench does not export", p.Title, q.RefID, r)
					}
					used[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(r, "_bucket"), "_sum"), "_count")] = true
				}
			}
		}
	}
	walk(d.Panels)
	var unshown []string
	for n := range exported {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
		if !used[base] {
			unshown = append(unshown, n)
		}
	}
	sort.Strings(unshown)
	if len(unshown) > 0 {
		t.Errorf("metrics no panel shows: %v", unshown)
	}
}
