package report

import (
	"math"
	"testing"

	"github.com/linkbench/linkbench/internal/graph"
)

// TestColorDistance checks CIEDE2000 against pairs of the published test
// data of Sharma, Wu and Dalal (2005), given in Lab, and the sRGB path
// against white and black (100 apart in lightness alone).
func TestColorDistance(t *testing.T) {
	for _, c := range []struct {
		p, q [3]float64
		want float64
	}{
		{[3]float64{50, 2.6772, -79.7751}, [3]float64{50, 0, -82.7485}, 2.0425},
		{[3]float64{50, -1, 2}, [3]float64{50, 0, 0}, 2.3669},
		{[3]float64{50, 2.5, 0}, [3]float64{73, 25, -18}, 27.1492},
		{[3]float64{60.2574, -34.0099, 36.2677}, [3]float64{60.4626, -34.1751, 39.4387}, 1.2644},
		{[3]float64{22.7233, 20.0904, -46.6940}, [3]float64{23.0331, 14.9730, -42.5619}, 2.0373},
	} {
		if got := ciede2000(c.p, c.q); math.Abs(got-c.want) > 1e-4 {
			t.Errorf("ΔE00(%v, %v) = %.4f, want %.4f", c.p, c.q, got, c.want)
		}
	}
	if d, err := ColorDistance("#ffffff", "rgb(0, 0, 0)"); err != nil || math.Abs(d-100) > 0.01 {
		t.Errorf("white to black: %v %v", d, err)
	}
	if _, err := ColorDistance("red", "#000000"); err == nil {
		t.Error("a colour name was accepted")
	}
}

// TestOpColoursAreDistinct: every op's colour is at least
// MinOpColorDistance from every other op's, from the all-ops colour and
// from the page's white. The Tableau 10 palette had GET_NODE and ADD_LINK
// 11 apart, and UPDATE_LINK and UPDATE_NODE (red and pink) 18.
func TestOpColoursAreDistinct(t *testing.T) {
	for a := graph.Op(0); a < graph.NumOps; a++ {
		for _, other := range []struct{ name, colour string }{{"all ops", allOpsColor}, {"the page", "#ffffff"}} {
			if d, _ := ColorDistance(opColors[a], other.colour); d < MinOpColorDistance {
				t.Errorf("%s (%s) is %.1f from %s (%s)", a, opColors[a], d, other.name, other.colour)
			}
		}
		for b := a + 1; b < graph.NumOps; b++ {
			d, err := ColorDistance(opColors[a], opColors[b])
			if err != nil {
				t.Fatal(err)
			}
			if d < MinOpColorDistance {
				t.Errorf("%s (%s) and %s (%s) are %.1f apart, want %d or more", a, opColors[a], b, opColors[b], d, MinOpColorDistance)
			}
		}
	}
}
