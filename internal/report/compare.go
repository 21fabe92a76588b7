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

// Delta is one figure of a side compared with the same figure of the base
// side: the values (each side's mean over its runs), the relative change,
// and the noise the change is judged against.
type Delta struct {
	Metric string
	// Op is the op the figure belongs to ("" for run-wide figures).
	Op            string
	Unit          string
	LowerIsBetter bool
	Base, Value   float64
	Change        float64
	// Noise is the 95% interval of the change under the runs' own noise,
	// second to second (a block bootstrap of each run's intervals).
	Noise Interval95
	// Drift, with one run per side, is how far the figure of any tenth of
	// either run strays from its whole run, as |log(part/whole)| (NaN
	// when unknown): a stand-in for the difference between runs, which one
	// run per side cannot measure.
	Drift float64
	// Between, with two or more runs on a side, is the 95% interval of the
	// change from the spread between runs, on DF degrees of freedom, and P
	// the two-sided p-value of the change (NaN without runs enough).
	Between Interval95
	DF      int
	P       float64
	// Among is how many figures of the comparison were tested, and
	// significant whether this one is among those called significant.
	Among       int
	significant bool
}

// NoiseWidth is the relative change the figure's noise allows either way:
// with runs enough, the larger of the spread between runs and the
// within-run noise; with one run per side, the larger of the within-run
// interval and the drift of either run (NaN when unknown).
func (d Delta) NoiseWidth() float64 {
	w := math.NaN()
	if d.Noise.Known {
		w = d.Noise.HalfWidth()
	}
	if d.Between.Known {
		return math.Max(d.Between.HalfWidth(), nanTo0(w))
	}
	if math.IsNaN(w) || math.IsNaN(d.Drift) {
		return math.NaN()
	}
	return math.Max(w, math.Expm1(d.Drift))
}

func nanTo0(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// Beyond reports a change that exceeds the noise known: its interval
// excludes 0 and the whole change lies outside the noise width.
func (d Delta) Beyond() bool {
	if d.Between.Known {
		return d.Between.Significant() && math.Abs(d.Change) > d.NoiseWidth()
	}
	return d.Noise.Significant() && math.Abs(d.Change) > d.NoiseWidth()
}

// Significant reports a change beyond the spread between runs that
// survives the Benjamini-Hochberg procedure at 5% over the comparison's
// figures (one in twenty figures is beyond its 95% interval by chance).
// With one run per side nothing is significant: what differs between
// runs (run order, database growth, checkpoints, the machine's other
// load) is not measured, and identical runs differ by it beyond their
// noise within.
func (d Delta) Significant() bool { return d.significant }

// Verdict is the word for the change: significantly better or worse,
// beyond the noise within runs (one run per side), within noise, or
// unknown noise.
func (d Delta) Verdict() string {
	dir := "worse"
	if (d.Change < 0) == d.LowerIsBetter {
		dir = "better"
	}
	switch {
	case math.IsNaN(d.NoiseWidth()):
		return "noise unknown"
	case !d.Beyond():
		return "within noise"
	case d.Significant():
		return "SIGNIFICANT, " + dir
	case d.Between.Known:
		return fmt.Sprintf("beyond noise, chance among %d figures", d.Among)
	}
	return "beyond within-run noise, " + dir
}

// Comparison is one side set against the base side.
type Comparison struct {
	Base, Run string // side labels (A, B, ...)
	// BaseRuns and RunRuns count the runs of each side.
	BaseRuns, RunRuns int
	Deltas            []Delta
}

// BetweenRuns reports whether the comparison measures the spread between
// runs (a side has two runs or more); otherwise only within-run noise is
// known.
func (c Comparison) BetweenRuns() bool { return c.BaseRuns+c.RunRuns > 2 }

// Side is one side of a comparison: one run, or several runs of one
// configuration, whose spread measures how much runs differ.
type Side struct {
	// Name is what named the side: a bundle, or a directory of bundles.
	Name string
	Runs []*Results
	// RunNames are the runs' bundle names.
	RunNames []string
}

// SidesOf makes every run a side of its own.
func SidesOf(runs []*Results, names []string) []Side {
	out := make([]Side, len(runs))
	for i, r := range runs {
		out[i] = Side{Name: names[i], Runs: []*Results{r}, RunNames: []string{names[i]}}
	}
	return out
}

// runsOf lists the runs of every side, in order, with their labels: the
// side's label for a side of one run (A), numbered for several (B1, B2).
func runsOf(sides []Side) (runs []*Results, labels, names []string) {
	for i, s := range sides {
		for j, r := range s.Runs {
			label := RunLabel(i)
			if len(s.Runs) > 1 {
				label += fmt.Sprint(j + 1)
			}
			runs, labels, names = append(runs, r), append(labels, label), append(names, s.RunNames[j])
		}
	}
	return runs, labels, names
}

// metric is a compared figure: how to read it from a run, whole and per
// interval.
type metric struct {
	name, op, unit string
	lowerIsBetter  bool
	whole          func(r *Results) (float64, bool)
	series         func(r *Results) ratioSeries
}

// RunLabel is the short label of the i-th side of a comparison: A, B, ...
func RunLabel(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("R%d", i+1)
}

// Compare sets every run against the first, each run a side of its own.
func Compare(runs []*Results) []Comparison {
	return CompareSides(SidesOf(runs, make([]string, len(runs))))
}

// CompareSides sets every side against the first.
func CompareSides(sides []Side) []Comparison {
	var out []Comparison
	base := sides[0]
	for i := 1; i < len(sides); i++ {
		side := sides[i]
		c := Comparison{Base: RunLabel(0), Run: RunLabel(i), BaseRuns: len(base.Runs), RunRuns: len(side.Runs)}
		for _, m := range metrics(base.Runs[0], side.Runs[0]) {
			va, okA := wholes(m, base.Runs, false)
			vb, okB := wholes(m, side.Runs, true)
			if !okA || !okB {
				continue
			}
			a, b := mean(va), mean(vb)
			d := Delta{Metric: m.name, Op: m.op, Unit: m.unit, LowerIsBetter: m.lowerIsBetter, Base: a, Value: b, Change: b/a - 1, Drift: math.NaN(), P: math.NaN()}
			sa, sb := seriesOf(m, base.Runs), seriesOf(m, side.Runs)
			d.Noise = sidesInterval(sa, sb, m.name, 0)
			if c.BetweenRuns() {
				var se float64
				d.Between, d.DF, se = betweenRuns(va, vb)
				if d.Between.Known {
					d.P = studentP(math.Log1p(d.Change)/math.Max(se, withinSE(d.Noise)), d.DF)
				}
			} else {
				d.Drift = math.Max(sa[0].drift(), sb[0].drift())
			}
			c.Deltas = append(c.Deltas, d)
		}
		ps := make([]float64, len(c.Deltas))
		for j, d := range c.Deltas {
			ps[j] = d.P
		}
		tested := 0
		for _, p := range ps {
			if !math.IsNaN(p) {
				tested++
			}
		}
		for j, sig := range falseDiscoveries(ps, 0.05) {
			c.Deltas[j].Among = tested
			c.Deltas[j].significant = sig && c.Deltas[j].Beyond()
		}
		out = append(out, c)
	}
	return out
}

// withinSE is the standard error of the logarithm of the change that a
// within-run interval stands for (0 when unknown): the spread between
// runs is never taken as smaller than the runs' own noise.
func withinSE(iv Interval95) float64 {
	if !iv.Known || iv.Lo <= -1 {
		return 0
	}
	return (math.Log1p(iv.Hi) - math.Log1p(iv.Lo)) / (2 * 1.96)
}

// wholes are the whole-run figures of m of every run; false when a run
// lacks it, or has it at 0 unless zero is allowed (no relative change is
// measured from 0).
func wholes(m metric, runs []*Results, zero bool) ([]float64, bool) {
	out := make([]float64, len(runs))
	for i, r := range runs {
		v, ok := m.whole(r)
		if !ok || v < 0 || (v == 0 && !zero) {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

func seriesOf(m metric, runs []*Results) []ratioSeries {
	out := make([]ratioSeries, len(runs))
	for i, r := range runs {
		out[i] = m.series(r)
	}
	return out
}

// opOf finds op in a list of summaries.
func opOf(ops []stats.OpSummary, name string) (stats.OpSummary, bool) {
	for _, o := range ops {
		if o.Name == name {
			return o, true
		}
	}
	return stats.OpSummary{}, false
}

// metrics lists the figures both runs have: throughput, all ops' and each
// op's p50, p99 and p99.9, CPU and disk I/O per request.
func metrics(a, b *Results) []metric {
	unit := "requests/s"
	perOp := "request"
	if a.Phase == "load" {
		unit, perOp = "links/s", "link"
	}
	ms := []metric{{name: "throughput", unit: unit,
		whole: func(r *Results) (float64, bool) {
			if r.Phase == "load" {
				return r.Totals.LinksPerSec, true
			}
			return r.Totals.OpsPerSec, true
		},
		series: rateSeries}}
	if a.AllOps != nil && b.AllOps != nil {
		for _, ps := range percentileStyles {
			pick, q := ps.pick, ps.q
			ms = append(ms, metric{name: "all ops " + ps.name, unit: "ms", lowerIsBetter: true,
				whole: func(r *Results) (float64, bool) {
					if r.AllOps == nil {
						return 0, false
					}
					return pick(r.AllOps.Percentiles), true
				},
				series: func(r *Results) ratioSeries {
					var s ratioSeries
					for _, iv := range groupIntervals(r.Intervals, maxBootstrapPoints) {
						if v := MixtureQuantiles(iv.Ops, []float64{q})[0]; !math.IsNaN(v) {
							s = s.add(v*float64(iv.Count), float64(iv.Count))
						}
					}
					return s
				}})
		}
	}
	for _, o := range a.Ops {
		if o.Name == "RANGE_SIZE" || o.Count == 0 {
			continue
		}
		if ob, ok := opOf(b.Ops, o.Name); !ok || ob.Count == 0 {
			continue
		}
		for _, ps := range percentileStyles {
			name, pick := o.Name, ps.pick
			ms = append(ms, metric{name: name + " " + ps.name, op: name, unit: "ms", lowerIsBetter: true,
				whole: func(r *Results) (float64, bool) {
					s, ok := opOf(r.Ops, name)
					return pick(s.Percentiles), ok && s.Count > 0
				},
				series: func(r *Results) ratioSeries {
					var s ratioSeries
					for _, iv := range r.Intervals {
						if x, ok := opOf(iv.Ops, name); ok && x.Count > 0 {
							s = s.add(pick(x.Percentiles)*float64(x.Count), float64(x.Count))
						}
					}
					return s
				}})
		}
	}
	if a.Efficiency == nil || b.Efficiency == nil {
		return ms
	}
	type res struct {
		name, unit string
		per        func(r *Results) float64
		amount     func(i int, r *Results, secs float64) float64
	}
	cpu := func(pct float64, secs float64) float64 { return pct / 100 * secs * 1e6 }
	list := []res{
		{"driver CPU", "µs/" + perOp, func(r *Results) float64 { return r.Efficiency.DriverCPUUs },
			func(i int, r *Results, d float64) float64 { return cpu(r.Resources[i].DriverCPUPct, d) }},
		{"machine CPU", "µs/" + perOp, func(r *Results) float64 { return r.Efficiency.MachineCPUUs },
			func(i int, r *Results, d float64) float64 {
				return cpu((r.Resources[i].UserPct+r.Resources[i].SysPct)*float64(max(r.Environment.CPUs, 1)), d)
			}},
		{"server CPU", "µs/" + perOp, func(r *Results) float64 { return r.Efficiency.ServerCPUUs },
			func(i int, r *Results, d float64) float64 { return cpu(r.Resources[i].ServerCPUPct, d) }},
		{"disk reads", "per " + perOp, func(r *Results) float64 { return r.Efficiency.Reads },
			func(i int, r *Results, d float64) float64 { return r.Resources[i].ReadsPerSec * d }},
		{"KB read", "per " + perOp, func(r *Results) float64 { return r.Efficiency.ReadKB },
			func(i int, r *Results, d float64) float64 { return r.Resources[i].ReadKBPerSec * d }},
		{"KB written", "per " + perOp, func(r *Results) float64 { return r.Efficiency.WriteKB },
			func(i int, r *Results, d float64) float64 { return r.Resources[i].WriteKBPerSec * d }},
	}
	for _, x := range list {
		x := x
		if x.per(a) <= 0 || x.per(b) <= 0 {
			continue
		}
		ms = append(ms, metric{name: x.name, unit: x.unit, lowerIsBetter: true,
			whole: func(r *Results) (float64, bool) {
				if r.Efficiency == nil {
					return 0, false
				}
				return x.per(r), true
			},
			series: func(r *Results) ratioSeries {
				var s ratioSeries
				for i := range r.Resources {
					d := 1.0
					if i > 0 {
						d = r.Resources[i].Time.Sub(r.Resources[i-1].Time).Seconds()
					}
					if rate, ok := rateAt(r, r.Resources[i].Time); ok && d > 0 {
						s = s.add(x.amount(i, r, d), rate*d)
					}
				}
				return s
			}})
	}
	return ms
}

// rateSeries is the throughput of a run per interval: requests and
// seconds (links and seconds of a load with recorded progress).
func rateSeries(r *Results) ratioSeries {
	var s ratioSeries
	if r.Phase == "load" && len(r.LoadProgress) > 1 {
		for i := 1; i < len(r.LoadProgress); i++ {
			p, q := r.LoadProgress[i-1], r.LoadProgress[i]
			if r.Totals.InsertSec > 0 && p.Sec >= r.Totals.InsertSec {
				break // the store's finishing work inserts no links
			}
			if d := q.Sec - p.Sec; d > 0 && d < 1.5 {
				s = s.add(float64(q.Links-p.Links), d)
			}
		}
		return s
	}
	for _, iv := range r.Intervals {
		if iv.DurationSec > 0 {
			s = s.add(float64(iv.Count), iv.DurationSec)
		}
	}
	return s
}

// rateAt is the throughput of the interval that holds wall-clock time t.
func rateAt(r *Results, t time.Time) (float64, bool) {
	if r.Phase == "load" {
		sec := t.Sub(r.StartedAt).Seconds()
		for i := 1; i < len(r.LoadProgress); i++ {
			p, q := r.LoadProgress[i-1], r.LoadProgress[i]
			if sec > p.Sec && sec <= q.Sec && q.Sec > p.Sec {
				return float64(q.Links-p.Links) / (q.Sec - p.Sec), true
			}
		}
		return 0, false
	}
	i := sort.Search(len(r.Intervals), func(i int) bool { return !r.Intervals[i].EndTime.Before(t) })
	if i == len(r.Intervals) {
		return 0, false
	}
	iv := r.Intervals[i]
	if t.Before(iv.EndTime.Add(-secondsDur(iv.DurationSec + 0.5))) {
		return 0, false
	}
	return iv.OpsPerSec, true
}

// SettingDiff is a setting or fact that differs between the runs.
type SettingDiff struct {
	Key    string
	Values []string
	// Warning says why the difference makes the runs' figures incomparable
	// ("" for differences that are what an A/B test varies).
	Warning string
}

// linkWritesDiffer says why runs whose link writes reached the server
// differently (link_writes) measure different workloads.
const linkWritesDiffer = "the server was sent different link writes (the reference's statements, or one call of a routine): different workloads"

// incomparable are the config keys whose difference changes the workload
// itself, with what it changes.
func incomparableKey(key string) string {
	switch key {
	case "maxid1", "startid1", "nlinks_func", "nlinks_config", "nlinks_default", "link_type_count", "randomid2max", "id2gen_config":
		return "the graphs differ"
	case "link_datasize", "node_datasize":
		return "the payload sizes differ"
	case "requesters", "requestrate", "arrival_rate", "arrival_dist", "stages", "ramp_time":
		return "the offered load differs"
	case "maxtime", "warmup_time", "loops", "requests":
		return "the measured durations differ"
	case "store", "linkstore", "nodestore":
		return "the stores differ"
	case "link_writes":
		return linkWritesDiffer
	case "workload_file", "data_file", "getlinklist_history", "read_uncorr_blend", "write_uncorr_blend":
		return "the request mix or its ids differ"
	}
	for _, k := range graph.MixKeys {
		if key == k {
			return "the request mix differs"
		}
	}
	for _, p := range []string{"read_", "write_", "node_read_", "node_update_", "node_delete_", "link_multiget"} {
		if strings.HasPrefix(key, p) {
			return "the id or multiget distributions differ"
		}
	}
	return ""
}

// DiffSettings lists the config keys, store settings and environment
// facts that differ between the runs, each with a warning when the
// difference makes the figures incomparable.
func DiffSettings(runs []*Results) []SettingDiff {
	var out []SettingDiff
	add := func(key, warning string, vals []string) {
		for _, v := range vals[1:] {
			if v != vals[0] {
				out = append(out, SettingDiff{Key: key, Values: vals, Warning: warning})
				return
			}
		}
	}
	each := func(f func(r *Results) string) []string {
		vals := make([]string, len(runs))
		for i, r := range runs {
			vals[i] = f(r)
		}
		return vals
	}
	add("phase", "a load and a request phase measure different things", each(func(r *Results) string { return r.Phase }))
	add("store", "the stores differ", each(func(r *Results) string { return r.Store }))
	// The measured durations, when they differ by more than a fifth.
	secs := each(func(r *Results) string { return fmt.Sprintf("%.0f s", r.ElapsedSec) })
	lo, hi := math.Inf(1), 0.0
	for _, r := range runs {
		lo, hi = math.Min(lo, r.ElapsedSec), math.Max(hi, r.ElapsedSec)
	}
	if lo > 0 && hi/lo > 1.2 {
		add("measured duration", "the measured durations differ: caches, compaction and database growth differ with time", secs)
	}
	keys := map[string]bool{}
	for _, r := range runs {
		for _, c := range r.Config {
			keys[c.Key] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if k == "store" {
			continue
		}
		vals := each(func(r *Results) string {
			for _, c := range r.Config {
				if c.Key == k {
					return c.Value
				}
			}
			return "(unset)"
		})
		add(k, incomparableKey(k), vals)
	}
	add("host", "the runs ran on different machines", each(func(r *Results) string { return r.Environment.Hostname }))
	add("CPUs", "the machines differ", each(func(r *Results) string { return fmt.Sprint(r.Environment.CPUs) }))
	add("OS/arch", "the machines differ", each(func(r *Results) string { return r.Environment.OS + "/" + r.Environment.Arch }))
	add("store version", "", each(func(r *Results) string { return r.StoreVersion }))
	add("linkbench version", "", each(func(r *Results) string { return r.ToolVersion }))
	settings := map[string]bool{}
	for _, r := range runs {
		for k := range r.StoreSettings {
			settings[k] = true
		}
	}
	var sk []string
	for k := range settings {
		sk = append(sk, k)
	}
	sort.Strings(sk)
	for _, k := range sk {
		warning := ""
		if k == "link_writes" {
			warning = linkWritesDiffer
		}
		add("store: "+k, warning, each(func(r *Results) string { return r.StoreSettings[k] }))
	}
	return out
}

// groupIntervals merges consecutive intervals into at most n (the
// estimate of an all-ops percentile per interval is costly on a day's
// 86,400 seconds; the bootstrap groups them anyway).
func groupIntervals(ivs []stats.Interval, n int) []stats.Interval {
	if len(ivs) <= n {
		return ivs
	}
	per := (len(ivs) + n - 1) / n
	var out []stats.Interval
	for i := 0; i < len(ivs); i += per {
		out = append(out, mergeIntervals(ivs[i:min(i+per, len(ivs))]))
	}
	return out
}
