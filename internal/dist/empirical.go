package dist

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Sections of Distribution.dat.
var knownSections = map[string]bool{
	"nlinks": true, "link_nreads": true, "link_nwrites": true, "node_nreads": true, "node_nwrites": true,
}

// Empirical is a distribution given by points (value, cumulative percent):
// the percentage of items whose value is at most value.
type Empirical struct {
	Name   string
	values []int64
	cumPct []float64
	prob   []float64 // cumPct/100: the reference compares these
	mean   float64
}

// NewEmpirical builds an empirical distribution from its points. Values
// must increase strictly, percentages must not decrease, and the last
// percentage must be 100.
func NewEmpirical(name string, values []int64, cumPct []float64) (*Empirical, error) {
	if len(values) == 0 || len(values) != len(cumPct) {
		return nil, fmt.Errorf("%s: no points", name)
	}
	e := &Empirical{Name: name, values: values, cumPct: cumPct, prob: make([]float64, len(cumPct))}
	prevP := 0.0
	for i, v := range values {
		p := cumPct[i]
		if i > 0 && v <= values[i-1] {
			return nil, fmt.Errorf("%s: value %d does not increase", name, v)
		}
		if p < prevP || p > 100+1e-9 || math.IsNaN(p) {
			return nil, fmt.Errorf("%s: cumulative percent %v at value %d must be non-decreasing and at most 100", name, p, v)
		}
		e.mean += float64(v) * (p - prevP) / 100
		e.prob[i] = p / 100
		prevP = p
	}
	if math.Abs(prevP-100) > 1e-6 {
		return nil, fmt.Errorf("%s: the last cumulative percent is %v, expected 100", name, prevP)
	}
	return e, nil
}

// Quantile is the smallest value whose cumulative probability (percent /
// 100, in floating point, as the reference computes it) is >= u. With u =
// 1 - rank/n it is the out-degree the reference gives a degree rank, to
// the last bit.
func (e *Empirical) Quantile(u float64) int64 {
	i := sort.Search(len(e.prob), func(i int) bool { return e.prob[i] >= u })
	if i >= len(e.values) {
		i = len(e.values) - 1
	}
	return e.values[i]
}

// Sample draws a value.
func (e *Empirical) Sample(r *rand.Rand) int64 { return e.Quantile(r.Float64()) }

// Max is the largest value.
func (e *Empirical) Max() int64 { return e.values[len(e.values)-1] }

// Mean is the expected value.
func (e *Empirical) Mean() float64 { return e.mean }

// Points returns the number of points.
func (e *Empirical) Points() int { return len(e.values) }

// DataFile is a parsed Distribution.dat: named sections of empirical
// distributions.
type DataFile struct {
	Name     string
	sections map[string]*Empirical
	hash     string
}

// LoadDataFile reads and parses a distribution file.
func LoadDataFile(path string) (*DataFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read distribution file: %w", err)
	}
	return ParseDataFile(bytes.NewReader(b), path)
}

// ParseDataFile parses the format of Distribution.dat: a section name on a
// line of its own, then lines "value cumulative_percent". Errors name the
// file, the line and the problem.
func ParseDataFile(r io.Reader, name string) (*DataFile, error) {
	h := sha256.New()
	sc := bufio.NewScanner(io.TeeReader(r, h))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	df := &DataFile{Name: name, sections: map[string]*Empirical{}}
	var cur string
	var vals []int64
	var pcts []float64
	var curLine int
	flush := func() error {
		if cur == "" {
			return nil
		}
		e, err := NewEmpirical(cur, vals, pcts)
		if err != nil {
			return fmt.Errorf("%s: section starting at line %d: %w", name, curLine, err)
		}
		df.sections[cur] = e
		vals, pcts = nil, nil
		return nil
	}
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) == 1 {
			if _, err := strconv.ParseFloat(f[0], 64); err == nil {
				return nil, fmt.Errorf("%s:%d: %q: expected \"value cumulative_percent\"", name, line, text)
			}
			if !knownSections[f[0]] {
				return nil, fmt.Errorf("%s:%d: unknown section %q (expected one of nlinks, link_nreads, link_nwrites, node_nreads, node_nwrites)", name, line, f[0])
			}
			if err := flush(); err != nil {
				return nil, err
			}
			if _, dup := df.sections[f[0]]; dup {
				return nil, fmt.Errorf("%s:%d: section %q appears twice", name, line, f[0])
			}
			cur, curLine = f[0], line
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: %q: expected \"value cumulative_percent\"", name, line, text)
		}
		if cur == "" {
			return nil, fmt.Errorf("%s:%d: data before any section name", name, line)
		}
		v, err1 := strconv.ParseInt(f[0], 10, 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || v < 0 || math.IsNaN(p) || math.IsInf(p, 0) || p < 0 || p > 100+1e-9 {
			return nil, fmt.Errorf("%s:%d: %q: expected a non-negative integer value and a percent in [0, 100]", name, line, text)
		}
		if n := len(vals); n > 0 && (v <= vals[n-1] || p < pcts[n-1]) {
			return nil, fmt.Errorf("%s:%d: %q: values must increase and percents must not decrease", name, line, text)
		}
		vals = append(vals, v)
		pcts = append(pcts, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(df.sections) == 0 {
		return nil, fmt.Errorf("%s: no sections found (is this a Distribution.dat file?)", name)
	}
	df.hash = hex.EncodeToString(h.Sum(nil))
	return df, nil
}

// Section returns the named distribution.
func (d *DataFile) Section(name string) (*Empirical, bool) {
	e, ok := d.sections[name]
	return e, ok
}

// Hash is the sha256 of the file's content, recorded with a loaded graph.
func (d *DataFile) Hash() string { return d.hash }
