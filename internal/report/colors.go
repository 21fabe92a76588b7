package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/linkbench/linkbench/internal/graph"
)

// opColors gives every op one colour, the same on every chart of every
// page (a reader learns "GET_NODE is sky blue" once). Reads are cool
// (blues and greens), writes warm (reds, oranges, browns, pinks, purples),
// the bulk load ops olive, lime and violet. The thirteen drawn ops were
// chosen from the sRGB grid of step 0x11 for the largest smallest
// CIEDE2000 difference between any two (24.6), with lightness and chroma
// kept where a line reads on white and apart from the all-ops black:
// UPDATE_LINK (crimson) and UPDATE_NODE (pink) are as far apart as any
// pair. TestOpColoursAreDistinct holds every pair to MinOpColorDistance.
var opColors = [graph.NumOps]string{
	graph.AddLink:        "#ff6644",
	graph.DeleteLink:     "#884411",
	graph.UpdateLink:     "#aa0044",
	graph.CountLink:      "#00bb99",
	graph.MultigetLink:   "#006655",
	graph.GetLinksList:   "#0066bb",
	graph.AddNode:        "#dd9911",
	graph.UpdateNode:     "#ff55aa",
	graph.DeleteNode:     "#aa99ff",
	graph.GetNode:        "#00aadd",
	graph.LoadNodesBulk:  "#88aa00",
	graph.LoadLinksBulk:  "#7733aa",
	graph.LoadCountsBulk: "#666611",
	graph.RangeSize:      "#999999",
}

// MinOpColorDistance is the smallest CIEDE2000 difference between the
// colours of two ops, and between an op's colour and the all-ops black or
// the page's white. A difference of 20 is plain at a glance on thin lines;
// 11 (GET_NODE and ADD_LINK in the Tableau 10 palette) is not.
const MinOpColorDistance = 20

// allOpsColor is the colour of figures over all ops together.
const allOpsColor = "#222222"

// otherColors colour series that are not ops (runs of a comparison,
// resource figures), chosen apart from the op colours where possible.
var otherColors = []string{"#222222", "#d4a017", "#1b9e77", "#7570b3", "#e7298a", "#a6761d", "#666666", "#0072b2"}

// runDashes tell the runs of a comparison apart on per-op panels, where
// the colour is the op's: A solid, B dashed, C dotted, ...
var runDashes = []string{"", "7 4", "2 3", "10 3 2 3", "4 2", "1 5"}

// OpColor is the colour of the op named name (allOpsColor when it is not an op).
func OpColor(name string) string {
	if op, ok := graph.ParseOp(name); ok {
		return opColors[op]
	}
	return allOpsColor
}

// ColorDistance is the CIEDE2000 colour difference of two sRGB colours
// written "#rrggbb" or "rgb(r, g, b)" (as a browser reports a computed
// colour): about 1 is the least difference a reader can see side by side.
func ColorDistance(a, b string) (float64, error) {
	la, err := lab(a)
	if err != nil {
		return 0, err
	}
	lb, err := lab(b)
	if err != nil {
		return 0, err
	}
	return ciede2000(la, lb), nil
}

// lab converts an sRGB colour to CIELAB (D65).
func lab(c string) ([3]float64, error) {
	var r, g, b int
	var err error
	if strings.HasPrefix(c, "#") {
		_, err = fmt.Sscanf(c, "#%02x%02x%02x", &r, &g, &b)
	} else {
		_, err = fmt.Sscanf(strings.ReplaceAll(c, " ", ""), "rgb(%d,%d,%d)", &r, &g, &b)
	}
	if err != nil {
		return [3]float64{}, fmt.Errorf("colour %q: %w", c, err)
	}
	lin := func(v int) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	rl, gl, bl := lin(r), lin(g), lin(b)
	x := (0.4124564*rl + 0.3575761*gl + 0.1804375*bl) / 0.95047
	y := 0.2126729*rl + 0.7151522*gl + 0.0721750*bl
	z := (0.0193339*rl + 0.1191920*gl + 0.9503041*bl) / 1.08883
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	fx, fy, fz := f(x), f(y), f(z)
	return [3]float64{116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)}, nil
}

// ciede2000 is the CIE 2000 colour difference (Sharma, Wu and Dalal 2005).
func ciede2000(p, q [3]float64) float64 {
	rad, deg := math.Pi/180, 180/math.Pi
	c1, c2 := math.Hypot(p[1], p[2]), math.Hypot(q[1], q[2])
	cb7 := math.Pow((c1+c2)/2, 7)
	g := 0.5 * (1 - math.Sqrt(cb7/(cb7+math.Pow(25, 7))))
	a1, a2 := (1+g)*p[1], (1+g)*q[1]
	c1p, c2p := math.Hypot(a1, p[2]), math.Hypot(a2, q[2])
	hue := func(b, a float64) float64 {
		if a == 0 && b == 0 {
			return 0
		}
		return math.Mod(math.Atan2(b, a)*deg+360, 360)
	}
	h1, h2 := hue(p[2], a1), hue(q[2], a2)
	dL, dC := q[0]-p[0], c2p-c1p
	var dh float64
	switch {
	case c1p*c2p == 0:
	case math.Abs(h2-h1) <= 180:
		dh = h2 - h1
	case h2-h1 > 180:
		dh = h2 - h1 - 360
	default:
		dh = h2 - h1 + 360
	}
	dH := 2 * math.Sqrt(c1p*c2p) * math.Sin(dh/2*rad)
	lm, cm := (p[0]+q[0])/2, (c1p+c2p)/2
	hm := h1 + h2
	if c1p*c2p != 0 {
		switch {
		case math.Abs(h1-h2) <= 180:
			hm = (h1 + h2) / 2
		case h1+h2 < 360:
			hm = (h1 + h2 + 360) / 2
		default:
			hm = (h1 + h2 - 360) / 2
		}
	}
	t := 1 - 0.17*math.Cos((hm-30)*rad) + 0.24*math.Cos(2*hm*rad) + 0.32*math.Cos((3*hm+6)*rad) - 0.20*math.Cos((4*hm-63)*rad)
	dTheta := 30 * math.Exp(-math.Pow((hm-275)/25, 2))
	cm7 := math.Pow(cm, 7)
	rc := 2 * math.Sqrt(cm7/(cm7+math.Pow(25, 7)))
	sl := 1 + 0.015*(lm-50)*(lm-50)/math.Sqrt(20+(lm-50)*(lm-50))
	sc, sh := 1+0.045*cm, 1+0.015*cm*t
	rt := -math.Sin(2*dTheta*rad) * rc
	l, c, h := dL/sl, dC/sc, dH/sh
	return math.Sqrt(l*l + c*c + h*h + rt*c*h)
}
