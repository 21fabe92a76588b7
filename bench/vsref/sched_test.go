package main

import (
	"math"
	"strings"
	"testing"
)

// A readout of perf sched timehist -w --state: the driver is process 100
// (a JVM thread whose name has a space, and a requester), the server's
// backends are 200 and 201.
const timehist = `           time    cpu  task name                       wait time  sch delay   run time  state
                        [tid/pid]                          (msec)     (msec)     (msec)
--------------- ------  ------------------------------  ---------  ---------  ---------  -----
   10.000050 [0001]  postgres[201]                      0.000      0.030      0.020      S
   10.000100 [0000]  postgres[200]                      0.000      0.000      0.010      S
   10.000200 [0001]  Thread-0[101/100]                  0.000      0.000      0.005      S
   10.000210 [0001]  Thread-0[101/100]                                         awakened: postgres[200]
   10.000300 [0000]  postgres[200]                      0.100      0.020      0.050      S
   10.000310 [0000]  postgres[201]                                             awakened: postgres[200]
   10.000500 [0000]  postgres[200]                      0.050      0.150      0.030      R
   10.000600 [0001]  postgres[200]                      0.040      0.000      0.010      S
   10.000610 [0001]  kworker/1:0H-kb[30]                                       awakened: Thread-0[101/100]
   10.000700 [0001]  Thread-0[101/100]                  0.400      0.060      0.005      S
   10.000710 [0000]  VM Periodic Tas[105/100]                                  awakened: postgres[201]
   10.000800 [0000]  postgres[201]                      0.000      0.010      0.020      S
   10.001000 [0000]  postgres[300]                                             awakened: postgres[201]
   10.001100 [0000]  postgres[201]                      0.000      0.090      0.020      S
`

func TestSchedWakesByCause(t *testing.T) {
	program := func(pid int) string {
		switch pid {
		case 100:
			return "driver"
		case 200, 201:
			return "server"
		}
		return ""
	}
	got, err := schedWakes(strings.NewReader(timehist), 2, program)
	if err != nil {
		t.Fatal(err)
	}
	// 200: its first run has no cause; then woken by the driver (20 µs),
	// by another backend (150 µs), preempted (40 µs runnable, in the
	// wait time column). The driver's thread:
	// first run left out, then woken by a kernel thread (60 µs). 201: first
	// run left out, then woken by the driver's JVM thread (10 µs), then by
	// a process that is neither program (90 µs).
	want := map[string]SchedWake{
		"server woken by the driver": {PerRequest: 1, MeanDelayUs: 15, Over100Pct: 0},
		"server woken otherwise":     {PerRequest: 1, MeanDelayUs: 120, Over100Pct: 50},
		"server preempted":           {PerRequest: 0.5, MeanDelayUs: 40, Over100Pct: 0},
		"driver woken otherwise":     {PerRequest: 0.5, MeanDelayUs: 60, Over100Pct: 0},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s missing from %v", k, got)
			continue
		}
		if math.Abs(g.PerRequest-w.PerRequest) > 1e-9 || math.Abs(g.MeanDelayUs-w.MeanDelayUs) > 1e-6 || math.Abs(g.Over100Pct-w.Over100Pct) > 1e-9 {
			t.Errorf("%s: %+v, want %+v", k, g, w)
		}
	}
	if _, err := schedWakes(strings.NewReader(timehist), 0, program); err == nil {
		t.Error("no requests: no error")
	}
}
