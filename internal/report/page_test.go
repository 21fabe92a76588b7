package report

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var xTickRE = regexp.MustCompile(`data-axis="x" text-anchor="[a-z]+">([^<]+)<`)

// xTicks are the x tick labels of a chart, as numbers.
func xTicks(t *testing.T, svg string) []float64 {
	t.Helper()
	var out []float64
	for _, m := range xTickRE.FindAllStringSubmatch(svg, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("x tick %q", m[1])
		}
		out = append(out, v)
	}
	return out
}

// TestTimeAxesEndWithTheRun: a 12 s run's time charts end at 12 s, not at
// the next round value (a 60 s run's ended at 80), and start where the
// warm-up started; the loop charts start at loop 1.
func TestTimeAxesEndWithTheRun(t *testing.T) {
	r := sampleResults("sqlite", 1)
	r.WarmupSec = 2
	// A resource sample taken just after the end is not drawn.
	last := r.Resources[len(r.Resources)-1]
	last.Time = last.Time.Add(700 * time.Millisecond)
	r.Resources = append(r.Resources, last)
	for _, c := range RequestCharts(r) {
		if !strings.Contains(c, "time since measurement began") {
			continue
		}
		ticks := xTicks(t, c)
		if len(ticks) < 3 || ticks[0] < -2 || ticks[len(ticks)-1] > 12 {
			t.Errorf("%.60s...: x ticks %v, want within the run's -2 to 12 s", c, ticks)
		}
	}
	for _, n := range []int{2, 7, 24} {
		r.SummaryLines = nil
		for i := 1; i <= n; i++ {
			r.SummaryLines = append(r.SummaryLines, SummaryLine{Phase: "request", Loop: i, Rate: 100 + float64(i%3), P99Ms: [4]*float64{some(1), some(2), some(3), some(4)}})
		}
		for _, c := range LoopCharts(r) {
			if ticks := xTicks(t, c); len(ticks) < 3 || ticks[0] != 1 || ticks[len(ticks)-1] > float64(max(n, 3)) {
				t.Errorf("%d loops: loop chart x ticks %v, want 1 to %d", n, ticks, n)
			}
		}
	}
}
