package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestLoopSharesFollowLittlesLaw(t *testing.T) {
	p := Perf{Requesters: 4, RequestsPerS: 10000, Ops: map[string]OpPerf{
		"ADD_LINK": {Count: 100, MeanMs: 1.0},
		"GET_NODE": {Count: 300, MeanMs: 0.2},
	}}
	mean, nx, share, rest := loopShares(p)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"mean", mean, 0.4}, {"N/X", nx, 0.4}, {"link-write share", share, 0.625}, {"rest", rest, 0.2}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if m, nx, sh, r := loopShares(Perf{Requesters: 4}); m != 0 || nx != 0 || sh != 0 || r != 0 {
		t.Errorf("a run without ops gave %v %v %v %v, want zeros", m, nx, sh, r)
	}
	var b bytes.Buffer
	closedLoop(&b, []int{4}, func(d string, n int) []Perf { return []Perf{p} })
	if !strings.Contains(b.String(), " 0.400  0.400    62.5%   0.200") {
		t.Errorf("the table lacks the cell's figures:\n%s", b.String())
	}
}
