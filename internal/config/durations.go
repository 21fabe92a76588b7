package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxDuration bounds every duration from the user (maxtime, warm-up,
// grace, timeouts, stages, progress intervals) and every length derived
// from several of them (loops x maxtime, the sum of the stages, warm-up +
// phase + grace). A year is far beyond any benchmark; a larger value is a
// typo (1e10 for 1e1) that would overflow the nanosecond arithmetic of
// the deadlines (2^63 ns is 292 years) into negative times.
const MaxDuration = 365 * 24 * time.Hour

// Upper bounds of counts from the user that multiply into others.
const (
	// MaxRequests bounds requests per requester: times MaxRequesters it
	// stays within an int64, and 1e14 requests take three years at a
	// million requests/s.
	MaxRequests = 100_000_000_000_000
	// MaxLoops bounds loops (each loop is at least a second).
	MaxLoops = 1_000_000
)

// seconds reads a duration in seconds in [0, MaxDuration].
func (b *builder) seconds(key string) time.Duration {
	s := b.str(key)
	if s == "" {
		b.fail("%s is required: expected seconds", key)
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		b.fail("%s: expected seconds, a number >= 0", b.at(key))
		return 0
	}
	if f > MaxDuration.Seconds() {
		b.fail("%s: expected at most %s seconds (a year; see docs/reliability.md)", b.at(key), grouped(int64(MaxDuration.Seconds())))
		return 0
	}
	return time.Duration(f * float64(time.Second))
}

// Stage is one step of a staged open-loop run (key stages): Rate ops/s
// for Duration.
type Stage struct {
	Rate     float64
	Duration time.Duration
}

// ParseStages reads a stages value, "rate:seconds,rate:seconds,...": each
// rate positive and finite (at most 1e9), each length positive, and their
// sum at most MaxDuration.
func ParseStages(s string) ([]Stage, error) {
	var out []Stage
	var sum float64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		r, d, ok := strings.Cut(part, ":")
		rate, err1 := strconv.ParseFloat(strings.TrimSpace(r), 64)
		secs, err2 := strconv.ParseFloat(strings.TrimSpace(d), 64)
		if !ok || err1 != nil || err2 != nil || !(rate > 0) || !(secs > 0) || math.IsInf(rate, 0) || math.IsInf(secs, 0) || rate > 1e9 {
			return nil, fmt.Errorf("stage %q: expected rate:seconds with both positive (the rate at most 1e9), e.g. 1000:60", part)
		}
		if sum += secs; sum > MaxDuration.Seconds() {
			return nil, fmt.Errorf("stage %q: the stages last more than a year (%s seconds; see docs/reliability.md)", part, grouped(int64(MaxDuration.Seconds())))
		}
		out = append(out, Stage{Rate: rate, Duration: time.Duration(secs * float64(time.Second))})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no stages in %q: expected rate:seconds,rate:seconds,...", s)
	}
	return out, nil
}

// stages reads the key stages into c.StageList.
func (b *builder) stages(c *Config) {
	c.Stages, c.StageList = b.str("stages"), nil
	if c.Stages == "" {
		return
	}
	st, err := ParseStages(c.Stages)
	if err != nil {
		b.fail("%s: %v", b.at("stages"), err)
		return
	}
	c.StageList = st
}

// phaseLength checks the lengths that derive from several keys: loops
// windows of maxtime (or the stages, when they end first), with the
// warm-up before and the grace after, last at most MaxDuration. Each
// key is within its own bound already; their sum or product may not be.
func (b *builder) phaseLength(c *Config) {
	if c.Loops > MaxLoops {
		b.fail("%s: expected at most %s", b.at("loops"), grouped(MaxLoops))
		return
	}
	limit := MaxDuration.Seconds()
	run := c.MaxTime.Seconds() * float64(max(c.Loops, 1))
	if run > limit {
		b.fail("loops = %d (%s) times maxtime = %g s (%s) is %s s, more than a year (%s s; see docs/reliability.md): lower loops or maxtime",
			c.Loops, b.props.Where("loops"), c.MaxTime.Seconds(), b.props.Where("maxtime"), grouped(int64(run)), grouped(int64(limit)))
		return
	}
	if len(c.StageList) > 0 {
		var sum time.Duration
		for _, s := range c.StageList {
			sum += s.Duration
		}
		run = min(run, sum.Seconds())
	}
	if whole := c.WarmupTime.Seconds() + run + c.MaxTimeGrace.Seconds() + c.RampTime.Seconds(); whole > limit {
		b.fail("warmup_time (%s) + the measured time (%s s) + maxtime_grace (%s) + ramp_time (%s) is %s s, more than a year (%s s; see docs/reliability.md)",
			b.props.Where("warmup_time"), grouped(int64(run)), b.props.Where("maxtime_grace"), b.props.Where("ramp_time"), grouped(int64(whole)), grouped(int64(limit)))
	}
}
