//go:build !unix

package store

import "context"

// FileLock is the Locker of a store kept in local files; without flock(2)
// on this system it does not lock.
type FileLock struct {
	Path string
}

// Lock implements Locker.
func (f FileLock) Lock(context.Context, LockMode, string) (func(), error) { return func() {}, nil }

// FileLockHolder names the processes that hold a lock on path; this
// system does not say.
func FileLockHolder(string) string { return "another process" }
