package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// opOrder is the order of the mix in the workload file.
var opOrder = []string{"ADD_LINK", "DELETE_LINK", "UPDATE_LINK", "COUNT_LINK", "MULTIGET_LINK", "GET_LINKS_LIST",
	"ADD_NODE", "UPDATE_NODE", "DELETE_NODE", "GET_NODE"}

// isReference reports whether a run is the reference's (its label starts
// with "reference").
func isReference(m Metrics) bool { return strings.HasPrefix(m.Label, "reference") }

func opShare(m Metrics, op string) float64 {
	var total int64
	for _, n := range m.Ops {
		total += n
	}
	if total == 0 {
		return 0
	}
	return 100 * float64(m.Ops[op]) / float64(total)
}

// writeTable prints the runs side by side, then how linkbench's runs
// compare with the reference's under the acceptance bounds of the
// fidelity check (docs/fidelity.md).
func writeTable(w io.Writer, title string, runs []Metrics) {
	if title != "" {
		fmt.Fprintf(w, "\n== %s ==\n", title)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, f func(m Metrics) string) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, m := range runs {
			fmt.Fprintf(tw, "%s\t", f(m))
		}
		fmt.Fprintln(tw)
	}
	row("", func(m Metrics) string { return m.Label })
	row("requests/s", func(m Metrics) string { return fmt.Sprintf("%.0f", m.RequestsPerSec) })
	for _, op := range opOrder {
		row(op+" %", func(m Metrics) string { return fmt.Sprintf("%.2f", opShare(m, op)) })
	}
	row("GET_LINKS_LIST statements", func(m Metrics) string { return fmt.Sprint(m.Lists) })
	row("rows/list mean", func(m Metrics) string { return fmt.Sprintf("%.1f", m.ListRows.Mean) })
	row("rows/list p50", func(m Metrics) string { return fmt.Sprint(m.ListRows.P50) })
	row("rows/list p90", func(m Metrics) string { return fmt.Sprint(m.ListRows.P90) })
	row("rows/list p95", func(m Metrics) string { return fmt.Sprint(m.ListRows.P95) })
	row("rows/list p99", func(m Metrics) string { return fmt.Sprint(m.ListRows.P99) })
	row("multiget size mean", func(m Metrics) string { return fmt.Sprintf("%.2f", m.MultigetMean) })
	row("multiget size 1 share", func(m Metrics) string { return fmt.Sprintf("%.3f", m.MultigetOnes) })
	row("found ratio (rows/id2)", func(m Metrics) string { return fmt.Sprintf("%.3f", m.FoundRatio) })
	row("top-20 read/write overlap", func(m Metrics) string { return fmt.Sprint(m.Overlap) })
	row("check", func(m Metrics) string { return m.CheckSummary })
	tw.Flush()
	acceptance(w, runs)
}

// acceptance compares every linkbench run with the reference runs: op
// mix within 0.5 points of the reference's mean for every op; rows per
// list p90 and p95 inside the reference runs' range widened by 20 %;
// multiget mean within 0.1 and top-20 overlap within 3 of the reference's
// mean.
func acceptance(w io.Writer, runs []Metrics) {
	var ref, ours []Metrics
	for _, m := range runs {
		if isReference(m) {
			ref = append(ref, m)
		} else {
			ours = append(ours, m)
		}
	}
	if len(ref) == 0 || len(ours) == 0 {
		return
	}
	mean := func(f func(Metrics) float64) float64 {
		s := 0.0
		for _, m := range ref {
			s += f(m)
		}
		return s / float64(len(ref))
	}
	span := func(f func(Metrics) float64) (float64, float64) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, m := range ref {
			lo, hi = math.Min(lo, f(m)), math.Max(hi, f(m))
		}
		return lo * 0.8, hi * 1.2
	}
	verdict := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "OUT"
	}
	p90 := func(m Metrics) float64 { return float64(m.ListRows.P90) }
	p95 := func(m Metrics) float64 { return float64(m.ListRows.P95) }
	lo90, hi90 := span(p90)
	lo95, hi95 := span(p95)
	mg := mean(func(m Metrics) float64 { return m.MultigetMean })
	ov := mean(func(m Metrics) float64 { return float64(m.Overlap) })
	for _, m := range ours {
		worst, worstOp := 0.0, ""
		for _, op := range opOrder {
			d := math.Abs(opShare(m, op) - mean(func(r Metrics) float64 { return opShare(r, op) }))
			if d >= worst {
				worst, worstOp = d, op
			}
		}
		fmt.Fprintf(w, "%s against %d reference runs:\n", m.Label, len(ref))
		fmt.Fprintf(w, "  op mix: largest difference %.2f points (%s) [<= 0.5: %s]\n", worst, worstOp, verdict(worst <= 0.5))
		fmt.Fprintf(w, "  rows/list p90 %d in [%.1f, %.1f]: %s; p95 %d in [%.1f, %.1f]: %s\n",
			m.ListRows.P90, lo90, hi90, verdict(p90(m) >= lo90 && p90(m) <= hi90), m.ListRows.P95, lo95, hi95, verdict(p95(m) >= lo95 && p95(m) <= hi95))
		fmt.Fprintf(w, "  multiget size mean %.2f vs %.2f [within 0.1: %s]\n", m.MultigetMean, mg, verdict(math.Abs(m.MultigetMean-mg) <= 0.1))
		fmt.Fprintf(w, "  top-20 overlap %d vs %.1f [within 3: %s]\n", m.Overlap, ov, verdict(math.Abs(float64(m.Overlap)-ov) <= 3))
	}
}
