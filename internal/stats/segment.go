package stats

import (
	"time"

	"github.com/linkbench/linkbench/internal/graph"
)

// Segment is a named part of a run (a stage of a staged open-loop run)
// with its own cumulative histograms.
type segment struct {
	name       string
	start, end time.Time
	ops        [graph.NumOps]opRec
}

// SegmentSummary is what a segment measured.
type SegmentSummary struct {
	Name      string      `json:"name"`
	StartSec  float64     `json:"start_sec"`
	EndSec    float64     `json:"end_sec"`
	Count     int64       `json:"count"`
	Errors    int64       `json:"errors"`
	OpsPerSec float64     `json:"ops_per_sec"`
	Ops       []OpSummary `json:"ops"`
}

// BeginSegment closes the current segment (if any) at now and opens a new
// one; from the next Tick on, intervals are also added to it.
func (c *Collector) BeginSegment(name string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.segments); n > 0 {
		c.segments[n-1].end = now
	}
	c.segments = append(c.segments, &segment{name: name, start: now})
}

// addToSegment merges the just-closed interval into the open segment.
// The caller holds c.mu.
func (c *Collector) addToSegment(now time.Time) {
	n := len(c.segments)
	if n == 0 {
		return
	}
	s := c.segments[n-1]
	for i := range c.interval {
		s.ops[i].merge(&c.interval[i], c.sigfigs)
	}
	s.end = now
}

// Segments summarises every segment.
func (c *Collector) Segments() []SegmentSummary {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []SegmentSummary
	for _, s := range c.segments {
		secs := s.end.Sub(s.start).Seconds()
		ss := SegmentSummary{Name: s.name, StartSec: s.start.Sub(c.start).Seconds(), EndSec: s.end.Sub(c.start).Seconds()}
		for i := range s.ops {
			r := &s.ops[i]
			if r.count == 0 && r.errors == 0 {
				continue
			}
			sum := summarize(graph.Op(i), r, secs)
			ss.Ops = append(ss.Ops, sum)
			if graph.Op(i) < graph.Op(graph.NumRequestOps) {
				ss.Count += sum.Count
				ss.Errors += sum.Errors
			}
		}
		if secs > 0 {
			ss.OpsPerSec = float64(ss.Count) / secs
		}
		out = append(out, ss)
	}
	return out
}
