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

// canSleepHeld reports whether this platform has sleepHeld.
const canSleepHeld = true

// sleepHeld waits until t in nanosleep(2), on the calling goroutine's own
// thread and without giving up its P, the way a Java requester sleeps: the
// kernel wakes that thread when the time comes. A Go timer instead parks
// the goroutine, and waking it takes the runtime's timer check, a wake-up
// of an idle thread, and often a move to the other core (measured in
// docs/performance.md). The call holds a P for the whole wait, so it is
// only for requesters that each have one to spare (see sleepsHeld). A signal
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
