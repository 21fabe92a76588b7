package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectionCatchesBrokenCharts: the browser checks are real. A page
// with a legend cut by the chart's edge, two overlapping legend entries,
// an axis with two labels, an op in two colours and two ops in colours
// too alike (the old palette's red and pink of UPDATE_LINK and
// UPDATE_NODE) fails every one.
func TestInspectionCatchesBrokenCharts(t *testing.T) {
	bin := chromium(t)
	page := filepath.Join(t.TempDir(), "broken.html")
	broken := `<!DOCTYPE html><html><body style="width:800px">
<svg id="bad" class="chart" viewBox="0 0 400 200" width="100%">
<rect class="frame" x="40" y="20" width="300" height="120"/>
<text class="tick" data-axis="x" x="40" y="160">0</text><text class="tick" data-axis="x" x="340" y="160">10</text>
<text class="tick" data-axis="y" x="30" y="140">0</text><text class="tick" data-axis="y" x="30" y="80">5</text><text class="tick" data-axis="y" x="30" y="20">10</text>
<polyline class="series" data-op="GET_NODE" stroke="#5f6b7a" fill="none" points="40,140 340,20"/>
<g class="legend-item" data-op="GET_NODE"><line stroke="#5f6b7a" x1="40" x2="58" y1="180" y2="180"/><text class="legend" x="62" y="184">GET_NODE</text></g>
<g class="legend-item" data-op="ADD_LINK"><line stroke="#4e79a7" x1="70" x2="88" y1="180" y2="180"/><text class="legend" x="75" y="184">ADD_LINK</text></g>
<text class="legend" x="360" y="184">GET_LINKS_LIST</text>
</svg>
<svg id="other" class="chart" viewBox="0 0 400 200" width="100%"><polyline class="series" data-op="GET_NODE" stroke="#ff0000" fill="none" points="0,0 10,10"/>
<polyline class="series" data-op="UPDATE_LINK" stroke="#e15759" fill="none" points="0,0 10,20"/><polyline class="series" data-op="UPDATE_NODE" stroke="#ff9da7" fill="none" points="0,0 10,30"/></svg>
</body></html>`
	if err := os.WriteFile(page, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	v := inspectPage(t, bin, page, "broken")
	all := strings.Join(v.Problems, "\n")
	for _, want := range []string{`text "GET_LINKS_LIST" is cut by the chart edge`, `legend "GET_NODE" overlaps "ADD_LINK"`, "x axis has 2 labelled ticks"} {
		if !strings.Contains(all, want) {
			t.Errorf("the inspection missed %q; it found:\n%s", want, all)
		}
	}
	colorOf := map[string]map[string]bool{}
	for op, cs := range v.Colors {
		colorOf[op] = map[string]bool{}
		for c := range cs {
			colorOf[op][c] = true
		}
	}
	p := strings.Join(colourProblems(colorOf), "\n")
	for _, want := range []string{"GET_NODE is drawn in 2 colours", "UPDATE_NODE (rgb(255, 157, 167)) and UPDATE_LINK (rgb(225, 87, 89)) are 18.1 apart"} {
		if !strings.Contains(p, want) {
			t.Errorf("colour problems lack %q:\n%s", want, p)
		}
	}
}

// newest is the path of after that is not in before.
func newest(after, before []string) string {
	old := map[string]bool{}
	for _, b := range before {
		old[b] = true
	}
	for _, a := range after {
		if !old[a] {
			return a
		}
	}
	return ""
}
