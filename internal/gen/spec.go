package gen

import "github.com/linkbench/linkbench/internal/dist"

// DataGenSpec configures one payload generator (keys <name>,
// <name>_startbyte, <name>_endbyte, <name>_uniqueness, <name>_motif_length).
type DataGenSpec struct {
	Kind        string // "motif" or "uniform"
	StartByte   int    // smallest byte value
	EndByte     int    // largest byte value, inclusive
	Uniqueness  float64
	MotifLength int // default 512
}

// NLinksSpec configures the out-degree function (keys nlinks_func,
// nlinks_config, nlinks_default and nlinks_* distribution parameters).
type NLinksSpec struct {
	// Func is "real", "const", "reciprocal", "multiples", "perfect_powers",
	// "exponential", or "dist" for a named distribution in Dist.
	Func    string
	Config  int64
	Default int64
	Dist    dist.AccessSpec
}
