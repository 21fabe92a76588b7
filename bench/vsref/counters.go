package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// readCounters runs command with sh and reads its output: a counter per
// line, its name first and its value last. Lines whose last field is not
// a number (headers, text variables) are skipped.
func readCounters(command string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	c := exec.CommandContext(ctx, "sh", "-c", command)
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", command, err, strings.TrimSpace(errOut.String()))
	}
	return parseCounters(&out)
}

func parseCounters(r io.Reader) (map[string]float64, error) {
	m := map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			continue
		}
		m[strings.Join(f[:len(f)-1], " ")] = v
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("no counters in the output")
	}
	return m, sc.Err()
}

// counterDeltas is each counter's change from a to b divided by requests;
// counters that did not change are left out.
func counterDeltas(a, b map[string]float64, requests float64) map[string]float64 {
	d := map[string]float64{}
	for k, vb := range b {
		if va, ok := a[k]; ok && vb != va {
			d[k] = (vb - va) / requests
		}
	}
	return d
}

// counterDiff prints, per requester count, the median per request of
// each server counter for both drivers, the counters whose values differ
// most first; counters below min per request for both are left out, and
// so are runs without counters (a phase shorter than the server's window,
// or a run recorded before vsref perf took them).
func counterDiff(w io.Writer, paths []string, n int, minPerReq float64) error {
	type key struct {
		driver string
		n      int
	}
	runs := map[key][]Perf{}
	var ns []int
	for _, p := range paths {
		r, err := readPerf(p)
		if err != nil {
			return err
		}
		if r.ServerCounters == nil {
			continue
		}
		k := key{r.Label, r.Requesters}
		runs[k] = append(runs[k], r)
		if !slices.Contains(ns, r.Requesters) {
			ns = append(ns, r.Requesters)
		}
	}
	slices.Sort(ns)
	if len(ns) == 0 {
		fmt.Fprintf(w, "\nno server counters in these runs (vsref perf -counters records them)\n")
		return nil
	}
	med := func(rs []Perf, name string) float64 {
		v := make([]float64, 0, len(rs))
		for _, r := range rs {
			v = append(v, r.ServerCounters[name])
		}
		return median(v)
	}
	for _, rq := range ns {
		a, b := runs[key{"reference", rq}], runs[key{"linkbench", rq}]
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		type row struct {
			name string
			a, b float64
		}
		var rows []row
		seen := map[string]bool{}
		for _, r := range append(slices.Clone(a), b...) {
			for name := range r.ServerCounters {
				if seen[name] {
					continue
				}
				seen[name] = true
				x := row{name, med(a, name), med(b, name)}
				if math.Max(math.Abs(x.a), math.Abs(x.b)) >= minPerReq {
					rows = append(rows, x)
				}
			}
		}
		// The largest relative difference first (a counter one driver
		// never moved counts as infinitely different).
		rel := func(x row) float64 {
			lo, hi := math.Min(math.Abs(x.a), math.Abs(x.b)), math.Max(math.Abs(x.a), math.Abs(x.b))
			if lo == 0 {
				return math.Inf(1)
			}
			return hi / lo
		}
		slices.SortFunc(rows, func(x, y row) int {
			return cmp.Or(cmp.Compare(rel(y), rel(x)), cmp.Compare(x.name, y.name))
		})
		fmt.Fprintf(w, "\n%d requesters: server counters per request, medians of %d and %d runs\n%14s %14s %8s  %s\n",
			rq, len(a), len(b), a[0].Label, b[0].Label, "ratio", "counter")
		for _, x := range rows[:min(n, len(rows))] {
			ratio := "-"
			if x.a != 0 {
				ratio = fmt.Sprintf("%.2f", x.b/x.a)
			}
			fmt.Fprintf(w, "%14.4g %14.4g %8s  %s\n", x.a, x.b, ratio, x.name)
		}
	}
	return nil
}
