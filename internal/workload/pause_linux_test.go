package workload

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestSleepHeldWaitsUntilTheTime(t *testing.T) {
	for _, d := range []time.Duration{0, 300 * time.Microsecond, 3 * time.Millisecond, 25 * time.Millisecond} {
		until := time.Now().Add(d)
		if !sleepHeld(context.Background(), until) {
			t.Fatalf("sleep of %v: returned false without a cancelled context", d)
		}
		if now := time.Now(); now.Before(until) {
			t.Fatalf("sleep of %v: woke %v early", d, until.Sub(now))
		}
	}
}

func TestSleepHeldEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	if sleepHeld(ctx, start.Add(time.Minute)) {
		t.Fatal("returned true, want false once the context ended")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("took %v to notice the cancelled context", took)
	}
}

// Goroutines that sleep holding their Ps must not hold up a stop of the
// world: the collector finishes while they are still asleep.
func TestSleepHeldLetsTheCollectorRun(t *testing.T) {
	const sleepers = 4
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(sleepers + runtime.NumCPU()))
	until := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	started := make(chan struct{}, sleepers)
	for range sleepers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started <- struct{}{}
			sleepHeld(context.Background(), until)
		}()
	}
	for range sleepers {
		<-started
	}
	for range 3 {
		runtime.GC()
	}
	if time.Now().After(until) {
		t.Fatal("three collections waited for the sleepers to wake")
	}
	wg.Wait()
}

func TestHeldSleepNeedsLongGapsAndSpareProcs(t *testing.T) {
	procs := runtime.NumCPU() + 2
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	cases := []struct {
		gap        time.Duration
		requesters int
		want       bool
	}{
		{0, 1, false}, // closed loop
		{heldMinGap / 2, 1, false},
		{heldMinGap, 2, true},
		{10 * heldMinGap, 3, false}, // more requesters than spare Ps
	}
	for _, c := range cases {
		if got := sleepsHeld(float64(c.gap), c.requesters); got != c.want {
			t.Errorf("gap %v, %d requesters, GOMAXPROCS %d: sleepsHeld = %v, want %v", c.gap, c.requesters, procs, got, c.want)
		}
	}
}
