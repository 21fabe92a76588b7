//go:build unix

package main

import "syscall"

// fileLimit is the soft RLIMIT_NOFILE (the Go runtime raises it to the
// hard limit at start).
func fileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return uint64(r.Cur), true
}
