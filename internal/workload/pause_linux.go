package workload

import (
	"context"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// heldSlice bounds one kernel sleep of a throttled requester, so a
// cancelled phase (Ctrl-C, an abandoned run) ends its wait promptly.
const heldSlice = 10 * time.Millisecond

// heldMinGap is the shortest mean gap between a throttled requester's ops
// for which it sleeps with sleepHeld. Measured on PostgreSQL with 4
// requesters on 2 cores (docs/performance.md): at 500 and 1,000 ops/s per
// requester every op's service time was lower than with the timer, at
// 2,400 every op's was higher. Below 1 ms the timer wins: the runtime's
// poller waits in whole milliseconds, so a requester that falls behind
// sends its next ops back to back instead of waking for each.
const heldMinGap = time.Millisecond

// canSleepHeld reports whether this platform has sleepHeld.
const canSleepHeld = true

// sleepHeld waits until t in nanosleep(2), on the calling goroutine's own
// thread and without giving up its P, the way a Java requester sleeps: the
// kernel wakes that thread when the time comes. A Go timer instead parks
// the goroutine, and waking it takes the runtime's timer check, a wake-up
// of an idle thread, and often a move to the other core (measured in
// docs/performance.md). The call holds a P for the whole wait, so it is
// only for requesters that each have one to spare (see holdsP). A signal
// (the runtime preempting the goroutine or stopping the world) ends a
// slice early; the goroutine then yields before it sleeps again. It
// returns false when ctx ended first.
func sleepHeld(ctx context.Context, t time.Time) bool {
	done := ctx.Done()
	for {
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		select {
		case <-done:
			return false
		default:
		}
		ts := syscall.NsecToTimespec(int64(min(d, heldSlice)))
		_, _, errno := syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		if errno == syscall.EINTR {
			runtime.Gosched()
		}
	}
}
