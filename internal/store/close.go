package store

import (
	"fmt"
	"time"
)

// DefaultCloseTimeout is close_timeout's default: far above what closing
// takes (a WAL checkpoint, a flush, a goodbye to the server), below what a
// user or an orchestrator waits after SIGTERM (Kubernetes: 30 s).
const DefaultCloseTimeout = 30 * time.Second

// CloseStuckError is the error of a store whose Close did not return
// within its bound: a disk that does not finish a write or fsync (SQLite
// waits for the statements in flight, Pebble for its commits), or a
// server that does not answer the driver's goodbye.
type CloseStuckError struct {
	// Addr is the store's address or path ("" when unknown).
	Addr  string
	Bound time.Duration
}

func (e *CloseStuckError) Error() string {
	at := ""
	if e.Addr != "" {
		at = " at " + e.Addr
	}
	return fmt.Sprintf("the store%s did not close in %s (disk or server stuck)", at, Seconds(e.Bound))
}

// CloseWithin closes st and waits at most bound for it: past the bound
// it returns a CloseStuckError and leaves Close running (the process is
// about to end; what it could not close, the kernel does).
func CloseWithin(st Store, bound time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- st.Close() }()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		addr := AddrOf(st)
		if d, ok := st.(DataPather); ok && addr == "" {
			addr = d.DataPath()
		}
		return &CloseStuckError{Addr: addr, Bound: bound}
	}
}
