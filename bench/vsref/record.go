package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// recording is a perf command that records every CPU in the background
// over a window of a run (PERF_PROFILE's perf record, PERF_SCHED's perf
// sched record), with the driver's and the server's process ids, to tell
// their threads from the rest when it is read back.
type recording struct {
	dir, log string // the data's directory, and perf's output in it
	cmd      *exec.Cmd
	done     chan struct{}
	driver   int          // the driver's process id
	server   map[int]bool // the server's, when the window began
}

// startRecording runs perf with args (which name the data file in dir)
// for window, its output in dir/log; setting names the knob that asked
// for it, for the error when perf cannot start.
func startRecording(dir, log, setting string, window time.Duration, driver int, server []int, args ...string) (*recording, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	secs := strconv.FormatFloat(window.Seconds(), 'f', 3, 64)
	cmd := exec.Command("perf", append(args, "--", "sleep", secs)...)
	f, err := os.Create(filepath.Join(dir, log))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("perf: %w (%s needs perf, and root or kernel.perf_event_paranoid <= 0)", err, setting)
	}
	r := &recording{dir: dir, log: log, cmd: cmd, done: make(chan struct{}), driver: driver, server: map[int]bool{}}
	for _, pid := range server {
		r.server[pid] = true
	}
	go func() { cmd.Wait(); f.Close(); close(r.done) }()
	return r, nil
}

// wait waits for the recording to end and says whether perf failed.
func (r *recording) wait() error {
	<-r.done
	if !r.cmd.ProcessState.Success() {
		return fmt.Errorf("perf failed; see %s", filepath.Join(r.dir, r.log))
	}
	return nil
}

// whose names a process: "driver", "server", or "" for anything else.
func (r *recording) whose(pid int) string {
	switch {
	case pid == r.driver:
		return "driver"
	case r.server[pid]:
		return "server"
	}
	return ""
}
