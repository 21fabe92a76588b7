package report

import "github.com/linkbench/linkbench/internal/graph"

// opColors gives every op one colour, the same on every chart of every
// page (a reader learns "GET_NODE is blue" once). The ten request ops take
// the Tableau 10 palette, which stays distinguishable for the common forms
// of colour blindness better than most; the load ops take three darker ones.
var opColors = [graph.NumOps]string{
	graph.AddLink:        "#4e79a7",
	graph.DeleteLink:     "#f28e2b",
	graph.UpdateLink:     "#e15759",
	graph.CountLink:      "#76b7b2",
	graph.MultigetLink:   "#59a14f",
	graph.GetLinksList:   "#edc948",
	graph.AddNode:        "#b07aa1",
	graph.UpdateNode:     "#ff9da7",
	graph.DeleteNode:     "#9c755f",
	graph.GetNode:        "#5f6b7a",
	graph.LoadNodesBulk:  "#8c6d31",
	graph.LoadLinksBulk:  "#393b79",
	graph.LoadCountsBulk: "#637939",
	graph.RangeSize:      "#bab0ac",
}

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
