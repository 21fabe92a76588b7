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

// SweepWarnings name, per op, the points too short for the percentiles
// they report.
func SweepWarnings(sw *Sweep) []string {
	var out []string
	for _, op := range sweepOps(sw) {
		var at []string
		lo, hi := int64(math.MaxInt64), int64(0)
		for _, p := range sw.Points {
			o, ok := opOf(p.Ops, op)
			if !ok {
				continue
			}
			var bad []string
			for _, ps := range percentileStyles {
				if !reliable(o.Count, ps.q) {
					bad = append(bad, ps.name)
				}
			}
			if len(bad) > 0 {
				at = append(at, fmt.Sprintf("%.0f/s (%s)", p.OfferedRate, strings.Join(bad, ", ")))
				lo, hi = min(lo, o.Count), max(hi, o.Count)
			}
		}
		if len(at) > 0 {
			n := fmt.Sprintf("%d-%d samples", lo, hi)
			if lo == hi {
				n = fmt.Sprintf("%d samples", lo)
			}
			out = append(out, fmt.Sprintf("%s: %s, too few at %s; a percentile needs %d samples beyond it (p99: %d samples); lengthen --point-time",
				op, n, strings.Join(at, ", "), minTailSamples, minTailSamples*100))
		}
	}
	return out
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
	b.WriteString("</p><h2>Points</h2><table><tr><th>offered ops/s</th><th>achieved ops/s</th><th>errors</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th class=\"l\">bundle</th></tr>")
	for _, p := range sw.Points {
		p50, p99, p999 := "-", "-", "-"
		if a := p.AllOps; a != nil {
			p50, p99, p999 = FormatMs(a.P50), FormatMs(a.P99), FormatMs(a.P999)
		}
		fmt.Fprintf(&b, "<tr><td>%.0f</td><td>%.0f</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td class=\"l\">%s</td></tr>", p.OfferedRate, p.AchievedRate, p.Errors, p50, p99, p999, esc(p.Bundle))
	}
	b.WriteString("</table>")
	if warns := SweepWarnings(sw); len(warns) > 0 {
		b.WriteString("<h2>Points too short for their percentiles</h2><p class=\"sub\">Drawn as hollow markers below.</p>")
		for _, w := range warns {
			fmt.Fprintf(&b, "<p class=\"warn\">⚠ %s</p>", esc(w))
		}
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
