package config

import (
	"strings"
	"testing"
	"time"
)

// TestDurationsBounded: every duration and every count that multiplies
// into one is refused above its bound with one line naming the key, and so
// are the lengths that derive from several keys, before any work; before,
// loops=1e9 and stages=1000:1e10 overflowed the deadlines into negative
// times ("at most -1914857h49m", "0 requests done in -4 seconds", exit 0).
// Reliability(input): `loops=1e9`, `stages=1000:1e10`, `maxtime=1e10`, `requests=1e18`, a warm-up, loops x maxtime, the stages or the grace adding up to more than a year (also for a sweep point or a loop, whose settings are derived) | refused before any work with one line naming the keys and the bound (a year, 31,536,000 s); no deadline can overflow into a negative time
func TestDurationsBounded(t *testing.T) {
	for _, c := range []struct {
		name      string
		overrides []string
		want      []string
	}{
		{"loops x maxtime", []string{"loops=1e9", "maxtime=60"}, []string{"loops = \"1e9\"", "at most 1,000,000"}},
		{"loops x maxtime over a year", []string{"loops=1000", "maxtime=100000"}, []string{"loops = 1000 (-D) times maxtime = 100000 s (-D)", "more than a year"}},
		{"a stage of 1e10 s", []string{"stages=1000:1e10"}, []string{"stages = \"1000:1e10\"", "more than a year"}},
		{"stages summing over a year", []string{"stages=10:2e7,10:2e7"}, []string{"stages", "more than a year"}},
		{"maxtime 1e10", []string{"maxtime=1e10"}, []string{"maxtime = \"1e10\"", "at most 31,536,000 seconds"}},
		{"op_timeout 1e9", []string{"op_timeout=1e9"}, []string{"op_timeout", "at most 31,536,000 seconds"}},
		{"connect_timeout", []string{"connect_timeout=4e7"}, []string{"connect_timeout", "at most 31,536,000 seconds"}},
		{"close_timeout negative", []string{"close_timeout=-1"}, []string{"close_timeout", ">= 0"}},
		{"progressfreq NaN", []string{"progressfreq=NaN"}, []string{"progressfreq", "expected seconds"}},
		{"warm-up + phase + grace", []string{"maxtime=2e7", "warmup_time=2e7"}, []string{"warmup_time (-D) + the measured time (20,000,000 s)", "more than a year"}},
		{"requests 1e18", []string{"requests=1e18"}, []string{"requests = \"1e18\"", "at most 100,000,000,000,000"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Load(Source{Overrides: append([]string{"store=memory"}, c.overrides...)})
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// A year is allowed; the staged phase is as long as its stages.
	cfg, _, err := Load(Source{Overrides: []string{"store=memory", "maxtime=31536000", "maxtime_grace=0", "stages=5:10,7:1.5"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.StageList) != 2 || cfg.StageList[1].Duration != 1500*time.Millisecond || cfg.StageList[1].Rate != 7 {
		t.Fatalf("stages %+v", cfg.StageList)
	}
	// A phase's derived settings are bounded as the loaded ones.
	if _, err := cfg.Derive("loop", map[string]string{"loops": "2"}); err == nil || !strings.Contains(err.Error(), "more than a year") {
		t.Errorf("derived loops=2 of a year-long maxtime: %v", err)
	}
	if _, err := cfg.Derive("sweep point 1 of 2", map[string]string{"stages": "1:1e10"}); err == nil || !strings.Contains(err.Error(), "more than a year") {
		t.Errorf("derived stages: %v", err)
	}
}
