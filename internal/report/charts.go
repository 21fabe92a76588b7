package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
)

// maxPoints is the most points a time chart draws per series: a 24-hour
// run has 86,400 intervals, which are merged into buckets first.
const maxPoints = 720

// percentileStyles are the line styles of p50, p99 and p99.9 on the
// latency panels (the colour is the op's).
var percentileStyles = []struct {
	name, dash string
	width      float64
	q          float64
	pick       func(stats.Percentiles) float64
}{
	{"p50", "", 1.2, 0.5, func(p stats.Percentiles) float64 { return p.P50 }},
	{"p99", "6 3", 1.8, 0.99, func(p stats.Percentiles) float64 { return p.P99 }},
	{"p99.9", "2 2", 1.4, 0.999, func(p stats.Percentiles) float64 { return p.P999 }},
}

// mergeIntervals merges consecutive intervals into one: counts summed,
// each op's percentiles the count-weighted mean of its intervals' (a
// smoothing: a day's 86,400 seconds become 720 points of 2 minutes), its
// minimum and maximum the extremes.
func mergeIntervals(ivs []stats.Interval) stats.Interval {
	last := ivs[len(ivs)-1]
	out := stats.Interval{Start: ivs[0].Start, End: last.End, EndTime: last.EndTime}
	byOp := map[string][]stats.OpSummary{}
	var names []string
	for _, iv := range ivs {
		out.DurationSec += iv.DurationSec
		out.Count += iv.Count
		out.Errors += iv.Errors
		for _, o := range iv.Ops {
			if _, ok := byOp[o.Name]; !ok {
				names = append(names, o.Name)
			}
			byOp[o.Name] = append(byOp[o.Name], o)
		}
	}
	if out.DurationSec > 0 {
		out.OpsPerSec = float64(out.Count) / out.DurationSec
	}
	for _, n := range names {
		parts := byOp[n]
		s := stats.OpSummary{Op: parts[0].Op, Name: n}
		s.Min, s.Max = math.Inf(1), 0
		for _, p := range parts {
			s.Count += p.Count
			s.Errors += p.Errors
			s.Retries += p.Retries
			if p.Count > 0 {
				s.Min, s.Max = math.Min(s.Min, p.Min), math.Max(s.Max, p.Max)
				w := float64(p.Count)
				s.P25, s.P50, s.P75, s.P90 = s.P25+w*p.P25, s.P50+w*p.P50, s.P75+w*p.P75, s.P90+w*p.P90
				s.P95, s.P99, s.P999, s.Mean = s.P95+w*p.P95, s.P99+w*p.P99, s.P999+w*p.P999, s.Mean+w*p.Mean
			}
		}
		if s.Count > 0 {
			w := float64(s.Count)
			s.P25, s.P50, s.P75, s.P90, s.P95, s.P99, s.P999, s.Mean = s.P25/w, s.P50/w, s.P75/w, s.P90/w, s.P95/w, s.P99/w, s.P999/w, s.Mean/w
		} else {
			s.Min = 0
		}
		if out.DurationSec > 0 {
			s.OpsPerSec = float64(s.Count) / out.DurationSec
		}
		out.Ops = append(out.Ops, s)
	}
	return out
}

// chartIntervals are the intervals to draw, merged into at most
// maxPoints buckets. The last interval is left out when its length is
// unlike the others': a short tail of the run (whose rates would plot as a
// misleading drop) or a load's long finishing work after the last batch
// (a band on the charts, not a line across it).
func chartIntervals(r *Results) []stats.Interval {
	ivs := r.Intervals
	if n := len(ivs); n > 1 {
		last, prev := ivs[n-1].DurationSec, ivs[n-2].DurationSec
		if last < 0.5*prev || last > 1.5*prev {
			ivs = ivs[:n-1]
		}
	}
	return groupIntervals(ivs, maxPoints)
}

// seconds returns the x values (seconds from the start of measurement,
// at the end of each interval) of intervals of r.
func seconds(r *Results, ivs []stats.Interval) []float64 {
	xs := make([]float64, len(ivs))
	if len(r.Intervals) == 0 {
		return xs
	}
	// Interval ends are durations from the start; older bundles do not
	// keep them, so count from the first interval's wall-clock time.
	t0 := r.Intervals[0].EndTime.Add(-secondsDur(r.Intervals[0].DurationSec))
	for i, iv := range ivs {
		xs[i] = iv.EndTime.Sub(t0).Seconds()
	}
	return xs
}

// runEnd is where a run's time axes end: the end of its last interval
// (seconds from the start of measurement), or of the whole load.
func runEnd(r *Results) float64 {
	end := 0.0
	if xs := seconds(r, r.Intervals); len(xs) > 0 {
		end = xs[len(xs)-1]
	}
	if r.Phase == "load" || end <= 0 {
		end = math.Max(end, r.ElapsedSec)
	}
	return end
}

// requestOpNames are the ops of r in op order, RANGE_SIZE left out.
func requestOpNames(r *Results) []string {
	seen := map[string]bool{}
	for _, o := range r.Ops {
		seen[o.Name] = true
	}
	for _, iv := range r.Intervals {
		for _, o := range iv.Ops {
			seen[o.Name] = true
		}
	}
	var out []string
	for op := graph.Op(0); op < graph.NumOps; op++ {
		if n := op.String(); seen[n] && op != graph.RangeSize {
			out = append(out, n)
		}
	}
	return out
}

// opSeries is one figure of op over the intervals: NaN where the op did
// not run (a gap in the line, not a drop to zero).
func opSeries(xs []float64, ivs []stats.Interval, op string, pick func(stats.OpSummary) (float64, bool)) ([]float64, []float64) {
	ys := make([]float64, len(ivs))
	for i, iv := range ivs {
		ys[i] = math.NaN()
		for _, o := range iv.Ops {
			if o.Name == op {
				if v, ok := pick(o); ok {
					ys[i] = v
				}
			}
		}
	}
	return xs, ys
}

// bands are the shaded windows of a run's time charts: the warm-up before
// measurement, the stages (of a staged open-loop run or of a load), the
// outages, and a load's finishing work.
func bands(r *Results, ivs []stats.Interval, xs []float64) []Band {
	var out []Band
	if r.WarmupSec > 0 {
		out = append(out, Band{From: -r.WarmupSec, To: 0, Label: "warm-up (not measured)", Kind: "warmup"})
	}
	out = append(out, stageBands(r)...)
	// Outages: intervals where most requests failed or none finished.
	inOutage := false
	for i, iv := range ivs {
		bad := (iv.Errors > 0 && iv.Errors >= iv.Count) || (iv.Count == 0 && iv.Errors == 0 && i > 0 && i < len(ivs)-1)
		from := xs[i] - iv.DurationSec
		switch {
		case bad && inOutage:
			out[len(out)-1].To = xs[i]
		case bad:
			out = append(out, Band{From: from, To: xs[i], Label: "outage", Kind: "outage"})
			inOutage = true
		default:
			inOutage = false
		}
	}
	return out
}

// stageBands are the named parts of a phase the results record: the
// stages of a staged open-loop run, or of a load (r.LoadStages: its
// inserts, as one band from the start to the last insert's end, and each
// step of the store's finishing work). This is the one place stages are
// read for charts.
func stageBands(r *Results) []Band {
	var out []Band
	add := func(from, to float64, label string) {
		kind := "stage"
		if len(out)%2 == 1 {
			kind = "stage-alt"
		}
		out = append(out, Band{From: from, To: to, Label: label, Kind: kind})
	}
	for _, st := range r.Stages {
		label := st.Name
		if st.OpsPerSec > 0 {
			label = fmt.Sprintf("%s (%s/s)", st.Name, fmtTick(math.Round(st.OpsPerSec)))
		}
		add(st.StartSec, st.EndSec, label)
	}
	var inserts []string
	insertEnd := 0.0
	for _, st := range r.LoadStages {
		if st.Kind == stats.StageInsert {
			inserts = append(inserts, st.Name)
			insertEnd = math.Max(insertEnd, st.EndSec)
		}
	}
	if len(inserts) > 0 {
		add(0, insertEnd, "insert "+strings.Join(inserts, ", "))
	}
	for _, st := range r.LoadStages {
		if st.Kind != stats.StageInsert {
			add(st.StartSec, st.EndSec, st.Name)
		}
	}
	return out
}

// loopLines mark the boundaries between loops.
func loopLines(r *Results) []VLine {
	var out []VLine
	for _, l := range r.Loops {
		if l.Loop > 1 {
			out = append(out, VLine{X: l.StartSec, Label: fmt.Sprintf("loop %d", l.Loop)})
		}
	}
	return out
}

// RequestCharts renders every chart of a request phase as HTML fragments.
func RequestCharts(r *Results) []string {
	ivs := chartIntervals(r)
	xs := seconds(r, ivs)
	bs, vl := bands(r, ivs, xs), loopLines(r)
	end := runEnd(r)
	thr := Series{Name: "all ops", X: xs, Color: allOpsColor}
	errs := Series{Name: "errors", X: xs, Color: "#c62828"}
	retries := Series{Name: "retries", X: xs, Color: "#d4a017"}
	var lat [3]Series
	for i, ps := range percentileStyles {
		lat[i] = Series{Name: "all ops " + ps.name, X: xs, Color: allOpsColor, Dash: ps.dash, Width: ps.width}
	}
	for _, iv := range ivs {
		thr.Y = append(thr.Y, iv.OpsPerSec)
		errs.Y = append(errs.Y, float64(iv.Errors))
		var rt int64
		for _, o := range iv.Ops {
			rt += o.Retries
		}
		retries.Y = append(retries.Y, float64(rt))
		q := MixtureQuantiles(iv.Ops, []float64{0.5, 0.99, 0.999})
		for i := range lat {
			lat[i].Y = append(lat[i].Y, q[i])
		}
	}
	out := []string{
		Chart{ID: "throughput", Title: "Throughput over time, all ops", XLabel: "time since measurement began (s)", YLabel: "requests/s",
			Series: []Series{thr}, Bands: bs, VLines: vl, XFrom0: true, XEnd: end}.SVG(),
		Chart{ID: "latency", Title: "Latency over time, all ops (estimated from the per-op percentiles of each interval)", XLabel: "time since measurement began (s)",
			YLabel: "latency (ms, log)", LogY: true, Series: lat[:], Bands: bs, VLines: vl, XFrom0: true, XEnd: end}.SVG(),
	}
	ops := requestOpNames(r)
	var tput, latency []Chart
	for _, op := range ops {
		x, y := opSeries(xs, ivs, op, func(o stats.OpSummary) (float64, bool) { return o.OpsPerSec, true })
		tput = append(tput, Chart{ID: "throughput-" + op, Title: op + " (ops/s)", TitleColor: OpColor(op),
			Series: []Series{{Op: op, X: x, Y: y}}, Bands: bs, VLines: vl, XFrom0: true, XEnd: end})
		var ss []Series
		for _, ps := range percentileStyles {
			pick := ps.pick
			x, y := opSeries(xs, ivs, op, func(o stats.OpSummary) (float64, bool) { return pick(o.Percentiles), o.Count > 0 })
			ss = append(ss, Series{Op: op, Dash: ps.dash, Width: ps.width, X: x, Y: y})
		}
		latency = append(latency, Chart{ID: "latency-" + op, Title: op + " (ms, log)", TitleColor: OpColor(op),
			LogY: true, Series: ss, Bands: bs, VLines: vl, XFrom0: true, XEnd: end})
	}
	out = append(out,
		Panels("throughput-per-op", "Throughput per op over time (x: seconds)", nil, tput),
		Panels("latency-per-op", "Latency per op over time (x: seconds)", percentileKey(), latency),
		Chart{ID: "distribution", Title: "Latency distribution per op (whole run)", XLabel: "percentile", YLabel: "latency (ms, log)", LogX: true, LogY: true,
			Series: curveSeries(r.Curves, "", "")}.SVG())
	var labels []string
	var counts []float64
	for _, o := range r.Ops {
		if o.Name != "RANGE_SIZE" {
			labels = append(labels, o.Name)
			counts = append(counts, float64(o.Count))
		}
	}
	out = append(out, BarChart("mix", "Operation mix", "requests", labels, counts, nil))
	out = append(out, Chart{ID: "errors", Title: "Errors and retries over time", XLabel: "time since measurement began (s)", YLabel: "per interval",
		Series: []Series{errs, retries}, Bands: bs, VLines: vl, XFrom0: true, XEnd: end}.SVG())
	return append(out, resourceCharts(r, bs, vl)...)
}

func percentileKey() []Series {
	var key []Series
	for _, ps := range percentileStyles {
		key = append(key, Series{Name: ps.name, Color: "#555555", Dash: ps.dash, Width: ps.width})
	}
	return key
}

// resourceCharts are the CPU and disk charts of the /proc samples.
func resourceCharts(r *Results, bs []Band, vl []VLine) []string {
	cpu := []Series{{Name: "driver CPU %", Color: "#1b9e77"}, {Name: "machine user %", Color: "#7570b3"}, {Name: "machine sys %", Color: "#e7298a"},
		{Name: "iowait %", Color: "#a6761d"}, {Name: "server CPU %", Color: "#0072b2"}}
	disk := []Series{{Name: "read KB/s", Color: "#0072b2"}, {Name: "write KB/s", Color: "#d55e00"}}
	if len(r.Resources) == 0 {
		return nil
	}
	// Samples are stamped with wall-clock time; measurement began one
	// sample period before the first.
	t0 := r.Resources[0].Time.Add(-secondsDur(1))
	if len(r.Intervals) > 0 {
		t0 = r.Intervals[0].EndTime.Add(-secondsDur(r.Intervals[0].DurationSec))
	}
	server := false
	for _, s := range r.Resources {
		x := s.Time.Sub(t0).Seconds()
		for j, v := range []float64{s.DriverCPUPct, s.UserPct, s.SysPct, s.IOWaitPct, s.ServerCPUPct} {
			cpu[j].X, cpu[j].Y = append(cpu[j].X, x), append(cpu[j].Y, v)
		}
		server = server || s.ServerCPUPct > 0
		disk[0].X, disk[0].Y = append(disk[0].X, x), append(disk[0].Y, s.ReadKBPerSec)
		disk[1].X, disk[1].Y = append(disk[1].X, x), append(disk[1].Y, s.WriteKBPerSec)
	}
	if !server {
		cpu = cpu[:4]
	}
	return []string{
		Chart{ID: "cpu", Title: "CPU use over time", XLabel: "time since measurement began (s)", YLabel: "percent", Series: cpu, Bands: bs, VLines: vl, XFrom0: true, XEnd: runEnd(r)}.SVG(),
		Chart{ID: "disk", Title: "Disk I/O over time", XLabel: "time since measurement began (s)", YLabel: "KB/s", Series: disk, Bands: bs, VLines: vl, XFrom0: true, XEnd: runEnd(r)}.SVG(),
	}
}

// LoadCharts renders the charts of a load: rows per second (from the
// recorded progress; batches per second for bundles without it), the bulk
// calls' latency, and resource use, every time chart banded by the load's
// stages and ending where the load ended.
func LoadCharts(r *Results) []string {
	ivs := chartIntervals(r)
	xs := seconds(r, ivs)
	bs := stageBands(r)
	end := runEnd(r)
	var rates []Series
	links, nodes, finish := loadRates(r)
	if len(links.X) > 0 {
		rates = []Series{links, nodes}
	} else {
		thr := Series{Name: "bulk calls/s", X: xs, Color: allOpsColor}
		for _, iv := range ivs {
			thr.Y = append(thr.Y, iv.OpsPerSec)
		}
		rates = []Series{thr}
	}
	if finish != nil && len(r.LoadStages) == 0 {
		bs = append(bs, *finish)
	}
	unit := "rows/s"
	if len(r.LoadProgress) <= 1 {
		unit = "bulk calls/s"
	}
	out := []string{Chart{ID: "throughput", Title: "Load rate over time", XLabel: "time since the load began (s)", YLabel: unit,
		Series: rates, Bands: bs, XFrom0: true, XEnd: end}.SVG()}
	var latency []Chart
	for _, op := range requestOpNames(r) {
		var ss []Series
		for _, ps := range percentileStyles {
			pick := ps.pick
			x, y := opSeries(xs, ivs, op, func(o stats.OpSummary) (float64, bool) { return pick(o.Percentiles), o.Count > 0 })
			ss = append(ss, Series{Op: op, Dash: ps.dash, Width: ps.width, X: x, Y: y})
		}
		latency = append(latency, Chart{ID: "latency-" + op, Title: op + " (ms per call, log)", TitleColor: OpColor(op), LogY: true, Series: ss, Bands: bs, XFrom0: true, XEnd: end})
	}
	out = append(out, Panels("latency-per-op", "Bulk call latency over time (x: seconds)", percentileKey(), latency),
		Chart{ID: "distribution", Title: "Bulk call latency distribution", XLabel: "percentile", YLabel: "latency (ms, log)", LogX: true, LogY: true,
			Series: curveSeries(r.Curves, "", "")}.SVG())
	return append(out, resourceCharts(r, bs, nil)...)
}

// loadRates are a load's links/s and nodes/s over time from its recorded
// progress (empty for bundles without it), up to the end of its inserts:
// the store's finishing work (index builds, statistics, flushes) inserts
// nothing, and is a band on the charts, not a rate of 0. For bundles
// without recorded stages, the finishing work is told by the long gap
// before the last progress call, and returned as a band.
func loadRates(r *Results) (links, nodes Series, finish *Band) {
	links = Series{Name: "links/s", Op: graph.LoadLinksBulk.String()}
	nodes = Series{Name: "nodes/s", Op: graph.LoadNodesBulk.String()}
	pts := r.LoadProgress
	if len(pts) < 2 {
		return links, nodes, nil
	}
	if n := len(pts); n > 2 && pts[n-1].Sec-pts[n-2].Sec > 1.5 {
		finish = &Band{From: pts[n-2].Sec, To: pts[n-1].Sec, Label: "finishing (indexes, flush)", Kind: "finish"}
		pts = pts[:n-1]
	}
	insertEnd := r.Totals.InsertSec
	for i := 1; i < len(pts); i++ {
		d := pts[i].Sec - pts[i-1].Sec
		if d <= 0 {
			continue
		}
		if insertEnd > 0 && pts[i-1].Sec >= insertEnd {
			break
		}
		links.X, links.Y = append(links.X, pts[i].Sec), append(links.Y, float64(pts[i].Links-pts[i-1].Links)/d)
		nodes.X, nodes.Y = append(nodes.X, pts[i].Sec), append(nodes.Y, float64(pts[i].Nodes-pts[i-1].Nodes)/d)
	}
	return links, nodes, finish
}

// curveSeries are the latency percentile curves of a run, in op order,
// named prefix+op, in the op colours (dashed by dash for a comparison).
func curveSeries(curves map[string][][2]float64, prefix, dash string) []Series {
	names := make([]string, 0, len(curves))
	for n := range curves {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := graph.ParseOp(names[i])
		b, _ := graph.ParseOp(names[j])
		return a < b
	})
	var out []Series
	for _, n := range names {
		s := Series{Name: prefix + n, Op: n, Dash: dash}
		for _, pt := range curves[n] {
			s.X = append(s.X, pt[0])
			s.Y = append(s.Y, pt[1])
		}
		out = append(out, s)
	}
	return out
}

// LoopCharts draws the loops of a looped run: throughput and the p99 of
// the summary line's four requests per loop.
func LoopCharts(r *Results) []string {
	if len(r.SummaryLines) < 2 {
		return nil
	}
	tps := Series{Name: "requests/s", Color: allOpsColor, Markers: true}
	p99 := make([]Series, len(SummaryOps))
	for i, so := range SummaryOps {
		p99[i] = Series{Name: so.Op.String() + " p99", Op: so.Op.String(), Markers: true}
	}
	// The axis runs from loop 1 to the last (to loop 3 at least, for
	// three labelled ticks).
	last := 3.0
	for _, l := range r.SummaryLines {
		x := float64(l.Loop)
		last = math.Max(last, x)
		tps.X, tps.Y = append(tps.X, x), append(tps.Y, l.Rate)
		for i, v := range l.P99Ms {
			y := math.NaN()
			if v != nil {
				y = *v
			}
			p99[i].X, p99[i].Y = append(p99[i].X, x), append(p99[i].Y, y)
		}
	}
	return []string{
		Chart{ID: "loops-throughput", Title: "Throughput per loop", XLabel: "loop", YLabel: "requests/s", Series: []Series{tps}, IntX: true, XStart: 1, XEnd: last}.SVG(),
		Chart{ID: "loops-p99", Title: "p99 latency per loop", XLabel: "loop", YLabel: "p99 (ms, log)", LogY: true, Series: p99, IntX: true, XStart: 1, XEnd: last}.SVG(),
	}
}

func secondsDur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
