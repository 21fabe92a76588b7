//go:build !unix

package main

// fileLimit is unknown on this system: no check.
func fileLimit() (uint64, bool) { return 0, false }
