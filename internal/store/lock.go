package store

import (
	"context"
	"fmt"
	"os"
	"time"
)

// LockMode is how a process uses a store, for the one-writer rule: a load
// (or --truncate, init --drop) needs the store alone; runs share it; the
// processes of one --shard load share it with each other only.
type LockMode int

// Lock modes.
const (
	// LockRun is taken by run, sweep and check: any number of them at
	// once, and no load.
	LockRun LockMode = iota
	// LockShardLoad is taken by each process of a --shard load: any
	// number of them at once, and no run.
	LockShardLoad
	// LockLoad is taken by a load, a --truncate and init --drop: alone.
	LockLoad
)

func (m LockMode) String() string {
	return [...]string{"run", "shard load", "load"}[m]
}

// Locker is a store that keeps two processes from writing one graph in
// ways that corrupt it (a load truncating the tables under a run). Lock
// takes the lock for the life of the process or until release is called,
// without waiting: when another process holds a lock that conflicts, it
// fails at once with a *LockedError naming that process. The lock is
// tied to a session or a file descriptor, so a process that dies frees it.
//
// The locks are two shared/exclusive locks per target, "loads" and
// "runs": a run holds runs shared and checks that loads is free; a shard
// load holds loads shared and checks that runs is free; a load holds
// loads exclusively and checks that runs is free. Each first takes its
// own and then checks the other, so of two that start at the same moment
// at least one sees the other (both may refuse; neither corrupts).
type Locker interface {
	Lock(ctx context.Context, mode LockMode, holder string) (release func(), err error)
}

// LockedError says which process holds a conflicting lock.
type LockedError struct {
	Where  string // the store's target (host:port/database, a path)
	Holder string // the other process, as its Holder string or what the server knows of it
	Mode   LockMode
	Why    string // the rule, when not the lock modes' (an engine's own lock)
}

func (e *LockedError) Error() string {
	what := "a load needs the store alone"
	if e.Why != "" {
		what = e.Why
	} else if e.Mode == LockRun {
		what = "a run cannot start while a load writes the graph"
	} else if e.Mode == LockShardLoad {
		what = "the processes of a --shard load share the store only with each other"
	}
	return fmt.Sprintf("%s is in use by another process: %s; %s: wait for it to finish or stop it", e.Where, e.Holder, what)
}

// Holder describes this process for the other side of a lock conflict:
// the command, its pid and host, and since when.
func Holder(command string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("linkbench %s, pid %d on host %s, since %s", command, os.Getpid(), host, time.Now().Format("15:04:05"))
}
