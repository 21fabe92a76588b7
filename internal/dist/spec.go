package dist

// Kind names a distribution family.
type Kind string

// Distribution kinds. The first five are probability distributions; the
// rest are the reference's arithmetic access modes, which take Config.
const (
	Zipf         Kind = "zipf"
	Uniform      Kind = "uniform"
	Geometric    Kind = "geometric"
	LogNormal    Kind = "lognormal"
	Real         Kind = "real"
	RoundRobin   Kind = "round_robin"
	Reciprocal   Kind = "reciprocal"
	Multiple     Kind = "multiple"
	Power        Kind = "power"
	PerfectPower Kind = "perfect_power"
)

// AccessSpec is one configured access distribution (keys <prefix>function,
// <prefix>shape, <prefix>mean, <prefix>config, <prefix>median,
// <prefix>sigma), already validated by package config.
type AccessSpec struct {
	Kind    Kind
	Shape   float64 // Zipf exponent
	Mean    float64 // optional scale for Zipf/Uniform/Geometric
	HasMean bool
	Median  float64 // LogNormal
	Sigma   float64 // LogNormal
	Config  float64 // parameter of the arithmetic modes
	// Section is the Distribution.dat section a Real distribution reads
	// (link_nreads, link_nwrites, node_nreads, node_nwrites).
	Section string
}
