package main

import (
	"fmt"

	"github.com/linkbench/linkbench/internal/store/shard"
)

// baseFiles are the descriptors a process uses besides the store's: its
// standard streams, results and log files, the Go runtime's poller.
const baseFiles = 64

// checkFiles fails before any work when the store would need more file
// descriptors for workers concurrent goroutines (every sharded target
// has pools of its own) than the process may open: the alternative is
// "too many open files" in the middle of the run, and a lost run.
func (e *env) checkFiles(workers int, noun string, value int) error {
	per := e.drv.FilesPerWorker
	if per == 0 {
		return nil
	}
	targets := 1
	if ts, _, err := shard.Targets(e.cfg.Props); err == nil {
		targets = len(ts)
	}
	need := uint64(baseFiles + targets*per*(workers+2))
	limit, ok := fileLimit()
	if !ok || need <= limit {
		return nil
	}
	return fmt.Errorf("%s = %d with the %s store needs about %d open files, more than this process may open (RLIMIT_NOFILE = %d); raise the limit (ulimit -n %d; LimitNOFILE= in a systemd unit; --ulimit nofile= for docker) or use fewer %s",
		noun, value, e.drv.Name, need, limit, need+need/4, noun)
}
