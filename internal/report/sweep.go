package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/linkbench/linkbench/internal/stats"
)

// SweepPoint is one arrival rate of a sweep.
type SweepPoint struct {
	OfferedRate  float64           `json:"offered_ops_per_sec"`
	AchievedRate float64           `json:"achieved_ops_per_sec"`
	Errors       int64             `json:"errors"`
	Bundle       string            `json:"bundle"`
	Ops          []stats.OpSummary `json:"ops"`
}

// Sweep is the record of a whole sweep (sweep.json).
type Sweep struct {
	SchemaVersion int          `json:"schema_version"`
	Store         string       `json:"store"`
	Saturation    float64      `json:"saturation_ops_per_sec,omitempty"`
	PointSec      float64      `json:"point_sec"`
	Points        []SweepPoint `json:"points"`
}

// WriteSweepHTML renders the latency-versus-throughput report of a sweep.
func WriteSweepHTML(w io.Writer, sw *Sweep) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>LinkBench sweep: " + esc(sw.Store) + "</title><style>" + pageStyle + "</style></head><body>")
	fmt.Fprintf(&b, "<h1>LinkBench sweep on %s</h1><p class=\"sub\">%d points of %.0f s each", esc(sw.Store), len(sw.Points), sw.PointSec)
	if sw.Saturation > 0 {
		fmt.Fprintf(&b, "; closed-loop saturation throughput %.0f requests/s", sw.Saturation)
	}
	b.WriteString("</p><h2>Points</h2><table><tr><th>offered ops/s</th><th>achieved ops/s</th><th>errors</th><th class=\"l\">bundle</th></tr>")
	for _, p := range sw.Points {
		fmt.Fprintf(&b, "<tr><td>%.0f</td><td>%.0f</td><td>%d</td><td class=\"l\">%s</td></tr>", p.OfferedRate, p.AchievedRate, p.Errors, esc(p.Bundle))
	}
	b.WriteString("</table><h2>Charts</h2>")
	achieved := Series{Name: "achieved"}
	offered := Series{Name: "offered (ideal)"}
	for _, p := range sw.Points {
		achieved.X, achieved.Y = append(achieved.X, p.OfferedRate), append(achieved.Y, p.AchievedRate)
		offered.X, offered.Y = append(offered.X, p.OfferedRate), append(offered.Y, p.OfferedRate)
	}
	b.WriteString(Chart{ID: "throughput", Title: "Achieved against offered throughput", XLabel: "offered (requests/s)", YLabel: "achieved (requests/s)", Series: []Series{achieved, offered}}.SVG())
	// One latency-vs-throughput chart per op: p50, p99 and p99.9.
	names := map[string]bool{}
	for _, p := range sw.Points {
		for _, o := range p.Ops {
			if o.Name != "RANGE_SIZE" {
				names[o.Name] = true
			}
		}
	}
	var ops []string
	for n := range names {
		ops = append(ops, n)
	}
	sort.Strings(ops)
	for _, op := range ops {
		series := []Series{{Name: "p50"}, {Name: "p99"}, {Name: "p99.9"}}
		for _, p := range sw.Points {
			for _, o := range p.Ops {
				if o.Name != op {
					continue
				}
				for i, v := range []float64{o.P50, o.P99, o.P999} {
					series[i].X = append(series[i].X, p.AchievedRate)
					series[i].Y = append(series[i].Y, v)
				}
			}
		}
		b.WriteString(Chart{ID: "latency-" + strings.ToLower(op), Title: op + ": latency against throughput", XLabel: "achieved throughput (requests/s)",
			YLabel: "latency (ms, log)", LogY: true, Series: series}.SVG())
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
