package report

import (
	"fmt"
	"io"
	"math"
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
	w := d.NoiseWidth()
	switch {
	case math.IsNaN(w):
		return "?"
	case w >= 10:
		return "±>1000%" // a figure some tenth of a run had at a tenth of its whole, or ten times it
	}
	return fmt.Sprintf("±%.1f%%", 100*w)
}

// noiseNotes says for each comparison what its noise is made of and,
// with one run per side, plainly what it cannot see: in full the first
// time, then briefly.
func noiseNotes(cs []Comparison) []string {
	out := make([]string, len(cs))
	said := false
	for i, c := range cs {
		out[i] = noiseNote(c)
		if !c.BetweenRuns() {
			if said {
				out[i] = c.Run + " against " + c.Base + ": one run per side, so only the noise within each run is known (as above)."
			}
			said = true
		}
	}
	return out
}

func noiseNote(c Comparison) string {
	if c.BetweenRuns() {
		return fmt.Sprintf("%s (%s) against %s (%s): the noise is the spread between runs (95%% t interval of the change of the mean, %d degrees of freedom), and at least each run's own noise. "+
			"One figure in twenty is beyond its 95%% noise by chance, so a change is called significant only when it passes the Benjamini-Hochberg procedure at 5%% over the table's figures: "+
			"identical sides have any figure called in at most 5%% of comparisons.",
			c.Run, plural(c.RunRuns, "run"), c.Base, plural(c.BaseRuns, "run"), c.BaseRuns+c.RunRuns-2)
	}
	return c.Run + " against " + c.Base + ": one run per side, so only the noise within each run is known (the 95% block-bootstrap interval of the change over each run's 1 s intervals, " +
		"widened to the most any tenth of either run strays from its whole run). What differs between runs (run order, database growth, checkpoints, the machine's other load) " +
		"is not, and identical runs differ by it, often beyond their noise within: no change is called significant. \"beyond within-run noise\" marks a change to confirm with more runs: " +
		"give each side two or more (linkbench report DIR_A DIR_B, each DIR holding the bundles of one side)."
}

// tally is the closing line of a comparison's table.
func tally(c Comparison) string {
	n, sig := 0, 0
	for _, d := range c.Deltas {
		if d.Beyond() {
			n++
		}
		if d.Significant() {
			sig++
		}
	}
	if c.BetweenRuns() {
		return fmt.Sprintf("%d of %d figures changed significantly (%d beyond their 95%% noise)", sig, len(c.Deltas), n)
	}
	return fmt.Sprintf("%d of %d figures changed beyond the noise within runs; with one run per side none is called significant", n, len(c.Deltas))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// WriteComparisonText writes the terminal form of a comparison of runs,
// each a side of its own.
func WriteComparisonText(w io.Writer, runs []*Results, names []string) error {
	return WriteSidesText(w, SidesOf(runs, names))
}

// WriteSidesText writes the terminal form of a comparison: the runs, the
// warnings and differences of settings, then for every side after the
// first a table of deltas against the first with their noise and verdict.
func WriteSidesText(w io.Writer, sides []Side) error {
	runs, labels, names := runsOf(sides)
	var b strings.Builder
	b.WriteString("Runs:\n")
	for i, r := range runs {
		fmt.Fprintf(&b, "  %-3s %s  (%s, %s phase, %.0f s)\n", labels[i], names[i], r.Store, r.Phase, r.ElapsedSec)
	}
	diffs := DiffSettings(runs)
	for _, d := range diffs {
		if d.Warning != "" {
			fmt.Fprintf(&b, "WARNING: %s differs (%s): %s; the figures are not comparable\n", d.Key, joinValues(d.Values, labels), d.Warning)
		}
	}
	for _, d := range diffs {
		if d.Warning == "" {
			fmt.Fprintf(&b, "differs: %s (%s)\n", d.Key, joinValues(d.Values, labels))
		}
	}
	cs := CompareSides(sides)
	notes := noiseNotes(cs)
	for i, c := range cs {
		fmt.Fprintf(&b, "\n%s\n", wrap(notes[i], 100))
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "figure\tunit\t%s\t%s\tchange\tnoise\tverdict\n", c.Base, c.Run)
		for _, d := range c.Deltas {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Metric, d.Unit, fmtValue(d.Base, d.Unit), fmtValue(d.Value, d.Unit), fmtChange(d.Change), fmtNoise(d), d.Verdict())
		}
		tw.Flush()
		fmt.Fprintln(&b, tally(c))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap breaks text into lines of at most width columns at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && n+1+len(word) > width {
			b.WriteByte('\n')
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}

func joinValues(vals, labels []string) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = labels[i] + ": " + v
	}
	return strings.Join(parts, ", ")
}

// compare renders the comparison page: the same tables as the terminal,
// then charts where runs are told apart by short labels (A, B1, B2, ...):
// by colour per side on run-wide charts, and on per-op panels, where the
// colour stays the op's, by line style.
func compare(b *strings.Builder, sides []Side) {
	runs, labels, names := runsOf(sides)
	side := make([]int, 0, len(runs)) // the side of each run
	for i, s := range sides {
		for range s.Runs {
			side = append(side, i)
		}
	}
	b.WriteString("<h1>LinkBench comparison</h1><p class=\"sub\">Every side against the first (A). A change is significant when it exceeds the noise: with one run per side the noise within each run, with two runs or more on a side the spread between runs (docs/results.md).</p><h2>Runs</h2>")
	b.WriteString("<table><tr><th class=\"l\">run</th><th class=\"l\">bundle</th><th class=\"l\">store</th><th class=\"l\">phase</th><th class=\"l\">started</th><th>measured s</th><th>throughput</th></tr>")
	for i, r := range runs {
		tput := r.Totals.OpsPerSec
		if r.Phase == "load" {
			tput = r.Totals.LinksPerSec
		}
		fmt.Fprintf(b, "<tr><td class=\"l\"><b>%s</b></td><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%.0f</td><td>%.0f</td></tr>",
			labels[i], esc(names[i]), esc(r.Store), esc(r.Phase), esc(r.StartedAt.Format("2006-01-02 15:04:05")), r.ElapsedSec, tput)
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
		for _, l := range labels {
			fmt.Fprintf(b, "<th class=\"l\">%s</th>", l)
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
	cs := CompareSides(sides)
	notes := noiseNotes(cs)
	for i, c := range cs {
		fmt.Fprintf(b, "<h2>%s against %s</h2><p class=\"sub\">%s</p><table><tr><th class=\"l\">figure</th><th class=\"l\">unit</th><th>%s</th><th>%s</th><th>change</th><th>noise (95%%)</th><th class=\"l\">verdict</th></tr>",
			c.Run, c.Base, esc(notes[i]), c.Base, c.Run)
		for _, d := range c.Deltas {
			cls := "noise"
			switch v := d.Verdict(); {
			case d.Significant() && strings.HasSuffix(v, "better"):
				cls = "good"
			case d.Significant():
				cls = "bad"
			case d.Beyond():
				cls = "warn"
			}
			swatch := ""
			if d.Op != "" {
				swatch = fmt.Sprintf("<span style=\"color:%s\">■</span> ", OpColor(d.Op))
			}
			fmt.Fprintf(b, "<tr><td class=\"l\">%s%s</td><td class=\"l\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"l %s\">%s</td></tr>",
				swatch, esc(d.Metric), esc(d.Unit), fmtValue(d.Base, d.Unit), fmtValue(d.Value, d.Unit), fmtChange(d.Change), fmtNoise(d), cls, esc(d.Verdict()))
		}
		fmt.Fprintf(b, "</table><p class=\"sub\">%s.</p>", esc(tally(c)))
	}
	b.WriteString("<h2>Charts</h2>")
	var thr, p99 []Series
	end := 0.0
	for i, r := range runs {
		ivs := chartIntervals(r)
		xs := seconds(r, ivs)
		col := otherColors[side[i]%len(otherColors)]
		dash := runDashes[i%len(runDashes)]
		s := Series{Name: labels[i], Run: labels[i], X: xs, Color: col, Dash: dash}
		p := Series{Name: labels[i], Run: labels[i], X: xs, Color: col, Dash: dash}
		for _, iv := range ivs {
			s.Y = append(s.Y, iv.OpsPerSec)
			p.Y = append(p.Y, MixtureQuantiles(iv.Ops, []float64{0.99})[0])
		}
		if links, _, _ := loadRates(r); r.Phase == "load" && len(links.X) > 0 {
			s.X, s.Y = links.X, links.Y
		}
		thr, p99 = append(thr, s), append(p99, p)
		end = math.Max(end, runEnd(r))
	}
	unit := "requests/s"
	if runs[0].Phase == "load" {
		unit = "links/s"
	}
	b.WriteString(Chart{ID: "throughput", Title: "Throughput over time", XLabel: "time since measurement began (s)", YLabel: unit, Series: thr, XFrom0: true, XEnd: end}.SVG())
	b.WriteString(Chart{ID: "latency", Title: "p99 latency over time, all ops (estimated per interval)", XLabel: "time since measurement began (s)", YLabel: "p99 (ms, log)", LogY: true, Series: p99, XFrom0: true, XEnd: end}.SVG())
	var key []Series
	for i := range runs {
		key = append(key, Series{Name: labels[i], Color: "#555555", Dash: runDashes[i%len(runDashes)]})
	}
	var panels []Chart
	for _, op := range requestOpNames(runs[0]) {
		var ss []Series
		for i, r := range runs {
			curve, ok := r.Curves[op]
			if !ok {
				continue
			}
			s := Series{Op: op, Run: labels[i], Dash: runDashes[i%len(runDashes)]}
			for _, pt := range curve {
				s.X, s.Y = append(s.X, pt[0]), append(s.Y, pt[1])
			}
			ss = append(ss, s)
		}
		panels = append(panels, Chart{ID: "distribution-" + op, Title: op + " (ms by percentile)", TitleColor: OpColor(op), LogX: true, LogY: true, Series: ss})
	}
	b.WriteString(Panels("distribution", "Latency distribution per op and run", key, panels))
	var colors []string
	var counts []float64
	for i, r := range runs {
		colors = append(colors, otherColors[side[i]%len(otherColors)])
		counts = append(counts, r.Totals.OpsPerSec+r.Totals.LinksPerSec)
	}
	b.WriteString(BarChart("runs", "Throughput per run", unit, labels, counts, colors))
}
