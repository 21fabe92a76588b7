package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// Series is one line of a chart.
type Series struct {
	Name string
	X, Y []float64
}

// Chart describes a line or bar chart rendered as inline SVG.
type Chart struct {
	ID     string
	Title  string
	XLabel string
	YLabel string
	LogX   bool // for percentile plots: x is a percentile drawn on a 1/(1-p) axis
	LogY   bool
	Series []Series
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

const (
	chartW, chartH         = 720, 300
	padL, padR, padT, padB = 70, 170, 30, 45
	plotW, plotH           = chartW - padL - padR, chartH - padT - padB
)

// percentileX maps a percentile to the position of 1/(1-p) on a log axis.
func percentileX(p float64) float64 {
	p = math.Min(p, 99.9999)
	return math.Log10(100 / (100 - p))
}

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	step := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(step)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step <= m*mag {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, v)
	}
	return out
}

func fmtTick(v float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// SVG renders the chart. An empty chart still renders its frame and says so.
func (c Chart) SVG() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="%s" class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		html.EscapeString(c.ID), chartW, chartH, chartW, chartH, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<text x="%d" y="18" class="title">%s</text>`, padL, html.EscapeString(c.Title))
	// Ranges.
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	tx := func(x float64) float64 {
		if c.LogX {
			return percentileX(x)
		}
		return x
	}
	ty := func(y float64) float64 {
		if c.LogY {
			return math.Log10(math.Max(y, 1e-6))
		}
		return y
	}
	points := 0
	for _, s := range c.Series {
		for i := range s.X {
			if i >= len(s.Y) || math.IsNaN(s.Y[i]) || math.IsInf(s.Y[i], 0) {
				continue
			}
			if c.LogY && s.Y[i] <= 0 {
				continue
			}
			x, y := tx(s.X[i]), ty(s.Y[i])
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			points++
		}
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" class="frame"/>`, padL, padT, plotW, plotH)
	if points == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="empty">no data</text></svg>`, padL+plotW/2-25, padT+plotH/2)
		return b.String()
	}
	if !c.LogY {
		ymin = math.Min(ymin, 0)
	}
	if ymax <= ymin {
		ymax = ymin + 1
	}
	if xmax <= xmin {
		xmax = xmin + 1
	}
	px := func(x float64) float64 { return padL + (x-xmin)/(xmax-xmin)*plotW }
	py := func(y float64) float64 { return padT + plotH - (y-ymin)/(ymax-ymin)*plotH }
	// Y ticks.
	if c.LogY {
		for e := math.Floor(ymin); e <= math.Ceil(ymax); e++ {
			if e < ymin-1e-9 || e > ymax+1e-9 {
				continue
			}
			y := py(e)
			fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="grid"/><text x="%d" y="%.1f" class="tick" text-anchor="end">%s</text>`,
				padL, padL+plotW, y, y, padL-5, y+4, fmtTick(math.Pow(10, e)))
		}
	} else {
		for _, v := range niceTicks(ymin, ymax, 5) {
			y := py(v)
			fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="grid"/><text x="%d" y="%.1f" class="tick" text-anchor="end">%s</text>`,
				padL, padL+plotW, y, y, padL-5, y+4, fmtTick(v))
		}
	}
	// X ticks.
	if c.LogX {
		for _, p := range []float64{0, 90, 99, 99.9, 99.99, 99.999} {
			x := percentileX(p)
			if x < xmin-1e-9 || x > xmax+1e-9 {
				continue
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="tick" text-anchor="middle">%s</text>`, px(x), padT+plotH+15, strconv.FormatFloat(p, 'f', -1, 64)+"%")
		}
	} else {
		for _, v := range niceTicks(xmin, xmax, 6) {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="tick" text-anchor="middle">%s</text>`, px(v), padT+plotH+15, fmtTick(v))
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="axis" text-anchor="middle">%s</text>`, padL+plotW/2, chartH-8, html.EscapeString(c.XLabel))
	fmt.Fprintf(&b, `<text x="14" y="%d" class="axis" text-anchor="middle" transform="rotate(-90 14 %d)">%s</text>`, padT+plotH/2, padT+plotH/2, html.EscapeString(c.YLabel))
	// Lines and legend.
	for i, s := range c.Series {
		color := palette[i%len(palette)]
		var pts []string
		for j := range s.X {
			if j >= len(s.Y) || math.IsNaN(s.Y[j]) || math.IsInf(s.Y[j], 0) || (c.LogY && s.Y[j] <= 0) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(tx(s.X[j])), py(ty(s.Y[j]))))
		}
		if len(pts) == 1 {
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`, strings.Split(pts[0], ",")[0], strings.Split(pts[0], ",")[1], color)
		} else if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline class="series" fill="none" stroke="%s" stroke-width="1.5" points="%s"><title>%s</title></polyline>`, color, strings.Join(pts, " "), html.EscapeString(s.Name))
		}
		ly := padT + 12 + 16*i
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" class="legend">%s</text>`,
			padL+plotW+10, ly-9, color, padL+plotW+25, ly, html.EscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// BarChart renders horizontal bars, one per label.
func BarChart(id, title, unit string, labels []string, values []float64) string {
	var b strings.Builder
	h := padT + 22*len(labels) + 20
	fmt.Fprintf(&b, `<svg id="%s" class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		html.EscapeString(id), chartW, h, chartW, h, html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="%d" y="18" class="title">%s</text>`, 10, html.EscapeString(title))
	maxV := 0.0
	for _, v := range values {
		maxV = math.Max(maxV, v)
	}
	const labelW, barW = 150, 440
	for i, l := range labels {
		y := padT + 22*i
		w := 0.0
		if maxV > 0 {
			w = values[i] / maxV * barW
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="tick" text-anchor="end">%s</text><rect class="bar" x="%d" y="%d" width="%.1f" height="16" fill="%s"/><text x="%.1f" y="%d" class="tick">%s %s</text>`,
			labelW-5, y+12, html.EscapeString(l), labelW, y, w, palette[i%len(palette)], float64(labelW)+w+5, y+12, fmtTick(values[i]), html.EscapeString(unit))
	}
	b.WriteString(`</svg>`)
	return b.String()
}
