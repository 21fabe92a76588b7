package report

import (
	"fmt"
	"io"
	"math"
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
	// AllOps is the latency of all requests of the point together.
	AllOps *stats.OpSummary `json:"all_ops,omitempty"`
	// Warnings are the point's, in a few words each: its run's (the
	// store fell behind the arrival schedule, it was interrupted) and
	// SamplesWarning's.
	Warnings []string `json:"warnings,omitempty"`
}

// Sweep is the record of a whole sweep (sweep.json).
type Sweep struct {
	SchemaVersion int          `json:"schema_version"`
	Store         string       `json:"store"`
	Saturation    float64      `json:"saturation_ops_per_sec,omitempty"`
	PointSec      float64      `json:"point_sec"`
	Points        []SweepPoint `json:"points"`
}

// minTailSamples is the fewest samples above a percentile for it to be
// trusted: with k samples beyond it, where the tail starts is known to
// about 1/sqrt(k), so fewer than 10 leave it uncertain by a third or more.
const minTailSamples = 10

// reliable reports whether the q-quantile of n samples rests on at least
// minTailSamples samples above it.
func reliable(n int64, q float64) bool { return float64(n)*(1-q) >= minTailSamples-1e-9 }

// SamplesWarning says in one line which percentiles of a point rest on
// too few samples to be trusted ("" when none): per percentile, the ops
// (named when one or two) and all requests together.
func SamplesWarning(p SweepPoint) string {
	var parts []string
	for _, ps := range percentileStyles {
		var bad []string
		n := 0
		for _, o := range p.Ops {
			if o.Name == "RANGE_SIZE" || o.Count == 0 {
				continue
			}
			n++
			if !reliable(o.Count, ps.q) {
				bad = append(bad, o.Name)
			}
		}
		all := p.AllOps != nil && p.AllOps.Count > 0 && !reliable(p.AllOps.Count, ps.q)
		var of string
		switch {
		case len(bad) == 0 && !all:
			continue
		case len(bad) == 0:
			of = "all requests"
		case len(bad) == n && n > 2:
			of = "every op"
		case len(bad) <= 2:
			of = strings.Join(bad, " and ")
		default:
			of = fmt.Sprintf("%d of %d ops", len(bad), n)
		}
		if all && len(bad) > 0 {
			of += " and all requests"
		}
		parts = append(parts, ps.name+" of "+of)
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("too few samples for %s (a percentile needs %d samples beyond it; lengthen --point-time)", strings.Join(parts, ", "), minTailSamples)
}

// sweepOps are the ops of a sweep's points in op order (RANGE_SIZE left out).
func sweepOps(sw *Sweep) []string {
	seen := map[string]bool{}
	var names []string
	for _, p := range sw.Points {
		for _, o := range p.Ops {
			if o.Name != "RANGE_SIZE" && !seen[o.Name] {
				seen[o.Name] = true
				names = append(names, o.Name)
			}
		}
	}
	return requestOpNames(&Results{Ops: opsNamed(names)})
}

// WriteSweepHTML renders the latency-versus-throughput report of a sweep.
func WriteSweepHTML(w io.Writer, sw *Sweep) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>LinkBench sweep: " + esc(sw.Store) + "</title><style>" + pageStyle + "</style></head><body>")
	fmt.Fprintf(&b, "<h1>LinkBench sweep on %s</h1><p class=\"sub\">%d points of %.0f s each", esc(sw.Store), len(sw.Points), sw.PointSec)
	if sw.Saturation > 0 {
		fmt.Fprintf(&b, "; closed-loop saturation throughput %.0f requests/s", sw.Saturation)
	}
	b.WriteString("</p><h2>Points</h2><table><tr><th>point</th><th>offered ops/s</th><th>achieved ops/s</th><th>errors</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th class=\"l\">bundle</th></tr>")
	for i, p := range sw.Points {
		p50, p99, p999 := "-", "-", "-"
		if a := p.AllOps; a != nil {
			p50, p99, p999 = FormatMs(a.P50), FormatMs(a.P99), FormatMs(a.P999)
		}
		mark := ""
		if len(p.Warnings) > 0 {
			mark = " ⚠"
		}
		fmt.Fprintf(&b, "<tr><td>%d%s</td><td>%.0f</td><td>%.0f</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td class=\"l\">%s</td></tr>", i+1, mark, p.OfferedRate, p.AchievedRate, p.Errors, p50, p99, p999, esc(p.Bundle))
	}
	b.WriteString("</table>")
	var warned bool
	for i, p := range sw.Points {
		if len(p.Warnings) == 0 {
			continue
		}
		if !warned {
			b.WriteString("<h2>Warnings</h2><p class=\"sub\">Percentiles on too few samples are drawn as hollow markers below.</p>")
			warned = true
		}
		fmt.Fprintf(&b, "<p class=\"warn\">⚠ point %d (%.0f requests/s offered): %s</p>", i+1, p.OfferedRate, esc(strings.Join(p.Warnings, "; ")))
	}
	b.WriteString("<h2>Charts</h2>")
	for _, c := range SweepCharts(sw) {
		b.WriteString(c)
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// SweepCharts are the sweep's charts: achieved against offered rate, the
// latency of all requests against the achieved rate, and per op.
func SweepCharts(sw *Sweep) []string {
	achieved := Series{Name: "achieved", Color: allOpsColor, Markers: true}
	offered := Series{Name: "offered (ideal)", Color: "#999999", Dash: "4 4"}
	var all [3]Series
	for i, ps := range percentileStyles {
		all[i] = Series{Name: "all ops " + ps.name, Color: allOpsColor, Dash: ps.dash, Width: ps.width, Markers: true, Hollow: map[int]bool{}}
	}
	for _, p := range sw.Points {
		achieved.X, achieved.Y = append(achieved.X, p.OfferedRate), append(achieved.Y, p.AchievedRate)
		offered.X, offered.Y = append(offered.X, p.OfferedRate), append(offered.Y, p.OfferedRate)
		for i, ps := range percentileStyles {
			v := math.NaN()
			if p.AllOps != nil {
				v = ps.pick(p.AllOps.Percentiles)
				if !reliable(p.AllOps.Count, ps.q) {
					all[i].Hollow[len(all[i].X)] = true
				}
			}
			all[i].X, all[i].Y = append(all[i].X, p.AchievedRate), append(all[i].Y, v)
		}
	}
	out := []string{
		Chart{ID: "throughput", Title: "Achieved against offered throughput", XLabel: "offered (requests/s)", YLabel: "achieved (requests/s)",
			Series: []Series{offered, achieved}, XFrom0: true}.SVG(),
		Chart{ID: "latency", Title: "Latency of all requests against throughput", XLabel: "achieved throughput (requests/s)",
			YLabel: "latency (ms, log)", LogY: true, Series: all[:], XFrom0: true}.SVG(),
	}
	var panels []Chart
	for _, op := range sweepOps(sw) {
		var series []Series
		for _, ps := range percentileStyles {
			s := Series{Op: op, Dash: ps.dash, Width: ps.width, Markers: true, Hollow: map[int]bool{}}
			for _, p := range sw.Points {
				for _, o := range p.Ops {
					if o.Name != op || o.Count == 0 {
						continue
					}
					if !reliable(o.Count, ps.q) {
						s.Hollow[len(s.X)] = true
					}
					s.X, s.Y = append(s.X, p.AchievedRate), append(s.Y, ps.pick(o.Percentiles))
				}
			}
			series = append(series, s)
		}
		panels = append(panels, Chart{ID: "latency-" + strings.ToLower(op), Title: op + " (ms, log; x: requests/s)", TitleColor: OpColor(op),
			LogY: true, Series: series, XFrom0: true})
	}
	key := percentileKey()
	key = append(key, Series{Name: "too few samples", Color: "#555555", NoLine: true})
	out = append(out, Panels("latency-per-op", "Latency per op against throughput (hollow: too few samples for the percentile)", key, panels))
	return out
}

// opsNamed makes summaries carrying only names (to order names by op).
func opsNamed(names []string) []stats.OpSummary {
	out := make([]stats.OpSummary, len(names))
	for i, n := range names {
		out[i].Name = n
	}
	return out
}
