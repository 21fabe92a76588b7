package workload

import (
	"math"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/config"
)

func gaps(s *Schedule, n int) []float64 {
	out := make([]float64, n)
	prev := s.Next()
	for i := range out {
		t := s.Next()
		out[i] = t.Sub(prev).Seconds()
		prev = t
	}
	return out
}

func meanCV(xs []float64) (mean, cv float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var v float64
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	v /= float64(len(xs) - 1)
	return mean, math.Sqrt(v) / mean
}

func TestPoissonScheduleMeanAndCV(t *testing.T) {
	const rate, n = 1000.0, 200000
	s := NewSchedule(time.Unix(0, 0), []Stage{{Rate: rate}}, true, 0, 1)
	mean, cv := meanCV(gaps(s, n))
	// Exponential gaps: mean 1/rate, CV 1. The standard error of the mean
	// is mean/sqrt(n) (0.22%); allow 5 of them. The CV's standard error is
	// about 1/sqrt(n) times a small constant; 2% is over 5 of them.
	if math.Abs(mean*rate-1) > 5/math.Sqrt(n) {
		t.Errorf("mean gap %.6f s, want %.6f", mean, 1/rate)
	}
	if math.Abs(cv-1) > 0.02 {
		t.Errorf("coefficient of variation %.4f, want 1", cv)
	}
}

func TestUniformScheduleIsRegular(t *testing.T) {
	s := NewSchedule(time.Unix(0, 0), []Stage{{Rate: 500}}, false, 0, 1)
	mean, cv := meanCV(gaps(s, 1000))
	if math.Abs(mean-0.002) > 1e-9 || cv > 1e-6 {
		t.Errorf("mean %.9f cv %.9f", mean, cv)
	}
}

func TestStagesAndRamp(t *testing.T) {
	st, err := config.ParseStages("100:10, 1000:5")
	if err != nil || len(st) != 2 || st[1].Rate != 1000 || st[0].Duration != 10*time.Second {
		t.Fatalf("%v %v", st, err)
	}
	s := NewSchedule(time.Unix(0, 0), st, false, 4*time.Second, 1)
	if r := s.rateAt(2 * time.Second); math.Abs(r-50) > 1e-9 {
		t.Errorf("rate at 2s of a 4s ramp to 100: %v", r)
	}
	if r := s.rateAt(12 * time.Second); r != 1000 {
		t.Errorf("rate in stage 2: %v", r)
	}
	if s.StageAt(9*time.Second) != 0 || s.StageAt(11*time.Second) != 1 || s.StageAt(time.Hour) != 1 {
		t.Error("StageAt")
	}
	for _, bad := range []string{"", "100", "0:10", "100:-1", "x:1", "NaN:1", "Inf:1", "1000:1e10", "1:3e7,1:3e7"} {
		if _, err := config.ParseStages(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBacklogGrowsWhenNobodyTakesArrivals(t *testing.T) {
	start := time.Unix(0, 0)
	s := NewSchedule(start, []Stage{{Rate: 100}}, false, 0, 1)
	s.Next()
	if b := s.Backlog(start.Add(2 * time.Second)); math.Abs(b-199) > 1.5 {
		t.Errorf("backlog after 2 s at 100/s with one arrival taken: %v", b)
	}
}
