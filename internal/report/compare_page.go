package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// fmtValue prints a compared figure with its unit's precision.
func fmtValue(v float64, unit string) string {
	switch {
	case unit == "ms":
		return FormatMs(v)
	case strings.HasSuffix(unit, "/s"):
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	}
	return FormatMs(v)
}

func fmtChange(c float64) string { return fmt.Sprintf("%+.1f%%", 100*c) }

func fmtNoise(d Delta) string {
	if !d.Noise.Known {
		return "?"
	}
	return fmt.Sprintf("±%.1f%%", 100*d.Noise.HalfWidth())
}

// WriteComparisonText writes the terminal form of a comparison: the runs,
// the warnings and differences of settings, then for every run after the
// first a table of deltas against the first with their noise and verdict.
func WriteComparisonText(w io.Writer, runs []*Results, names []string) error {
	var b strings.Builder
	b.WriteString("Runs:\n")
	for i, r := range runs {
		fmt.Fprintf(&b, "  %s  %s  (%s, %s phase, %.0f s)\n", RunLabel(i), names[i], r.Store, r.Phase, r.ElapsedSec)
	}
	diffs := DiffSettings(runs)
	for _, d := range diffs {
		if d.Warning != "" {
			fmt.Fprintf(&b, "WARNING: %s differs (%s): %s; the figures are not comparable\n", d.Key, joinValues(d.Values), d.Warning)
		}
	}
	for _, d := range diffs {
		if d.Warning == "" {
			fmt.Fprintf(&b, "differs: %s (%s)\n", d.Key, joinValues(d.Values))
		}
	}
	for _, c := range Compare(runs) {
		fmt.Fprintf(&b, "\n%s against %s (noise: 95%% block-bootstrap interval of the change over each run's 1 s intervals)\n", c.Run, c.Base)
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "figure\tunit\t%s\t%s\tchange\tnoise\tverdict\n", c.Base, c.Run)
		significant := 0
		for _, d := range c.Deltas {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Metric, d.Unit, fmtValue(d.Base, d.Unit), fmtValue(d.Value, d.Unit), fmtChange(d.Change), fmtNoise(d), d.Verdict())
			if d.Significant() {
				significant++
			}
		}
		tw.Flush()
		fmt.Fprintf(&b, "%d of %d figures changed beyond their noise\n", significant, len(c.Deltas))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func joinValues(vals []string) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = RunLabel(i) + ": " + v
	}
	return strings.Join(parts, ", ")
}

// compare renders the comparison page: the same tables as the terminal,
// then charts where runs are told apart by short labels (A, B, ...) and,
// on per-op panels, by line style, the colour staying the op's.
func compare(b *strings.Builder, runs []*Results, names []string) {
	b.WriteString("<h1>LinkBench comparison</h1><p class=\"sub\">Every run against the first (A). A change is significant when it exceeds the noise estimated from the runs' own 1-second intervals (docs/results.md).</p><h2>Runs</h2>")
	b.WriteString("<table><tr><th class=\"l\">run</th><th class=\"l\">bundle</th><th class=\"l\">store</th><th class=\"l\">phase</th><th class=\"l\">started</th><th>measured s</th><th>throughput</th></tr>")
	for i, r := range runs {
		tput := r.Totals.OpsPerSec
		if r.Phase == "load" {
			tput = r.Totals.LinksPerSec
		}
		fmt.Fprintf(b, "<tr><td class=\"l\"><b>%s</b></td><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%.0f</td><td>%.0f</td></tr>",
			RunLabel(i), esc(names[i]), esc(r.Store), esc(r.Phase), esc(r.StartedAt.Format("2006-01-02 15:04:05")), r.ElapsedSec, tput)
	}
	b.WriteString("</table>")
	diffs := DiffSettings(runs)
	if len(diffs) > 0 {
		b.WriteString("<h2>Settings that differ</h2>")
		for _, d := range diffs {
			if d.Warning != "" {
				fmt.Fprintf(b, "<p class=\"warn\">⚠ %s differs: %s; the figures are not comparable.</p>", esc(d.Key), esc(d.Warning))
			}
		}
		b.WriteString("<table><tr><th class=\"l\">setting</th>")
		for i := range runs {
			fmt.Fprintf(b, "<th class=\"l\">%s</th>", RunLabel(i))
		}
		b.WriteString("</tr>")
		for _, d := range diffs {
			cls := "l"
			if d.Warning != "" {
				cls = "l warn"
			}
			fmt.Fprintf(b, "<tr><td class=\"%s\">%s</td>", cls, esc(d.Key))
			for _, v := range d.Values {
				fmt.Fprintf(b, "<td class=\"l\">%s</td>", esc(v))
			}
			b.WriteString("</tr>")
		}
		b.WriteString("</table>")
	}
	for _, c := range Compare(runs) {
		fmt.Fprintf(b, "<h2>%s against %s</h2><table><tr><th class=\"l\">figure</th><th class=\"l\">unit</th><th>%s</th><th>%s</th><th>change</th><th>noise (95%%)</th><th class=\"l\">verdict</th></tr>", c.Run, c.Base, c.Base, c.Run)
		for _, d := range c.Deltas {
			cls := "noise"
			switch v := d.Verdict(); {
			case strings.HasSuffix(v, "better"):
				cls = "good"
			case strings.HasSuffix(v, "worse"):
				cls = "bad"
			}
			swatch := ""
			if d.Op != "" {
				swatch = fmt.Sprintf("<span style=\"color:%s\">■</span> ", OpColor(d.Op))
			}
			fmt.Fprintf(b, "<tr><td class=\"l\">%s%s</td><td class=\"l\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"l %s\">%s</td></tr>",
				swatch, esc(d.Metric), esc(d.Unit), fmtValue(d.Base, d.Unit), fmtValue(d.Value, d.Unit), fmtChange(d.Change), fmtNoise(d), cls, esc(d.Verdict()))
		}
		b.WriteString("</table>")
	}
	b.WriteString("<h2>Charts</h2>")
	var thr, p99 []Series
	for i, r := range runs {
		label := RunLabel(i)
		ivs := chartIntervals(r)
		xs := seconds(r, ivs)
		s := Series{Name: label, Run: label, X: xs, Color: otherColors[i%len(otherColors)]}
		p := Series{Name: label, Run: label, X: xs, Color: otherColors[i%len(otherColors)]}
		for _, iv := range ivs {
			s.Y = append(s.Y, iv.OpsPerSec)
			p.Y = append(p.Y, MixtureQuantiles(iv.Ops, []float64{0.99})[0])
		}
		if links, _, _ := loadRates(r); r.Phase == "load" && len(links.X) > 0 {
			s.X, s.Y = links.X, links.Y
		}
		thr, p99 = append(thr, s), append(p99, p)
	}
	unit := "requests/s"
	if runs[0].Phase == "load" {
		unit = "links/s"
	}
	b.WriteString(Chart{ID: "throughput", Title: "Throughput over time", XLabel: "time since measurement began (s)", YLabel: unit, Series: thr, XFrom0: true}.SVG())
	b.WriteString(Chart{ID: "latency", Title: "p99 latency over time, all ops (estimated per interval)", XLabel: "time since measurement began (s)", YLabel: "p99 (ms, log)", LogY: true, Series: p99, XFrom0: true}.SVG())
	var key []Series
	for i := range runs {
		key = append(key, Series{Name: RunLabel(i), Color: "#555555", Dash: runDashes[i%len(runDashes)]})
	}
	var panels []Chart
	for _, op := range requestOpNames(runs[0]) {
		var ss []Series
		for i, r := range runs {
			curve, ok := r.Curves[op]
			if !ok {
				continue
			}
			s := Series{Op: op, Run: RunLabel(i), Dash: runDashes[i%len(runDashes)]}
			for _, pt := range curve {
				s.X, s.Y = append(s.X, pt[0]), append(s.Y, pt[1])
			}
			ss = append(ss, s)
		}
		panels = append(panels, Chart{ID: "distribution-" + op, Title: op + " (ms by percentile)", TitleColor: OpColor(op), LogX: true, LogY: true, Series: ss})
	}
	b.WriteString(Panels("distribution", "Latency distribution per op and run", key, panels))
	var labels, colors []string
	var counts []float64
	for i, r := range runs {
		labels = append(labels, RunLabel(i))
		colors = append(colors, otherColors[i%len(otherColors)])
		counts = append(counts, r.Totals.OpsPerSec+r.Totals.LinksPerSec)
	}
	b.WriteString(BarChart("runs", "Throughput per run", unit, labels, counts, colors))
}
