package workload

import (
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/config"
)

func TestReferenceSleepIsWholeMilliseconds(t *testing.T) {
	for _, c := range []struct{ wait, want time.Duration }{
		{417_123 * time.Nanosecond, time.Millisecond}, // a 0.42 ms wait sleeps 1 ms
		{2_500_001 * time.Nanosecond, 3 * time.Millisecond},
		{3 * time.Millisecond, 3 * time.Millisecond}, // no leftover nanoseconds modulo 1,000
		{3_000_500 * time.Nanosecond, 4 * time.Millisecond},
		{999_000 * time.Nanosecond, time.Millisecond}, // a sleep of 0, then one more
		{1, time.Millisecond},
	} {
		if got := referenceSleep(c.wait); got != c.want {
			t.Errorf("referenceSleep(%v) = %v, want %v", c.wait, got, c.want)
		}
	}
}

// A requester pauses heldMinGap or more between its ops (pauseGap) under
// requestrate at gaps of a millisecond or more (any rate when paced as the
// reference), or arrival_rate shared by requesters at such gaps each;
// never under stages, whose pace changes.
func TestPauseGap(t *testing.T) {
	for _, c := range []struct {
		name       string
		requesters int
		rate       float64
		pacing     string
		arrival    float64
		stages     string
		want       bool
	}{
		{"unthrottled", 16, 0, config.PacingExact, 0, "", false},
		{"1,000/s", 16, 1000, config.PacingExact, 0, "", true},
		{"180/s", 64, 180, config.PacingExact, 0, "", true},
		{"2,400/s", 4, 2400, config.PacingExact, 0, "", false},
		{"2,400/s paced as the reference", 4, 2400, config.PacingReference, 0, "", true},
		{"arrival_rate 5,000/s among 16", 16, 0, config.PacingExact, 5000, "", true},
		{"arrival_rate 50,000/s among 16", 16, 0, config.PacingExact, 50000, "", false},
		{"arrival_rate over requestrate", 16, 180, config.PacingExact, 50000, "", false},
		{"stages", 16, 180, config.PacingExact, 0, "100:10", false},
	} {
		cfg := &config.Config{Requesters: c.requesters, RequestRate: c.rate, RequestPacing: c.pacing, ArrivalRate: c.arrival, Stages: c.stages}
		if got := pauseGap(cfg) >= float64(heldMinGap); got != c.want {
			t.Errorf("%s: pauseGap = %v ns, at least %v: %v, want %v", c.name, pauseGap(cfg), heldMinGap, got, c.want)
		}
	}
}
