package report

import (
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/graph"
)

func TestMergeShardsIsExact(t *testing.T) {
	a, b := sampleResults("postgres", 1), sampleResults("postgres", 1)
	ha, hb := hdr.New(1, 3600e9, 3), hdr.New(1, 3600e9, 3)
	for v := int64(1); v <= 1000; v++ {
		ha.RecordValue(v * 1000)      // 1 µs .. 1 ms
		hb.RecordValue(v * 1000 * 50) // 50 µs .. 50 ms: a slower shard
	}
	want := hdr.New(1, 3600e9, 3)
	want.Merge(ha)
	want.Merge(hb)
	dir := t.TempDir()
	for i, r := range []*Results{a, b} {
		h := []*hdr.Histogram{ha, hb}[i]
		d, err := WriteBundle(dir, r, map[graph.Op]*hdr.Histogram{graph.GetNode: h}, nil)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadHistograms(d)
		if err != nil || back[graph.GetNode].TotalCount() != 1000 {
			t.Fatalf("histograms read back: %v", err)
		}
	}
	m, hists, err := Merge([]*Results{a, b}, []map[graph.Op]*hdr.Histogram{{graph.GetNode: ha}, {graph.GetNode: hb}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Totals.Requests != a.Totals.Requests+b.Totals.Requests {
		t.Errorf("requests %d", m.Totals.Requests)
	}
	for _, o := range m.Ops {
		if o.Name == "GET_NODE" {
			if o.Count != 100 {
				t.Errorf("merged GET_NODE count %d, want the sum 100", o.Count)
			}
			if got, exp := o.P99, float64(want.ValueAtQuantile(99))/1e6; got != exp {
				t.Errorf("merged p99 %v ms, want %v ms from the merged raw histograms", got, exp)
			}
		}
	}
	if hists[graph.GetNode].TotalCount() != 2000 {
		t.Errorf("merged histogram has %d values", hists[graph.GetNode].TotalCount())
	}
	if len(m.Intervals) != 12 || m.Intervals[0].Count != 200 {
		t.Errorf("aligned intervals %+v", m.Intervals)
	}
}
