package report

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/linkbench/linkbench/internal/graph"
)

// Series is one line (or set of markers) of a chart. Its colour is its
// op's when Op is set, else Color, else a colour of otherColors by position.
type Series struct {
	Name string
	// Op names the op the series shows.
	Op string
	// Run is the label of the run of a comparison the series belongs to.
	Run   string
	Color string
	// Dash is an SVG stroke-dasharray ("" = solid).
	Dash string
	// Width is the stroke width (default 1.6).
	Width float64
	// Markers draws a dot at every point (sweep points, loops).
	Markers bool
	// Hollow draws the markers of these point indexes hollow: figures that
	// rest on too few samples to be trusted.
	Hollow map[int]bool
	// NoLine draws the markers only.
	NoLine bool
	X, Y   []float64
}

// Band is a shaded range of x: a warm-up, an outage, a stage.
type Band struct {
	From, To float64
	Label    string
	// Kind is "warmup", "outage", "stage" or "finish" (its colour).
	Kind string
}

// VLine is a labelled vertical line (a loop boundary).
type VLine struct {
	X     float64
	Label string
}

// Chart describes a line chart rendered as inline SVG.
type Chart struct {
	ID     string
	Title  string
	XLabel string
	YLabel string
	// LogX draws x as a percentile on a 1/(1-p) axis.
	LogX   bool
	LogY   bool
	Series []Series
	Bands  []Band
	VLines []VLine
	// Panel draws the chart small, as one of a grid of small multiples.
	Panel bool
	// TitleColor colours the title (a panel's op colour).
	TitleColor string
	// XFrom0 starts a linear x axis at 0 (or below, for bands).
	XFrom0 bool
	// IntX keeps x ticks on whole numbers (loop numbers).
	IntX bool
	// XEnd, when set, ends a linear x axis exactly there (the end of the
	// run), and XStart, with XEnd, starts it exactly there (the first
	// loop) unless data or bands start earlier: the axis is not rounded
	// out to a tick, and points beyond XEnd are not drawn.
	XStart, XEnd float64
}

// geometry of a full-width chart and of a small-multiple panel, in SVG
// units (the SVG scales to its container's width).
type geometry struct {
	w, padL, padR, padT, plotH int
	font                       float64 // tick font size
}

var (
	fullGeom  = geometry{w: 1000, padL: 72, padR: 20, padT: 30, plotH: 230, font: 11}
	panelGeom = geometry{w: 340, padL: 48, padR: 14, padT: 24, plotH: 130, font: 10}
)

// textWidth estimates the width of s in a sans-serif font of size px: per
// character widths of DejaVu Sans (the widest of the usual sans fonts), so
// that the layout leaves room; the browser test measures the real extents.
func textWidth(s string, px float64) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z', r == 'm', r == 'w', r == '%', r == 'M', r == 'W':
			w += 0.78
		case r >= 'a' && r <= 'z':
			w += 0.62
		case r >= '0' && r <= '9':
			w += 0.64
		case r == ' ', r == '.', r == ',', r == ':', r == 'i', r == 'l', r == '|':
			w += 0.34
		default:
			w += 0.62
		}
	}
	return w * px
}

func esca(s string) string { return html.EscapeString(s) }

// colorOf picks a series' colour.
func colorOf(s Series, i int) string {
	switch {
	case s.Op != "":
		return OpColor(s.Op)
	case s.Color != "":
		return s.Color
	}
	return otherColors[i%len(otherColors)]
}

// dataAttrs are the attributes that let tests (and readers' scripts) find
// a series' op and run.
func dataAttrs(s Series) string {
	var b strings.Builder
	if s.Op != "" {
		fmt.Fprintf(&b, ` data-op="%s"`, esca(s.Op))
	}
	if s.Run != "" {
		fmt.Fprintf(&b, ` data-run="%s"`, esca(s.Run))
	}
	return b.String()
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// legendItem is one laid-out legend entry.
type legendItem struct {
	s    Series
	i    int
	x, y float64
}

// layoutLegend places the entries in rows under the plot, wrapping so that
// no text is cut, and returns them and the height they take.
func layoutLegend(series []Series, g geometry, top float64) ([]legendItem, float64) {
	var out []legendItem
	x, y := float64(g.padL), top
	font := g.font
	rowH := font + 8
	for i, s := range series {
		if s.Name == "" {
			continue
		}
		w := 22 + textWidth(s.Name, font) + 14
		if x+w > float64(g.w-g.padR) && x > float64(g.padL) {
			x, y = float64(g.padL), y+rowH
		}
		out = append(out, legendItem{s: s, i: i, x: x, y: y})
		x += w
	}
	if len(out) == 0 {
		return nil, 0
	}
	return out, y - top + rowH
}

// SVG renders the chart. An empty chart still renders its frame and says so.
func (c Chart) SVG() string {
	g := fullGeom
	if c.Panel {
		g = panelGeom
	}
	plotW := g.w - g.padL - g.padR
	plotTop, plotBottom := float64(g.padT), float64(g.padT+g.plotH)
	tx := func(x float64) float64 {
		if c.LogX {
			return percentileX(x)
		}
		return x
	}
	// Data ranges.
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	points := 0
	exact := c.XEnd != 0 && !c.LogX
	if exact {
		c.Series = clipSeries(c.Series, c.XEnd)
	}
	for _, s := range c.Series {
		for i := range s.X {
			if i >= len(s.Y) || !finite(s.Y[i]) || !finite(s.X[i]) || (c.LogY && s.Y[i] <= 0) {
				continue
			}
			x := tx(s.X[i])
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, s.Y[i]), math.Max(ymax, s.Y[i])
			points++
		}
	}
	var b strings.Builder
	legend, legendH := layoutLegend(c.Series, g, plotBottom+48)
	if c.Panel && c.XLabel == "" {
		legend, legendH = layoutLegend(c.Series, g, plotBottom+30)
	}
	h := int(plotBottom) + 40 + int(legendH)
	if c.XLabel != "" {
		h += 12
	}
	fmt.Fprintf(&b, `<svg id="%s" class="chart%s" viewBox="0 0 %d %d" width="100%%" preserveAspectRatio="xMinYMin meet" role="img" aria-label="%s">`,
		esca(c.ID), map[bool]string{true: " panel", false: ""}[c.Panel], g.w, h, esca(c.Title))
	titleFill := ""
	if c.TitleColor != "" {
		titleFill = fmt.Sprintf(` fill="%s"`, c.TitleColor)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="title"%s>%s</text>`, g.padL, g.padT-10, titleFill, esca(c.Title))
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" class="frame"/>`, g.padL, g.padT, plotW, g.plotH)
	if points == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" class="empty" text-anchor="middle">no data</text></svg>`, g.padL+plotW/2, plotTop+float64(g.plotH)/2)
		return b.String()
	}
	// Axes: x covers the data, the bands and the lines.
	for _, bd := range c.Bands {
		xmin, xmax = math.Min(xmin, tx(bd.From)), math.Max(xmax, tx(bd.To))
	}
	for _, v := range c.VLines {
		xmin, xmax = math.Min(xmin, v.X), math.Max(xmax, v.X)
	}
	if c.XFrom0 && !c.LogX {
		xmin = math.Min(xmin, 0)
	}
	if exact {
		xmin, xmax = math.Min(xmin, c.XEnd), c.XEnd
		if c.XStart != 0 {
			xmin = math.Min(xmin, c.XStart)
		}
	}
	var xt, yt []float64
	var x0, x1, y0, y1 float64
	if c.LogX {
		var hi float64
		for _, s := range c.Series {
			for _, x := range s.X {
				hi = math.Max(hi, x)
			}
		}
		xt, x0, x1 = percentileAxis(hi)
	} else if exact {
		xt, x0, x1 = exactAxis(xmin, xmax, c.IntX)
	} else {
		xt, x0, x1 = linearAxis(xmin, xmax, c.IntX)
	}
	if c.LogY {
		yt, y0, y1 = logAxis(ymin, ymax, map[bool]int{true: 6, false: 9}[c.Panel])
		y0, y1 = math.Log10(y0), math.Log10(y1)
	} else {
		yt, y0, y1 = linearAxis(math.Min(ymin, 0), ymax, false)
	}
	px := func(x float64) float64 {
		return float64(g.padL) + (tx(x)-x0)/(x1-x0)*float64(plotW)
	}
	pxRaw := func(x float64) float64 { return float64(g.padL) + (x-x0)/(x1-x0)*float64(plotW) }
	py := func(y float64) float64 {
		if c.LogY {
			y = math.Log10(y)
		}
		return plotBottom - (y-y0)/(y1-y0)*float64(g.plotH)
	}
	if c.LogX {
		px = func(x float64) float64 { return pxRaw(percentileX(x)) }
	}
	// Bands under everything.
	for _, bd := range c.Bands {
		a, z := math.Max(px(bd.From), float64(g.padL)), math.Min(px(bd.To), float64(g.padL+plotW))
		if z <= a {
			continue
		}
		fmt.Fprintf(&b, `<rect class="band band-%s" x="%.1f" y="%.1f" width="%.1f" height="%d"><title>%s</title></rect>`, esca(bd.Kind), a, plotTop, z-a, g.plotH, esca(bd.Label))
		label := bd.Label
		if textWidth(label, g.font-1)+4 > z-a {
			label, _, _ = strings.Cut(label, " (")
		}
		if label != "" && textWidth(label, g.font-1)+4 <= z-a {
			fmt.Fprintf(&b, `<text class="band-label" x="%.1f" y="%.1f">%s</text>`, a+3, plotTop+g.font+1, esca(label))
		}
	}
	// Y ticks and grid.
	for _, v := range yt {
		y := py(v)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="grid"/><text x="%d" y="%.1f" class="tick" data-axis="y" text-anchor="end">%s</text>`,
			g.padL, g.padL+plotW, y, y, g.padL-5, y+g.font/3, fmtTick(v))
	}
	// X ticks, thinned where labels would overlap.
	for _, t := range xTickLabels(xt, px, c.LogX, g) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="xtick"/><text x="%.1f" y="%.1f" class="tick" data-axis="x" text-anchor="%s">%s</text>`,
			t.x, t.x, plotBottom, plotBottom+4, t.textX, plotBottom+g.font+5, t.anchor, esca(t.label))
	}
	if c.XLabel != "" {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="axis" text-anchor="middle">%s</text>`, g.padL+plotW/2, plotBottom+g.font+22, esca(c.XLabel))
	}
	if c.YLabel != "" {
		mid := plotTop + float64(g.plotH)/2
		fmt.Fprintf(&b, `<text x="16" y="%.1f" class="axis" text-anchor="middle" transform="rotate(-90 16 %.1f)">%s</text>`, mid, mid, esca(c.YLabel))
	}
	// Vertical lines.
	for _, v := range c.VLines {
		x := px(v.X)
		fmt.Fprintf(&b, `<line class="vline" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x, x, plotTop, plotBottom)
		if v.Label != "" {
			fmt.Fprintf(&b, `<text class="band-label" x="%.1f" y="%.1f">%s</text>`, x+3, plotBottom-4, esca(v.Label))
		}
	}
	// Series.
	for i, s := range c.Series {
		writeSeries(&b, s, colorOf(s, i), px, py, c.LogY)
	}
	// Legend.
	for _, it := range legend {
		col := colorOf(it.s, it.i)
		fmt.Fprintf(&b, `<g class="legend-item"%s>`, dataAttrs(it.s))
		mid := it.y - g.font/3
		if !it.s.NoLine {
			dash := ""
			if it.s.Dash != "" {
				dash = fmt.Sprintf(` stroke-dasharray="%s"`, it.s.Dash)
			}
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"%s/>`, it.x, it.x+18, mid, mid, col, dash)
		}
		if it.s.Markers || it.s.NoLine {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, it.x+9, mid, col)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="legend">%s</text></g>`, it.x+22, it.y, esca(it.s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// clipSeries drops the points of series beyond end.
func clipSeries(series []Series, end float64) []Series {
	out := make([]Series, len(series))
	for i, s := range series {
		out[i] = s
		n := 0
		for n < len(s.X) && !(s.X[n] > end+1e-9*math.Abs(end)) {
			n++
		}
		out[i].X, out[i].Y = s.X[:n], s.Y[:min(n, len(s.Y))]
	}
	return out
}

// xTick is a placed x tick label.
type xTick struct {
	x, textX      float64
	label, anchor string
}

// xTickLabels places the x tick labels: from the left, skipping any that
// would touch the previous one, the last kept in place of its neighbour,
// and labels at the edges anchored inside the chart so none is cut.
func xTickLabels(ticks []float64, px func(float64) float64, percent bool, g geometry) []xTick {
	var out []xTick
	right := func(t xTick) float64 {
		w := textWidth(t.label, g.font)
		switch t.anchor {
		case "start":
			return t.textX + w
		case "end":
			return t.textX
		}
		return t.textX + w/2
	}
	left := func(t xTick) float64 {
		w := textWidth(t.label, g.font)
		switch t.anchor {
		case "start":
			return t.textX
		case "end":
			return t.textX - w
		}
		return t.textX - w/2
	}
	for i, v := range ticks {
		t := xTick{x: px(v), label: fmtTick(v), anchor: "middle"}
		if percent {
			t.label = fmtPercentile(v)
		}
		t.textX = t.x
		w := textWidth(t.label, g.font)
		if t.x+w/2 > float64(g.w-2) {
			t.anchor, t.textX = "end", math.Min(t.x, float64(g.w-2))
		}
		if t.x-w/2 < 2 {
			t.anchor, t.textX = "start", math.Max(t.x, 2)
		}
		if len(out) > 0 && left(t) < right(out[len(out)-1])+4 {
			if i != len(ticks)-1 || len(out) < 2 {
				continue
			}
			out = out[:len(out)-1] // the last tick replaces its neighbour
			if left(t) < right(out[len(out)-1])+4 {
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// writeSeries draws one series: polylines broken at missing points, and
// markers.
func writeSeries(b *strings.Builder, s Series, color string, px, py func(float64) float64, logY bool) {
	width := s.Width
	if width == 0 {
		width = 1.6
	}
	dash := ""
	if s.Dash != "" {
		dash = fmt.Sprintf(` stroke-dasharray="%s"`, s.Dash)
	}
	ok := func(j int) bool {
		return j < len(s.Y) && finite(s.X[j]) && finite(s.Y[j]) && !(logY && s.Y[j] <= 0)
	}
	var run []string
	flush := func() {
		if len(run) > 1 && !s.NoLine {
			fmt.Fprintf(b, `<polyline class="series"%s fill="none" stroke="%s" stroke-width="%.1f"%s points="%s"><title>%s</title></polyline>`,
				dataAttrs(s), color, width, dash, strings.Join(run, " "), esca(s.Name))
		} else if len(run) == 1 && !s.Markers && !s.NoLine {
			xy := strings.SplitN(run[0], ",", 2)
			fmt.Fprintf(b, `<circle class="marker"%s cx="%s" cy="%s" r="2" fill="%s"/>`, dataAttrs(s), xy[0], xy[1], color)
		}
		run = run[:0]
	}
	for j := range s.X {
		if !ok(j) {
			flush()
			continue
		}
		run = append(run, fmt.Sprintf("%.1f,%.1f", px(s.X[j]), py(s.Y[j])))
	}
	flush()
	if !s.Markers && !s.NoLine {
		return
	}
	for j := range s.X {
		if !ok(j) {
			continue
		}
		fill := color
		if s.Hollow[j] {
			fill = "#fff"
		}
		fmt.Fprintf(b, `<circle class="marker"%s cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="%s" stroke-width="1.5"><title>%s: %s at %s</title></circle>`,
			dataAttrs(s), px(s.X[j]), py(s.Y[j]), fill, color, esca(s.Name), fmtTick(s.Y[j]), fmtTick(s.X[j]))
	}
}

// Panels renders small multiples: one panel per chart in a grid of as many
// columns as fit, under a shared legend of line styles (key, may be nil).
func Panels(id, title string, key []Series, panels []Chart) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="panels" id="%s"><div class="panels-title">%s</div>`, esca(id), esca(title))
	if len(key) > 0 {
		b.WriteString(Chart{ID: id + "-key", Series: key, Panel: false}.keySVG())
	}
	b.WriteString(`<div class="multiples">`)
	for _, p := range panels {
		p.Panel = true
		b.WriteString(`<div class="cell">` + p.SVG() + `</div>`)
	}
	b.WriteString(`</div></div>`)
	return b.String()
}

// keySVG renders only the legend of c (the line styles of a grid of panels).
func (c Chart) keySVG() string {
	g := fullGeom
	legend, h := layoutLegend(c.Series, g, 16)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="%s" class="key" viewBox="0 0 %d %.0f" width="100%%" preserveAspectRatio="xMinYMin meet">`, esca(c.ID), g.w, h+8)
	for _, it := range legend {
		mid := it.y - g.font/3
		col := colorOf(it.s, it.i)
		dash := ""
		if it.s.Dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, it.s.Dash)
		}
		sample := fmt.Sprintf(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"%s/>`, it.x, it.x+18, mid, mid, col, dash)
		if it.s.NoLine {
			sample = fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="#fff" stroke="%s" stroke-width="1.5"/>`, it.x+9, mid, col)
		}
		fmt.Fprintf(&b, `<g class="legend-item"%s>%s<text x="%.1f" y="%.1f" class="legend">%s</text></g>`,
			dataAttrs(it.s), sample, it.x+22, it.y, esca(it.s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// BarChart renders horizontal bars, one per label, coloured by op when the
// label is an op's name (or by colors, when given), with a value axis
// under them.
func BarChart(id, title, unit string, labels []string, values []float64, colors []string) string {
	g := fullGeom
	const labelW = 150
	plotW := float64(g.w - labelW - 110)
	top := float64(g.padT)
	rows := float64(22 * len(labels))
	h := int(top+rows) + 42
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="%s" class="chart" viewBox="0 0 %d %d" width="100%%" preserveAspectRatio="xMinYMin meet" role="img" aria-label="%s">`,
		esca(id), g.w, h, esca(title))
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="title">%s</text>`, labelW, g.padT-10, esca(title))
	maxV := 0.0
	for _, v := range values {
		maxV = math.Max(maxV, v)
	}
	ticks, _, to := linearAxis(0, maxV, false)
	for _, v := range ticks {
		x := labelW + v/to*plotW
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/><text x="%.1f" y="%.1f" class="tick" data-axis="x" text-anchor="middle">%s</text>`,
			x, x, top, top+rows, x, top+rows+g.font+5, fmtTick(v))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="axis" text-anchor="middle">%s</text>`, labelW+plotW/2, top+rows+g.font+22, esca(unit))
	for i, l := range labels {
		y := top + float64(22*i)
		w := 0.0
		if to > 0 {
			w = values[i] / to * plotW
		}
		attr := ""
		if _, ok := graph.ParseOp(l); ok {
			attr = fmt.Sprintf(` data-op="%s"`, esca(l))
		}
		col := OpColor(l)
		if i < len(colors) {
			col = colors[i]
		}
		v := values[i]
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="cat" text-anchor="end">%s</text><rect class="bar"%s x="%d" y="%.1f" width="%.1f" height="16" fill="%s"/><text x="%.1f" y="%.1f" class="value">%s</text>`,
			labelW-6, y+12, esca(l), attr, labelW, y+2, w, col, float64(labelW)+w+5, y+14, sig3(&v))
	}
	b.WriteString(`</svg>`)
	return b.String()
}
