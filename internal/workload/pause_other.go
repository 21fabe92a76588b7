//go:build !linux

package workload

import (
	"context"
	"time"
)

const canSleepHeld = false

// sleepHeld is never called where canSleepHeld is false.
func sleepHeld(ctx context.Context, t time.Time) bool { return ctx.Err() == nil }
