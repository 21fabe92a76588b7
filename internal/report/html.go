package report

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"

	"github.com/linkbench/linkbench/internal/stats"
)

const pageStyle = `body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:1.6em;margin-bottom:0}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}
.sub{color:#666;margin-top:4px}table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}
svg.chart{display:block;margin:10px 0;background:#fff}.title{font-size:14px;font-weight:600}
.tick{font-size:11px;fill:#444}.axis{font-size:12px;fill:#222}.legend{font-size:11px}
.frame{fill:none;stroke:#999}.grid{stroke:#eee}.empty{fill:#999;font-size:13px}
.good{color:#1a7f37}.bad{color:#c62828}`

// WriteHTML renders one self-contained report page (no network access,
// inline SVG) for one results bundle, or a comparison of several.
func WriteHTML(w io.Writer, runs []*Results, names []string) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>")
	if len(runs) == 1 {
		fmt.Fprintf(&b, "LinkBench %s report: %s", html.EscapeString(runs[0].Phase), html.EscapeString(runs[0].Store))
	} else {
		b.WriteString("LinkBench comparison")
	}
	b.WriteString("</title><style>" + pageStyle + "</style></head><body>")
	if len(runs) == 1 {
		single(&b, runs[0])
	} else {
		compare(&b, runs, names)
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string { return html.EscapeString(s) }

func single(b *strings.Builder, r *Results) {
	fmt.Fprintf(b, "<h1>LinkBench %s phase on %s</h1>", esc(r.Phase), esc(r.Store))
	fmt.Fprintf(b, "<p class=\"sub\">%s · %.1f s · linkbench %s · %s</p>", esc(r.StartedAt.Format("2006-01-02 15:04:05 MST")), r.ElapsedSec, esc(r.ToolVersion), esc(r.StoreVersion))
	if r.Interrupted {
		b.WriteString("<p class=\"bad\">This run was interrupted; the figures cover what ran.</p>")
	}
	b.WriteString("<h2>Summary</h2><table>")
	row := func(k, v string) { fmt.Fprintf(b, "<tr><th class=\"l\">%s</th><td>%s</td></tr>", esc(k), esc(v)) }
	t := r.Totals
	if r.Phase == "load" {
		row("nodes", fmt.Sprint(t.Nodes))
		row("links", fmt.Sprint(t.Links))
		row("counts", fmt.Sprint(t.Counts))
		row("links/s", fmt.Sprintf("%.0f", t.LinksPerSec))
	} else {
		row("requests", fmt.Sprint(t.Requests))
		row("errors", fmt.Sprint(t.Errors))
		row("requests/s", fmt.Sprintf("%.0f", t.OpsPerSec))
		if r.WorkloadSemantics != "" {
			row("workload semantics", r.WorkloadSemantics)
		}
	}
	if r.SizeOnDisk > 0 {
		row("size on disk after", fmt.Sprintf("%.1f MB", float64(r.SizeOnDisk)/1e6))
	}
	if r.SizeBefore > 0 {
		row("size on disk before", fmt.Sprintf("%.1f MB", float64(r.SizeBefore)/1e6))
	}
	b.WriteString("</table>")
	opTable(b, r.Ops)
	if r.Efficiency != nil {
		e := r.Efficiency
		unit := "request"
		if r.Phase == "load" {
			unit = "link"
		}
		fmt.Fprintf(b, "<h2>Efficiency (per %s)</h2><table>", unit)
		row("driver CPU µs", fmt.Sprintf("%.2f", e.DriverCPUUs))
		row("machine CPU µs (user+sys)", fmt.Sprintf("%.2f", e.MachineCPUUs))
		if e.ServerCPUUs > 0 {
			row("server CPU µs", fmt.Sprintf("%.2f", e.ServerCPUUs))
		}
		row("disk reads", fmt.Sprintf("%.4f", e.Reads))
		row("disk writes", fmt.Sprintf("%.4f", e.Writes))
		row("KB read", fmt.Sprintf("%.4f", e.ReadKB))
		row("KB written", fmt.Sprintf("%.4f", e.WriteKB))
		row("context switches", fmt.Sprintf("%.4f", e.CtxSw))
		b.WriteString("</table>")
	}
	b.WriteString("<h2>Charts</h2>")
	for _, c := range Charts(r) {
		b.WriteString(c)
	}
	b.WriteString("<h2>Configuration</h2><table><tr><th class=\"l\">key</th><th class=\"l\">value</th><th class=\"l\">from</th></tr>")
	for _, c := range r.Config {
		fmt.Fprintf(b, "<tr><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td></tr>", esc(c.Key), esc(c.Value), esc(c.Origin))
	}
	b.WriteString("</table><h2>Environment</h2><table>")
	env := r.Environment
	row("host", env.Hostname)
	row("OS/arch", env.OS+"/"+env.Arch)
	row("CPUs", fmt.Sprint(env.CPUs))
	row("Go", env.GoVersion)
	keys := make([]string, 0, len(r.StoreSettings))
	for k := range r.StoreSettings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row("store: "+k, r.StoreSettings[k])
	}
	b.WriteString("</table>")
}

func opTable(b *strings.Builder, ops []stats.OpSummary) {
	b.WriteString("<h2>Operations</h2><table><tr><th class=\"l\">op</th><th>count</th><th>errors</th><th>retries</th><th>ops/s</th><th>p25 ms</th><th>p50 ms</th><th>p75 ms</th><th>p95 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>mean ms</th></tr>")
	for _, s := range ops {
		if s.Name == "RANGE_SIZE" {
			continue
		}
		fmt.Fprintf(b, "<tr><td class=\"l\">%s</td><td>%d</td><td>%d</td><td>%d</td><td>%.0f</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>",
			esc(s.Name), s.Count, s.Errors, s.Retries, s.OpsPerSec, FormatMs(s.P25), FormatMs(s.P50), FormatMs(s.P75), FormatMs(s.P95), FormatMs(s.P99), FormatMs(s.P999), FormatMs(s.Max), FormatMs(s.Mean))
	}
	b.WriteString("</table>")
}

// seconds returns the x values (seconds from the start) of the intervals.
func seconds(r *Results) []float64 {
	xs := make([]float64, len(r.Intervals))
	if len(r.Intervals) == 0 {
		return xs
	}
	t0 := r.Intervals[0].EndTime
	first := r.Intervals[0].End.Seconds()
	for i, iv := range r.Intervals {
		xs[i] = first + iv.EndTime.Sub(t0).Seconds()
	}
	return xs
}

// opSeries extracts one figure of every op over the intervals.
func opSeries(r *Results, pick func(stats.OpSummary) float64) []Series {
	xs := seconds(r)
	byOp := map[string]*Series{}
	var order []string
	for i, iv := range r.Intervals {
		for _, o := range iv.Ops {
			if o.Name == "RANGE_SIZE" {
				continue
			}
			s, ok := byOp[o.Name]
			if !ok {
				s = &Series{Name: o.Name}
				byOp[o.Name] = s
				order = append(order, o.Name)
			}
			s.X = append(s.X, xs[i])
			s.Y = append(s.Y, pick(o))
		}
	}
	sort.Strings(order)
	out := make([]Series, 0, len(order))
	for _, n := range order {
		out = append(out, *byOp[n])
	}
	return out
}

// fullIntervals drops a short final interval (the run's tail), whose
// rates would plot as a misleading drop.
func fullIntervals(r *Results) *Results {
	n := len(r.Intervals)
	if n > 1 && r.Intervals[n-1].DurationSec < 0.5*r.Intervals[n-2].DurationSec {
		c := *r
		c.Intervals = r.Intervals[:n-1]
		return &c
	}
	return r
}

// Charts renders every chart of one run as SVG strings.
func Charts(r *Results) []string {
	r = fullIntervals(r)
	xs := seconds(r)
	thr := Series{Name: "all ops", X: xs}
	errs := Series{Name: "errors", X: xs}
	retries := Series{Name: "retries", X: xs}
	for _, iv := range r.Intervals {
		thr.Y = append(thr.Y, iv.OpsPerSec)
		errs.Y = append(errs.Y, float64(iv.Errors))
		var rt int64
		for _, o := range iv.Ops {
			rt += o.Retries
		}
		retries.Y = append(retries.Y, float64(rt))
	}
	unit := "ops/s"
	if r.Phase == "load" {
		unit = "batches/s"
	}
	out := []string{
		Chart{ID: "throughput", Title: "Throughput over time", XLabel: "time (s)", YLabel: unit, Series: []Series{thr}}.SVG(),
		Chart{ID: "p50", Title: "p50 latency per op over time", XLabel: "time (s)", YLabel: "latency (ms, log)", LogY: true,
			Series: opSeries(r, func(o stats.OpSummary) float64 { return o.P50 })}.SVG(),
		Chart{ID: "p99", Title: "p99 latency per op over time", XLabel: "time (s)", YLabel: "latency (ms, log)", LogY: true,
			Series: opSeries(r, func(o stats.OpSummary) float64 { return o.P99 })}.SVG(),
		Chart{ID: "max", Title: "Max latency per op over time", XLabel: "time (s)", YLabel: "latency (ms, log)", LogY: true,
			Series: opSeries(r, func(o stats.OpSummary) float64 { return o.Max })}.SVG(),
		Chart{ID: "distribution", Title: "Latency distribution per op", XLabel: "percentile", YLabel: "latency (ms, log)", LogX: true, LogY: true,
			Series: curveSeries(r.Curves, "")}.SVG(),
	}
	var labels []string
	var counts []float64
	for _, o := range r.Ops {
		if o.Name != "RANGE_SIZE" {
			labels = append(labels, o.Name)
			counts = append(counts, float64(o.Count))
		}
	}
	out = append(out, BarChart("mix", "Operation mix", "ops", labels, counts))
	out = append(out, Chart{ID: "errors", Title: "Errors and retries over time", XLabel: "time (s)", YLabel: "per interval", Series: []Series{errs, retries}}.SVG())
	cpu := []Series{{Name: "driver CPU %"}, {Name: "machine user %"}, {Name: "machine sys %"}, {Name: "iowait %"}, {Name: "server CPU %"}}
	disk := []Series{{Name: "read KB/s"}, {Name: "write KB/s"}}
	var t0 float64
	for i, s := range r.Resources {
		x := float64(s.Time.Unix()) + float64(s.Time.Nanosecond())/1e9
		if i == 0 {
			t0 = x
		}
		x -= t0
		for j, v := range []float64{s.DriverCPUPct, s.UserPct, s.SysPct, s.IOWaitPct, s.ServerCPUPct} {
			cpu[j].X, cpu[j].Y = append(cpu[j].X, x), append(cpu[j].Y, v)
		}
		disk[0].X, disk[0].Y = append(disk[0].X, x), append(disk[0].Y, s.ReadKBPerSec)
		disk[1].X, disk[1].Y = append(disk[1].X, x), append(disk[1].Y, s.WriteKBPerSec)
	}
	out = append(out,
		Chart{ID: "cpu", Title: "CPU use over time", XLabel: "time (s)", YLabel: "percent", Series: cpu}.SVG(),
		Chart{ID: "disk", Title: "Disk I/O over time", XLabel: "time (s)", YLabel: "KB/s", Series: disk}.SVG())
	return out
}

func curveSeries(curves map[string][][2]float64, prefix string) []Series {
	names := make([]string, 0, len(curves))
	for n := range curves {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Series
	for _, n := range names {
		s := Series{Name: prefix + n}
		for _, pt := range curves[n] {
			s.X = append(s.X, pt[0])
			s.Y = append(s.Y, pt[1])
		}
		out = append(out, s)
	}
	return out
}

func compare(b *strings.Builder, runs []*Results, names []string) {
	b.WriteString("<h1>LinkBench comparison</h1><p class=\"sub\">Ratios are against the first run.</p><h2>Runs</h2><table><tr><th class=\"l\">run</th><th class=\"l\">store</th><th class=\"l\">phase</th><th>throughput</th><th>ratio</th><th>driver CPU µs/op</th><th>KB written/op</th></tr>")
	base := runs[0]
	tput := func(r *Results) float64 {
		if r.Phase == "load" {
			return r.Totals.LinksPerSec
		}
		return r.Totals.OpsPerSec
	}
	for i, r := range runs {
		ratio := ""
		if tput(base) > 0 {
			ratio = fmt.Sprintf("%.2fx", tput(r)/tput(base))
		}
		cpu, kb := "", ""
		if r.Efficiency != nil {
			cpu, kb = fmt.Sprintf("%.2f", r.Efficiency.DriverCPUUs), fmt.Sprintf("%.3f", r.Efficiency.WriteKB)
			if be := base.Efficiency; be != nil {
				cpu += " (" + ratioText(r.Efficiency.DriverCPUUs, be.DriverCPUUs) + ")"
				kb += " (" + ratioText(r.Efficiency.WriteKB, be.WriteKB) + ")"
			}
		}
		fmt.Fprintf(b, "<tr><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%.0f</td><td>%s</td><td>%s</td><td>%s</td></tr>",
			esc(names[i]), esc(r.Store), esc(r.Phase), tput(r), ratio, cpu, kb)
	}
	b.WriteString("</table><h2>Per-op latency ratios (p50 / p99 against the first run)</h2><table><tr><th class=\"l\">op</th>")
	for _, n := range names {
		fmt.Fprintf(b, "<th>%s p50 ms</th><th>%s p99 ms</th>", esc(n), esc(n))
	}
	b.WriteString("</tr>")
	baseOps := map[string]stats.OpSummary{}
	for _, o := range base.Ops {
		baseOps[o.Name] = o
	}
	for _, o := range base.Ops {
		if o.Name == "RANGE_SIZE" {
			continue
		}
		fmt.Fprintf(b, "<tr><td class=\"l\">%s</td>", esc(o.Name))
		for _, r := range runs {
			var mine *stats.OpSummary
			for i := range r.Ops {
				if r.Ops[i].Name == o.Name {
					mine = &r.Ops[i]
				}
			}
			if mine == nil {
				b.WriteString("<td>-</td><td>-</td>")
				continue
			}
			fmt.Fprintf(b, "<td>%s (%s)</td><td>%s (%s)</td>", FormatMs(mine.P50), ratioText(mine.P50, o.P50), FormatMs(mine.P99), ratioText(mine.P99, o.P99))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table><h2>Charts</h2>")
	var thr, curves []Series
	for i, r := range runs {
		r = fullIntervals(r)
		s := Series{Name: names[i], X: seconds(r)}
		for _, iv := range r.Intervals {
			s.Y = append(s.Y, iv.OpsPerSec)
		}
		thr = append(thr, s)
		for _, c := range curveSeries(r.Curves, names[i]+" ") {
			curves = append(curves, c)
		}
	}
	b.WriteString(Chart{ID: "throughput", Title: "Throughput over time", XLabel: "time (s)", YLabel: "ops/s", Series: thr}.SVG())
	b.WriteString(Chart{ID: "distribution", Title: "Latency distribution per op and run", XLabel: "percentile", YLabel: "latency (ms, log)", LogX: true, LogY: true, Series: curves}.SVG())
}

func ratioText(v, base float64) string {
	if base <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v/base)
}
