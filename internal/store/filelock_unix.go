//go:build unix

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// FileLock is the Locker of a store kept in local files (SQLite): the two
// locks are flock(2) locks on <Path>.load.lock and <Path>.run.lock. The
// kernel frees them when the process ends, however it ends.
type FileLock struct {
	Path string
}

// Lock implements Locker.
func (f FileLock) Lock(_ context.Context, mode LockMode, holder string) (func(), error) {
	own, other, how := f.Path+".run.lock", f.Path+".load.lock", syscall.LOCK_SH
	switch mode {
	case LockShardLoad:
		own, other = other, own
	case LockLoad:
		own, other, how = other, own, syscall.LOCK_EX
	}
	fd, err := os.OpenFile(own, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot create the lock file %s: %v; the directory of the database must be writable", own, errors.Unwrap(err))
	}
	if err := syscall.Flock(int(fd.Fd()), how|syscall.LOCK_NB); err != nil {
		fd.Close()
		return nil, f.locked(own, mode, err)
	}
	// Each holder leaves a line "pid<TAB>holder" in the file it holds, for
	// the process refused to name; an exclusive holder starts it afresh.
	line := []byte(strconv.Itoa(os.Getpid()) + "\t" + holder + "\n")
	if how == syscall.LOCK_EX {
		fd.Truncate(0)
		fd.WriteAt(line, 0)
	} else if af, err := os.OpenFile(own, os.O_WRONLY|os.O_APPEND, 0); err == nil {
		af.Write(line)
		af.Close()
	}
	probe, err := os.OpenFile(other, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		fd.Close()
		return nil, fmt.Errorf("cannot create the lock file %s: %v", other, errors.Unwrap(err))
	}
	defer probe.Close()
	if err := syscall.Flock(int(probe.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fd.Close()
		return nil, f.locked(other, mode, err)
	}
	probe.Truncate(0) // nobody holds it: its lines are stale
	syscall.Flock(int(probe.Fd()), syscall.LOCK_UN)
	return func() { fd.Close() }, nil
}

// locked is the error of a lock file held by another process.
func (f FileLock) locked(path string, mode LockMode, err error) error {
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("lock %s: %v", path, err)
	}
	holder := FileLockHolder(path)
	// The holders' own lines, for the live ones.
	live := map[string]bool{}
	for _, p := range lockHolders(path) {
		live[strconv.Itoa(p)] = true
	}
	var named []string
	if b, err := os.ReadFile(path); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if pid, h, ok := strings.Cut(l, "\t"); ok && live[pid] {
				named = append(named, h)
			}
		}
	}
	if len(named) > 0 {
		holder = strings.Join(named, "; ")
	}
	return &LockedError{Where: f.Path, Holder: holder, Mode: mode}
}

// FileLockHolder names the processes that hold a lock on path ("pid 12
// (linkbench) on host h"), or "another process" when the system does not
// say.
func FileLockHolder(path string) string {
	pids := lockHolders(path)
	if len(pids) == 0 {
		return "another process"
	}
	host, _ := os.Hostname()
	var parts []string
	for _, p := range pids {
		name, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm")
		parts = append(parts, fmt.Sprintf("pid %d (%s)", p, strings.TrimSpace(string(name))))
	}
	return strings.Join(parts, ", ") + " on host " + host
}

// lockHolders lists the processes that hold a lock on path, from Linux's
// /proc/locks (nil elsewhere).
func lockHolders(path string) []int {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil
	}
	ino := ":" + strconv.FormatUint(uint64(st.Ino), 10)
	seen := map[int]bool{}
	var out []int
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		// "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; waiting
		// requests have "->" after the number.
		if len(f) < 8 || f[1] == "->" || !strings.HasSuffix(f[5], ino) {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && !seen[pid] {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	return out
}
