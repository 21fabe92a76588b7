package main

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SchedWake is one kind of wake-up over the scheduler's slice of a run:
// how many there were per request, and how long the woken thread then
// waited for a core (from its wake-up to running, "sch delay" in perf
// sched timehist).
type SchedWake struct {
	PerRequest  float64 `json:"per_request"`
	MeanDelayUs float64 `json:"mean_delay_us"`
	// Over100Pct is the share of those wake-ups that waited 100 µs or more.
	Over100Pct float64 `json:"over_100us_pct"`
}

// The causes of a thread's next run: a wake-up by one of the driver's
// threads (for a backend, a request that arrived), a wake-up by anything
// else, or none (it was preempted, runnable all along). The kernel names
// as the waker whichever thread ran when the wake-up happened, so a wake-up
// in an interrupt (a disk's flush that completed) counts for the thread it
// interrupted; only the driver's threads' own sends and futex calls are
// told apart with certainty, so the rest is counted together: for a
// backend, the end of a wait inside the server (another backend's lock or
// log flush, a disk, a timer).
const (
	byDriver  = "woken by the driver"
	byElse    = "woken otherwise"
	preempted = "preempted"
)

// schedRecorder records the kernel's scheduler events on every CPU (perf
// sched record) over a slice of a run's measured window.
type schedRecorder struct {
	*recording
	window time.Duration
}

// startSched starts perf sched record for window; the data goes to dir.
func startSched(dir string, window time.Duration, driver int, server []int) (*schedRecorder, error) {
	r, err := startRecording(dir, "sched-record.out", "PERF_SCHED", window, driver, server,
		"sched", "record", "-a", "-o", filepath.Join(dir, "sched.data"))
	if err != nil {
		return nil, err
	}
	return &schedRecorder{r, window}, nil
}

// finish waits for the recording and reads it back with perf sched
// timehist; requestsPerS is the run's rate, so the slice's requests are
// requestsPerS times its length. It returns the wake-ups by "program
// cause" (schedWakes); sched.data stays for perf sched's other readouts.
func (s *schedRecorder) finish(requestsPerS float64) (map[string]SchedWake, error) {
	if err := s.wait(); err != nil {
		return nil, err
	}
	cmd := exec.Command("perf", "sched", "timehist", "-w", "--state", "-i", filepath.Join(s.dir, "sched.data"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf sched timehist: %w", err)
	}
	wakes, perr := schedWakes(out, requestsPerS*s.window.Seconds(), s.whose)
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("perf sched timehist: %w", err)
	}
	return wakes, perr
}

// reTask is a thread in perf sched timehist's output: its command name
// (at most 15 characters, which may hold spaces), then [tid] or
// [tid/pid].
var reTask = regexp.MustCompile(`^(.*?)\[(\d+)(?:/(\d+))?\]$`)

// reTimehist is a line of perf sched timehist -w --state: the time, the
// CPU, the thread, then either "awakened: THREAD" (a wake-up) or the
// thread's wait time, scheduling delay and run time in ms and the state
// it left the CPU in (a switch).
var reTimehist = regexp.MustCompile(`^\s*[0-9.]+\s+\[\d+\]\s+(.*?\])\s+(?:awakened: (.*\])|([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+(\S+))\s*$`)

// schedWakes adds up a timehist readout: for every run of the driver's or
// the server's threads, what woke it (or that it was preempted) and how
// long it waited for a core, per request of the slice, keyed "server
// woken by the driver" and so on. A thread's first run in the slice has
// no known cause and is left out, as is a run whose wake-up the record
// does not show (a thread woken before it had left its core; about 7 %
// of the backends' runs at 4 requesters on PostgreSQL).
func schedWakes(r io.Reader, requests float64, program func(pid int) string) (map[string]SchedWake, error) {
	if requests <= 0 {
		return nil, fmt.Errorf("sched: no requests in the window")
	}
	// task parses a thread: its id and its process's.
	task := func(s string) (tid, pid int, ok bool) {
		m := reTask.FindStringSubmatch(strings.TrimSpace(s))
		if m == nil {
			return 0, 0, false
		}
		tid, _ = strconv.Atoi(m[2])
		pid = tid
		if m[3] != "" {
			pid, _ = strconv.Atoi(m[3])
		}
		return tid, pid, true
	}
	type sum struct {
		n, over int
		delayMs float64
	}
	sums := map[string]*sum{}
	cause := map[int]string{} // by thread: what made it runnable since its last run
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		m := reTimehist.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		tid, pid, ok := task(m[1])
		if !ok {
			continue
		}
		if m[2] != "" { // a wake-up of m[2] by this thread
			if wt, _, ok := task(m[2]); ok {
				cause[wt] = byElse
				if program(pid) == "driver" {
					cause[wt] = byDriver
				}
			}
			continue
		}
		p := program(pid)
		if p == "" {
			continue
		}
		if c := cause[tid]; c != "" {
			// timehist's scheduling delay runs from a wake-up; a preempted
			// thread has none, and its wait time is the time it waited
			// runnable.
			col := m[4]
			if c == preempted {
				col = m[3]
			}
			delay, _ := strconv.ParseFloat(col, 64)
			k := p + " " + c
			s := sums[k]
			if s == nil {
				s = &sum{}
				sums[k] = s
			}
			s.n++
			s.delayMs += delay
			if delay >= 0.1 {
				s.over++
			}
		}
		if m[6] == "R" || m[6] == "R+" {
			cause[tid] = preempted
		} else {
			cause[tid] = ""
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := map[string]SchedWake{}
	for k, s := range sums {
		out[k] = SchedWake{
			PerRequest:  float64(s.n) / requests,
			MeanDelayUs: s.delayMs * 1000 / float64(s.n),
			Over100Pct:  100 * float64(s.over) / float64(s.n),
		}
	}
	return out, nil
}
