package report

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"

	"github.com/linkbench/linkbench/internal/stats"
)

// pageStyle is the style of every page. Charts take the full width of the
// page and scale with it; small multiples fill a grid of as many columns
// as fit.
const pageStyle = `body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;padding:0 16px;color:#222;max-width:1200px}
h1{font-size:1.6em;margin-bottom:0}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}
.sub{color:#666;margin-top:4px}table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}
svg.chart,svg.key{display:block;margin:10px 0 18px;background:#fff;width:100%;height:auto}
.title{font-size:14px;font-weight:600}.panel .title{font-size:12px}
.tick{font-size:11px;fill:#444}.panel .tick{font-size:10px}.axis{font-size:12px;fill:#222}
.legend{font-size:11px;fill:#222}.panel .legend{font-size:10px}.cat,.value{font-size:11px;fill:#333}
.frame{fill:none;stroke:#999}.grid{stroke:#eee}.xtick{stroke:#999}.empty{fill:#999;font-size:13px}
.band-warmup{fill:#9e9e9e;fill-opacity:.18}.band-outage{fill:#e53935;fill-opacity:.18}.band-stage{fill:#1e88e5;fill-opacity:.07}
.band-stage-alt{fill:#1e88e5;fill-opacity:.15}.band-finish{fill:#8e24aa;fill-opacity:.12}.band-label{font-size:10px;fill:#555}
.vline{stroke:#888;stroke-dasharray:3 3}
.panels-title{font-weight:600;font-size:14px;margin:14px 0 2px}
.multiples{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:4px 14px}
.cell svg.chart{margin:4px 0}
.good{color:#1a7f37}.bad{color:#c62828}.warn{color:#b26a00}.noise{color:#666}
.headline{display:flex;flex-wrap:wrap;gap:8px 28px;margin:14px 0 6px}.fig .v{font-size:1.7em;font-weight:600}.fig .u{font-size:.55em;font-weight:400;color:#555;margin-left:3px}.fig .k{color:#666;font-size:12px}
table.setup{font-size:13px}table.setup th{width:7em}table.setup td{text-align:left}
dl.legend-cols{display:grid;grid-template-columns:max-content 1fr;gap:1px 12px;font-size:12px;color:#444;margin:4px 0 10px}dl.legend-cols dt{font-weight:600;font-family:ui-monospace,monospace}dl.legend-cols dd{margin:0}`

// WriteHTML renders one self-contained report page (no network access,
// inline SVG) for one results bundle, or a comparison of several.
func WriteHTML(w io.Writer, runs []*Results, names []string) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>")
	if len(runs) > 1 {
		return WriteComparisonHTML(w, SidesOf(runs, names))
	}
	fmt.Fprintf(&b, "LinkBench %s report: %s", esc(runs[0].Phase), esc(runs[0].Store))
	b.WriteString("</title><style>" + pageStyle + "</style></head><body>")
	single(&b, runs[0])
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteComparisonHTML renders the comparison page of sides of one run or
// more each.
func WriteComparisonHTML(w io.Writer, sides []Side) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>LinkBench comparison</title><style>" + pageStyle + "</style></head><body>")
	compare(&b, sides)
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string { return html.EscapeString(s) }

// row writes a two-column table row.
func row(b *strings.Builder, k, v string) {
	fmt.Fprintf(b, "<tr><th class=\"l\">%s</th><td>%s</td></tr>", esc(k), esc(v))
}

func single(b *strings.Builder, r *Results) {
	fmt.Fprintf(b, "<h1>LinkBench %s phase on %s</h1>", esc(r.Phase), esc(r.Store))
	fmt.Fprintf(b, "<p class=\"sub\">%s · %.1f s · linkbench %s · %s</p>", esc(r.StartedAt.Format("2006-01-02 15:04:05 MST")), r.ElapsedSec, esc(r.ToolVersion), esc(r.StoreVersion))
	if r.Interrupted {
		b.WriteString("<p class=\"bad\">This run was interrupted; the figures cover what ran.</p>")
	}
	header(b, r)
	b.WriteString("<h2>Summary</h2><table>")
	t := r.Totals
	if r.Phase == "load" {
		row(b, "nodes", fmt.Sprint(t.Nodes))
		row(b, "links", fmt.Sprint(t.Links))
		row(b, "counts", fmt.Sprint(t.Counts))
		row(b, "links/s", fmt.Sprintf("%.0f", t.LinksPerSec))
	} else {
		row(b, "requests", fmt.Sprint(t.Requests))
		row(b, "errors", fmt.Sprint(t.Errors))
		row(b, "requests/s", fmt.Sprintf("%.0f", t.OpsPerSec))
		if a := r.AllOps; a != nil {
			row(b, "latency, all requests", fmt.Sprintf("p50 %s ms, p99 %s ms, p99.9 %s ms", FormatMs(a.P50), FormatMs(a.P99), FormatMs(a.P999)))
		}
		if r.WarmupSec > 0 {
			row(b, "warm-up (not measured)", fmt.Sprintf("%.0f s", r.WarmupSec))
		}
		if r.WorkloadSemantics != "" {
			row(b, "workload semantics", r.WorkloadSemantics)
		}
	}
	if r.SizeOnDisk > 0 {
		row(b, "size on disk after", fmt.Sprintf("%.1f MB", float64(r.SizeOnDisk)/1e6))
	}
	if r.SizeBefore > 0 {
		row(b, "size on disk before", fmt.Sprintf("%.1f MB", float64(r.SizeBefore)/1e6))
	}
	b.WriteString("</table>")
	loadStageTable(b, r)
	summaryLinesTable(b, r)
	opTable(b, r.Ops)
	efficiencyTable(b, r)
	b.WriteString("<h2>Charts</h2>")
	charts := RequestCharts
	if r.Phase == "load" {
		charts = LoadCharts
	}
	for _, c := range charts(r) {
		b.WriteString(c)
	}
	configTables(b, r)
}

// summaryLinesTable shows the summary lines (one per loop, or the load's)
// and, for several loops, their charts.
func summaryLinesTable(b *strings.Builder, r *Results) {
	if len(r.SummaryLines) == 0 {
		return
	}
	title := "Summary line"
	if len(r.SummaryLines) > 1 {
		title = fmt.Sprintf("Loops (%d)", len(r.SummaryLines))
	}
	fmt.Fprintf(b, "<h2>%s</h2><p class=\"sub\">In the form of the LinkBench users' helper scripts (summary.tsv); the columns are explained under the table and in docs/results.md.</p><table><tr>", title)
	for _, c := range SummaryColumns(r.SummaryLines[0].Phase) {
		fmt.Fprintf(b, "<th>%s</th>", esc(c))
	}
	b.WriteString("</tr>")
	for _, l := range r.SummaryLines {
		b.WriteString("<tr>")
		for _, c := range l.Cells() {
			fmt.Fprintf(b, "<td>%s</td>", esc(c))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	summaryLegend(b, r.SummaryLines[0].Phase)
	for _, c := range LoopCharts(r) {
		b.WriteString(c)
	}
}

func efficiencyTable(b *strings.Builder, r *Results) {
	if r.Efficiency == nil {
		return
	}
	e := r.Efficiency
	unit := "request"
	if r.Phase == "load" {
		unit = "link"
	}
	fmt.Fprintf(b, "<h2>Efficiency (per %s)</h2><table>", unit)
	row(b, "driver CPU µs", fmt.Sprintf("%.2f", e.DriverCPUUs))
	row(b, "machine CPU µs (user+sys)", fmt.Sprintf("%.2f", e.MachineCPUUs))
	if e.ServerCPUUs > 0 {
		row(b, "server CPU µs", fmt.Sprintf("%.2f", e.ServerCPUUs))
	}
	row(b, "disk reads", fmt.Sprintf("%.4f", e.Reads))
	row(b, "disk writes", fmt.Sprintf("%.4f", e.Writes))
	row(b, "KB read", fmt.Sprintf("%.4f", e.ReadKB))
	row(b, "KB written", fmt.Sprintf("%.4f", e.WriteKB))
	row(b, "context switches", fmt.Sprintf("%.4f", e.CtxSw))
	b.WriteString("</table>")
}

func configTables(b *strings.Builder, r *Results) {
	b.WriteString("<h2>Configuration</h2><table><tr><th class=\"l\">key</th><th class=\"l\">value</th><th class=\"l\">from</th></tr>")
	for _, c := range r.Config {
		fmt.Fprintf(b, "<tr><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td></tr>", esc(c.Key), esc(c.Value), esc(c.Origin))
	}
	b.WriteString("</table><h2>Environment</h2><table>")
	env := r.Environment
	row(b, "host", env.Hostname)
	row(b, "OS/arch", env.OS+"/"+env.Arch)
	row(b, "CPUs", fmt.Sprint(env.CPUs))
	row(b, "Go", env.GoVersion)
	keys := make([]string, 0, len(r.StoreSettings))
	for k := range r.StoreSettings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row(b, "store: "+k, r.StoreSettings[k])
	}
	b.WriteString("</table>")
}

func opTable(b *strings.Builder, ops []stats.OpSummary) {
	b.WriteString("<h2>Operations</h2><table><tr><th class=\"l\">op</th><th>count</th><th>errors</th><th>retries</th><th>ops/s</th><th>p25 ms</th><th>p50 ms</th><th>p75 ms</th><th>p95 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>mean ms</th></tr>")
	for _, s := range ops {
		if s.Name == "RANGE_SIZE" {
			continue
		}
		fmt.Fprintf(b, "<tr><td class=\"l\"><span style=\"color:%s\">■</span> %s</td><td>%d</td><td>%d</td><td>%d</td><td>%.0f</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>",
			OpColor(s.Name), esc(s.Name), s.Count, s.Errors, s.Retries, s.OpsPerSec, FormatMs(s.P25), FormatMs(s.P50), FormatMs(s.P75), FormatMs(s.P95), FormatMs(s.P99), FormatMs(s.P999), FormatMs(s.Max), FormatMs(s.Mean))
	}
	b.WriteString("</table>")
}
