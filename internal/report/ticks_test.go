package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkAxis asserts what every axis owes its reader: at least minTicks
// ticks, ascending, spanning a range that covers the data.
func checkAxis(t *testing.T, what string, lo, hi float64, ticks []float64, from, to float64) {
	t.Helper()
	if len(ticks) < minTicks {
		t.Fatalf("%s [%g, %g]: %d ticks %v", what, lo, hi, len(ticks), ticks)
	}
	for i := 1; i < len(ticks); i++ {
		if !(ticks[i] > ticks[i-1]) {
			t.Fatalf("%s [%g, %g]: ticks not ascending %v", what, lo, hi, ticks)
		}
	}
	if from > lo*(1+1e-9)+1e-12 && from > lo || to < hi*(1-1e-9)-1e-12 && to < hi {
		t.Fatalf("%s [%g, %g]: range [%g, %g] does not cover the data", what, lo, hi, from, to)
	}
	if math.Abs(ticks[0]-from) > 1e-9*math.Max(1, math.Abs(from)) || math.Abs(ticks[len(ticks)-1]-to) > 1e-9*math.Max(1, math.Abs(to)) {
		t.Fatalf("%s [%g, %g]: range [%g, %g] does not end on ticks %v", what, lo, hi, from, to, ticks)
	}
}

// TestEveryAxisHasThreeTicks over 20,000 random ranges from 1 ns to 10^9,
// narrow (a single value) to 14 decades wide.
func TestEveryAxisHasThreeTicks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 20000; i++ {
		lo := math.Pow(10, rng.Float64()*15-6)
		hi := lo * math.Pow(10, rng.Float64()*rng.Float64()*14)
		if i%7 == 0 {
			hi = lo
		}
		for _, most := range []int{6, 9} {
			ticks, from, to := logAxis(lo, hi, most)
			checkAxis(t, "log", lo, hi, ticks, from, to)
			if len(ticks) > max(most, 9) {
				t.Fatalf("log [%g, %g]: %d ticks", lo, hi, len(ticks))
			}
		}
		ticks, from, to := linearAxis(0, hi, false)
		checkAxis(t, "linear", 0, hi, ticks, from, to)
		ticks, from, to = linearAxis(lo, hi, false)
		checkAxis(t, "linear", lo, hi, ticks, from, to)
		if len(ticks) > 12 {
			t.Fatalf("linear [%g, %g]: %d ticks", lo, hi, len(ticks))
		}
	}
	// Exact axes (a run's time, loops): the range is the one asked for,
	// with minTicks ticks or more inside it.
	for i := 0; i < 20000; i++ {
		lo := -rng.Float64() * 100 * float64(i%2)
		hi := math.Pow(10, rng.Float64()*7-2)
		whole := i%3 == 0
		if whole {
			lo, hi = 1, float64(3+rng.IntN(200))
		}
		ticks, from, to := exactAxis(lo, hi, whole)
		if from != lo || to != hi || len(ticks) < minTicks || len(ticks) > 12 || ticks[0] < lo || ticks[len(ticks)-1] > hi*(1+1e-9) {
			t.Fatalf("exact [%g, %g] (whole %v): ticks %v over [%g, %g]", lo, hi, whole, ticks, from, to)
		}
		if whole && ticks[0] != 1 {
			t.Fatalf("loops 1 to %g: ticks %v", hi, ticks)
		}
	}
	for _, c := range [][2]float64{{0, 0}, {-5, -5}, {-3, 7}, {1, 3}, {0, 2}} {
		ticks, from, to := linearAxis(c[0], c[1], true)
		checkAxis(t, "whole", c[0], c[1], ticks, from, to)
		for _, v := range ticks {
			if v != math.Round(v) {
				t.Fatalf("whole axis %v has %v", c, ticks)
			}
		}
	}
	for _, hi := range []float64{0, 50, 90, 99.5, 99.99, 100} {
		ticks, _, to := percentileAxis(hi)
		if len(ticks) < minTicks || percentileX(math.Min(hi, 99.9999)) > to+1e-12 {
			t.Fatalf("percentile axis to %v: %v (to %v)", hi, ticks, to)
		}
	}
}

func TestTickLabels(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.6000000000000001: "0.6", 0.001: "0.001", 2.5: "2.5", 1500: "1500",
		25000: "25k", 2.5e6: "2.5M", 1e-6: "0.000001", -3: "-3"} {
		if got := fmtTick(v); got != want {
			t.Errorf("fmtTick(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestLegendWrapsInsteadOfCutting: twenty long names wrap into rows that
// stay inside the chart (by the layout's own conservative text widths;
// the browser test measures the real ones).
func TestLegendWrapsInsteadOfCutting(t *testing.T) {
	var ss []Series
	for i := 0; i < 20; i++ {
		ss = append(ss, Series{Name: strings.Repeat("20261123-161333-request ", 1) + string(rune('A'+i)), X: []float64{0, 1}, Y: []float64{1, 2}})
	}
	for _, g := range []geometry{fullGeom, panelGeom} {
		items, h := layoutLegend(ss, g, 100)
		rows := map[float64]bool{}
		for _, it := range items {
			rows[it.y] = true
			if right := it.x + 22 + textWidth(it.s.Name, g.font); right > float64(g.w-g.padR)+1e-9 {
				t.Fatalf("legend %q ends at %.0f, past %d", it.s.Name, right, g.w-g.padR)
			}
		}
		if len(items) != 20 || len(rows) < 2 || h < float64(len(rows))*g.font {
			t.Fatalf("%d items in %d rows, height %.0f", len(items), len(rows), h)
		}
	}
}

// TestXTicksNeverOverlap: thinned labels keep a gap and the last tick.
func TestXTicksNeverOverlap(t *testing.T) {
	g := panelGeom
	ticks, from, to := percentileAxis(100)
	px := func(p float64) float64 {
		return float64(g.padL) + (percentileX(p)-from)/(to-from)*float64(g.w-g.padL-g.padR)
	}
	placed := xTickLabels(ticks, px, true, g)
	if len(placed) < minTicks || placed[len(placed)-1].label != fmtPercentile(ticks[len(ticks)-1]) {
		t.Fatalf("placed %+v", placed)
	}
	for i, p := range placed {
		w := textWidth(p.label, g.font)
		l, r := p.textX-w/2, p.textX+w/2
		if p.anchor == "end" {
			l, r = p.textX-w, p.textX
		}
		if l < 0 || r > float64(g.w) {
			t.Fatalf("label %q at [%.0f, %.0f] leaves the chart", p.label, l, r)
		}
		if i > 0 {
			q := placed[i-1]
			if qr := q.textX + textWidth(q.label, g.font)/2; qr+4 > l {
				t.Fatalf("labels %q and %q overlap", q.label, p.label)
			}
		}
	}
}
