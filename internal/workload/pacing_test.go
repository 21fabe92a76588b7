package workload

import (
	"testing"
	"time"
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
