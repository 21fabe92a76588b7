package workload

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/linkbench/linkbench/internal/config"
)

// Stage is one step of an open-loop run: Rate ops/s for Duration (the
// config parses and bounds them, key stages).
type Stage = config.Stage

// Schedule hands out the intended start times of a global open-loop
// arrival process shared by all requesters: Poisson (exponential gaps) or
// uniform (fixed gaps), at a rate that may ramp up linearly and change by
// stage. It is safe for concurrent use.
type Schedule struct {
	mu      sync.Mutex
	start   time.Time
	next    time.Time
	poisson bool
	ramp    time.Duration
	stages  []Stage // the last stage lasts forever
	rng     *rand.Rand
	issued  int64
}

// NewSchedule starts a schedule at start. With one stage of Duration 0 the
// rate is constant. ramp > 0 grows the rate linearly from 0 to the first
// stage's rate over that time.
func NewSchedule(start time.Time, stages []Stage, poisson bool, ramp time.Duration, seed uint64) *Schedule {
	return &Schedule{start: start, next: start, poisson: poisson, ramp: ramp, stages: stages,
		rng: rand.New(rand.NewPCG(seed, 0xa441))}
}

// startAt moves the schedule's start, and its first arrival, to start:
// the request phase's own, so arrivals are not due before its requesters
// run (a schedule made while the phase was being set up would otherwise
// start behind, with a burst of arrivals due before the measured window).
// It is called before any Next.
func (s *Schedule) startAt(start time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.issued == 0 {
		s.start, s.next = start, start
	}
}

// rateAt is the target arrival rate at offset d from the start.
func (s *Schedule) rateAt(d time.Duration) float64 {
	var rate float64
	rest := d
	for i, st := range s.stages {
		rate = st.Rate
		if i == len(s.stages)-1 || rest < st.Duration {
			break
		}
		rest -= st.Duration
	}
	if s.ramp > 0 && d < s.ramp {
		rate *= max(float64(d)/float64(s.ramp), 0.001)
	}
	return rate
}

// Next returns the intended start time of the next request.
func (s *Schedule) Next() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.next
	rate := s.rateAt(t.Sub(s.start))
	gap := 1 / rate
	if s.poisson {
		gap = s.rng.ExpFloat64() / rate
	}
	s.next = t.Add(time.Duration(gap * float64(time.Second)))
	s.issued++
	return t
}

// Expected is the number of arrivals the schedule makes due between the
// offsets from and to of its start: the integral of its rate (a
// midpoint sum, exact for the constant stages, within 1e-6 of the ramp).
func (s *Schedule) Expected(from, to time.Duration) float64 {
	const steps = 2000
	if to <= from {
		return 0
	}
	step := (to - from) / steps
	var n float64
	for i := range steps {
		n += s.rateAt(from + step*time.Duration(i) + step/2)
	}
	return n * step.Seconds()
}

// Backlog is the number of arrivals that are due by now but not yet taken
// by a requester, given the current rate: how far the store lags behind.
func (s *Schedule) Backlog(now time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	late := now.Sub(s.next)
	if late <= 0 {
		return 0
	}
	return late.Seconds() * s.rateAt(now.Sub(s.start))
}

// StageAt returns the index of the stage in force at offset d.
func (s *Schedule) StageAt(d time.Duration) int {
	rest := d
	for i, st := range s.stages {
		if i == len(s.stages)-1 || rest < st.Duration {
			return i
		}
		rest -= st.Duration
	}
	return 0
}

// Total is the sum of the stage durations (0 when the last stage is open).
func (s *Schedule) Total() time.Duration {
	var d time.Duration
	for _, st := range s.stages {
		d += st.Duration
	}
	return d
}

// Lag is how long the oldest arrival not yet taken by a requester has been
// due (0 when the requesters keep up).
func (s *Schedule) Lag(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(now.Sub(s.next), 0)
}
