package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/linkbench/linkbench/internal/stats"
)

// configValue is the effective value of key in the run's config, or the
// value the run adopted from the store's record of its graph ("" when
// neither was recorded).
func configValue(r *Results, key string) string {
	if r.GraphCheck != nil {
		for _, a := range r.GraphCheck.Adopted {
			if k, v, ok := strings.Cut(a, "="); ok && k == key {
				return v
			}
		}
	}
	for _, c := range r.Config {
		if c.Key == key {
			return c.Value
		}
	}
	return ""
}

// headline is one large figure of the header block.
type headline struct{ label, value, unit string }

// header writes the block at the top of a report: the figures a reader
// looks for first, then what was measured and where (store and version,
// requesters or loaders, graph size, machine), so that the page answers
// "what ran, on what, and how fast" before any chart.
func header(b *strings.Builder, r *Results) {
	var figs []headline
	t := r.Totals
	if r.Phase == "load" {
		figs = append(figs, headline{"links/s", withThousands(int64(t.LinksPerSec + 0.5)), ""},
			headline{"links", fmtTick(float64(t.Links)), ""}, headline{"nodes", fmtTick(float64(t.Nodes)), ""},
			headline{"load took", strconv.FormatFloat(r.ElapsedSec, 'f', 1, 64), "s"})
		if total := t.InsertSec + t.FinishSec; total > 0 {
			figs = append(figs, headline{"finishing work", fmt.Sprintf("%.0f", 100*t.FinishSec/total), "% of the time"})
		}
	} else {
		figs = append(figs, headline{"requests/s", withThousands(int64(t.OpsPerSec + 0.5)), ""})
		if a := r.AllOps; a != nil {
			figs = append(figs, headline{"p50, all requests", FormatMs(a.P50), "ms"}, headline{"p99", FormatMs(a.P99), "ms"}, headline{"p99.9", FormatMs(a.P999), "ms"})
		}
		errs := "0"
		if t.Requests > 0 {
			errs = FormatMs(100 * float64(t.Errors) / float64(t.Requests))
		}
		figs = append(figs, headline{"errors", errs, "%"}, headline{"measured", strconv.FormatFloat(r.ElapsedSec, 'f', 0, 64), "s"})
	}
	b.WriteString(`<div class="headline">`)
	for _, f := range figs {
		fmt.Fprintf(b, `<div class="fig"><div class="v">%s<span class="u">%s</span></div><div class="k">%s</div></div>`, esc(f.value), esc(f.unit), esc(f.label))
	}
	b.WriteString(`</div><table class="setup">`)
	store := r.Store
	if r.StoreVersion != "" {
		store += " · " + r.StoreVersion
	}
	row(b, "store", store)
	if lw := r.StoreSettings["link_writes"]; lw != "" && r.Phase != "load" {
		// What the server was sent for a link write: the reference's
		// statements, or a routine's call (a different workload).
		row(b, "link writes", lw)
	}
	if r.Phase == "load" {
		row(b, "loaders", configValue(r, "loaders"))
	} else {
		workers := configValue(r, "requesters")
		if rate := configValue(r, "requestrate"); rate != "" && rate != "0" {
			workers += ", each paced at " + rate + " requests/s"
		}
		if rate := configValue(r, "arrival_rate"); rate != "" && rate != "0" {
			workers += ", open loop at " + rate + " requests/s"
		}
		row(b, "requesters", workers)
	}
	row(b, "graph", graphSize(r))
	row(b, "machine", machine(r.Environment))
	b.WriteString("</table>")
}

// graphSize describes the graph: its nodes (ids startid1 to maxid1-1)
// and, for a load, the links and counts it wrote.
func graphSize(r *Results) string {
	lo, _ := strconv.ParseInt(configValue(r, "startid1"), 10, 64)
	hi, err := strconv.ParseInt(configValue(r, "maxid1"), 10, 64)
	if err != nil || hi <= lo {
		return "not recorded"
	}
	if lo == 0 {
		lo = 1
	}
	s := fmt.Sprintf("%s nodes (ids %d to %d)", withThousands(hi-lo), lo, hi-1)
	if r.Phase == "load" && r.Totals.Links > 0 {
		s += fmt.Sprintf(", %s links, %s counts", withThousands(r.Totals.Links), withThousands(r.Totals.Counts))
	}
	return s
}

// machine describes the machine that ran the driver.
func machine(e Environment) string {
	parts := []string{e.Hostname}
	cpus := fmt.Sprintf("%d CPUs", e.CPUs)
	if e.CPUModel != "" {
		cpus += " (" + e.CPUModel + ")"
	}
	parts = append(parts, cpus)
	if e.MemoryBytes > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GB memory", float64(e.MemoryBytes)/1e9))
	}
	os := e.OS + "/" + e.Arch
	if e.Kernel != "" {
		os += " " + e.Kernel
	}
	parts = append(parts, os)
	if e.DataFS != nil && e.DataFS.Type != "" {
		parts = append(parts, "data on "+e.DataFS.Type+" "+e.DataFS.Device)
	}
	return strings.Join(parts, " · ")
}

// withThousands writes n with thousands separators.
func withThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// loadStageTable shows a load's stages: every insert and every step of
// the store's finishing work, with its rows, times and rate, and the
// split of the load's time between the two.
func loadStageTable(b *strings.Builder, r *Results) {
	if len(r.LoadStages) == 0 {
		return
	}
	b.WriteString(`<h2>Stages</h2><table><tr><th class="l">stage</th><th class="l">kind</th><th>rows</th><th>seconds</th><th>rows/s</th><th>from s</th><th>to s</th></tr>`)
	for _, s := range r.LoadStages {
		rows, rate := "-", "-"
		if s.Rows > 0 {
			rows = withThousands(s.Rows)
		}
		if s.RowsPerSec > 0 {
			rate = withThousands(int64(s.RowsPerSec + 0.5))
		}
		kind := "insert"
		if s.Kind == stats.StageFinish {
			kind = "finishing"
		}
		fmt.Fprintf(b, `<tr><td class="l">%s</td><td class="l">%s</td><td>%s</td><td>%.1f</td><td>%s</td><td>%.1f</td><td>%.1f</td></tr>`,
			esc(s.Name), kind, rows, s.Seconds(), rate, s.StartSec, s.EndSec)
	}
	b.WriteString("</table>")
	t := r.Totals
	if total := t.InsertSec + t.FinishSec; total > 0 {
		fmt.Fprintf(b, `<p class="sub">Inserting rows %.1f s (%.0f%%), the store's finishing work %.1f s (%.0f%%).</p>`, t.InsertSec, 100*t.InsertSec/total, t.FinishSec, 100*t.FinishSec/total)
	}
}

// summaryColumnDocs say what each column of the summary lines holds, for
// the legend under them on the page (docs/results.md has the long form).
func summaryColumnDocs(phase string) map[string]string {
	per := "request"
	if phase == "load" {
		per = "link"
	}
	d := map[string]string{
		"loop":   "the loop's number",
		"tps":    "requests per second",
		"ips":    "links inserted per second (node and count rows not counted)",
		"size":   "the database's size on disk at the end, GB",
		"rss":    "the server's memory at the end, GB (for an embedded store, the driver's)",
		"r/s":    "disk reads per second",
		"rMB/s":  "MB read from disk per second",
		"wMB/s":  "MB written to disk per second",
		"cpu":    "the machine's CPU use, user + system, % of all CPUs",
		"secs":   "seconds measured",
		"engine": "the store and its storage engine",
	}
	for _, suffix := range []string{"t", "i"} {
		d["r/"+suffix] = "disk reads per " + per
		d["rkb/"+suffix] = "KB read from disk per " + per
		d["wkb/"+suffix] = "KB written to disk per " + per
		d["Mcpu/"+suffix] = "cpu divided by the rate, times 10⁶: CPU per " + per + ", comparable on machines of one CPU model"
	}
	for _, so := range SummaryOps {
		d[so.Column] = "p99 latency of " + so.Op.String() + ", ms"
	}
	return d
}

// summaryLegend writes what each summary-line column means.
func summaryLegend(b *strings.Builder, phase string) {
	docs := summaryColumnDocs(phase)
	b.WriteString(`<dl class="legend-cols">`)
	for _, c := range SummaryColumns(phase) {
		fmt.Fprintf(b, "<dt>%s</dt><dd>%s</dd>", esc(c), esc(docs[c]))
	}
	fmt.Fprintf(b, "<dt>%s</dt><dd>not measurable from this machine (a remote server) or not reported</dd></dl>", Unknown)
}
