package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The axes of every chart carry at least minTicks labelled ticks, so that
// a reader can always read a value off the axis (a log axis spanning less
// than a decade used to carry one label or none).
const minTicks = 3

// niceStep rounds a raw step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag*(1+1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// linearAxis returns round ticks and the axis range they span, covering
// [lo, hi]. The step is at most 2.5 times a fifth of the range, so the
// range holds at least two steps: three ticks or more. whole keeps the
// step at 1 or more (counts of loops).
func linearAxis(lo, hi float64, whole bool) (ticks []float64, from, to float64) {
	if !(hi > lo) {
		switch {
		case lo == 0:
			hi = 1
		case lo > 0:
			lo, hi = 0, lo*1.25
		default:
			lo, hi = lo*1.25, 0
		}
	}
	step := niceStep((hi - lo) / 5)
	if whole {
		step = math.Max(step, 1)
	}
	from = math.Floor(lo/step+1e-9) * step
	to = math.Ceil(hi/step-1e-9) * step
	if to-from < 2*step*(1-1e-9) { // a whole-number step on a short range
		to = from + 2*step
	}
	for i := 0; ; i++ {
		v := from + float64(i)*step
		if v > to+step*1e-6 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ticks = append(ticks, v)
	}
	return ticks, from, to
}

// exactAxis returns ticks inside [lo, hi] and that range itself: an axis
// that ends where the run ends rather than at the next round value. The
// step is the largest 1-2-5 step that leaves minTicks ticks inside; the
// ticks are its round multiples, or with whole (loop numbers) lo and
// every step after it: loops 1, 3, 5, 7.
func exactAxis(lo, hi float64, whole bool) (ticks []float64, from, to float64) {
	if !(hi > lo) {
		return linearAxis(lo, hi, whole)
	}
	for step := niceStep((hi - lo) / 5); ; step = niceStep(step * 0.4) {
		first := math.Ceil(lo/step-1e-9) * step
		if whole {
			step = math.Max(math.Round(step), 1)
			first = lo
		}
		ticks = ticks[:0]
		for v := first; v <= hi+step*1e-9; v += step {
			if math.Abs(v) < step*1e-9 {
				v = 0
			}
			ticks = append(ticks, v)
		}
		if len(ticks) >= minTicks || (whole && step == 1) {
			return ticks, lo, hi
		}
	}
}

// logCandidate is the k-th value of the 1-2-5 sequence (k = 3e + i gives
// (1, 2, 5)[i] * 10^e).
func logCandidate(k int) float64 {
	e := int(math.Floor(float64(k) / 3))
	return []float64{1, 2, 5}[k-3*e] * math.Pow(10, float64(e))
}

// logIndex is the index of the largest candidate <= v.
func logIndex(v float64) int {
	e := int(math.Floor(math.Log10(v)))
	k := 3 * e
	for logCandidate(k+1) <= v*(1+1e-9) {
		k++
	}
	for logCandidate(k) > v*(1+1e-9) {
		k--
	}
	return k
}

// logAxis returns ticks of the 1-2-5 sequence and the range they span,
// covering [lo, hi] (both > 0). A narrow range is widened to the
// neighbouring 1-2-5 values until it holds minTicks; one that would need
// more than most ticks keeps only the powers of ten (every other one
// beyond eight decades).
func logAxis(lo, hi float64, most int) (ticks []float64, from, to float64) {
	if !(lo > 0) {
		lo = 1e-6
	}
	if !(hi > lo) {
		hi = lo
	}
	a, b := logIndex(lo), logIndex(hi)
	if logCandidate(b) < hi*(1-1e-9) {
		b++
	}
	for b-a+1 < minTicks {
		if (b-a)%2 == 0 {
			b++
		} else {
			a--
		}
	}
	if b-a+1 <= most {
		for k := a; k <= b; k++ {
			ticks = append(ticks, logCandidate(k))
		}
		return ticks, logCandidate(a), logCandidate(b)
	}
	// Powers of ten only: widen to whole decades.
	e0, e1 := int(math.Floor(float64(a)/3)), int(math.Ceil(float64(b)/3))
	every := 1
	if e1-e0 > 8 {
		every = 2
		if (e1-e0)%2 != 0 {
			e1++
		}
	}
	for e := e0; e <= e1; e += every {
		ticks = append(ticks, math.Pow(10, float64(e)))
	}
	return ticks, math.Pow(10, float64(e0)), math.Pow(10, float64(e1))
}

// percentileTicks are the ticks of a percentile axis (drawn at 1/(1-p)).
var percentileTicks = []float64{0, 90, 99, 99.9, 99.99, 99.999, 99.9999}

// percentileX maps a percentile to the position of 1/(1-p) on a log axis.
func percentileX(p float64) float64 {
	p = math.Min(p, 99.9999)
	return math.Log10(100 / (100 - p))
}

// percentileAxis returns the ticks covering percentiles up to hi and the
// range in percentileX units: from 0 to the first tick at or above hi,
// never fewer than minTicks.
func percentileAxis(hi float64) (ticks []float64, from, to float64) {
	for _, p := range percentileTicks {
		ticks = append(ticks, p)
		if p >= hi-1e-9 && len(ticks) >= minTicks {
			break
		}
	}
	return ticks, 0, percentileX(ticks[len(ticks)-1])
}

// fmtTick prints a tick value briefly: 0.005, 12, 2.5k, 1.2M.
func fmtTick(v float64) string {
	// Ticks are sums of steps: 0.6000000000000001 is 0.6.
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 10, 64), 64)
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	trim := func(s string) string {
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		return s
	}
	switch {
	case a >= 1e9:
		return trim(fmt.Sprintf("%.2f", v/1e9)) + "G"
	case a >= 1e6:
		return trim(fmt.Sprintf("%.2f", v/1e6)) + "M"
	case a >= 1e4:
		return trim(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 1:
		return trim(fmt.Sprintf("%.2f", v))
	default:
		return trim(strconv.FormatFloat(v, 'f', -1, 64))
	}
}

// fmtPercentile prints a percentile tick: 0%, 99.9%.
func fmtPercentile(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) + "%" }
