package sysmon

import (
	"context"
	"os"
	"strconv"
	"sync"
	"time"
)

// Options choose what a Monitor watches.
type Options struct {
	// DataPath is a local path of the database (an embedded store's
	// directory, a local server's data directory); disk figures then count
	// only its device.
	DataPath string
	// ServerPIDs are the main processes of the database servers on this
	// machine (see Locate); the processes they started count with them.
	ServerPIDs []int
	// Every is the sampling period (default 1 s).
	Every time.Duration
	// ProcRoot is /proc unless a test says otherwise.
	ProcRoot string
	// Skip is a leading period (a warm-up) left out of the totals and samples.
	Skip time.Duration
}

// Sample is the resource use over one sampling period (rates per second,
// CPU as a percentage of one CPU for processes and of all CPUs for the machine).
type Sample struct {
	Time           time.Time `json:"time"`
	DriverCPUPct   float64   `json:"driver_cpu_pct"`
	UserPct        float64   `json:"machine_user_pct"`
	SysPct         float64   `json:"machine_sys_pct"`
	IOWaitPct      float64   `json:"machine_iowait_pct"`
	ReadsPerSec    float64   `json:"disk_reads_per_sec"`
	WritesPerSec   float64   `json:"disk_writes_per_sec"`
	ReadKBPerSec   float64   `json:"disk_read_kb_per_sec"`
	WriteKBPerSec  float64   `json:"disk_write_kb_per_sec"`
	CtxSwPerSec    float64   `json:"context_switches_per_sec"`
	ServerCPUPct   float64   `json:"server_cpu_pct,omitempty"`
	ServerRSSBytes int64     `json:"server_rss_bytes,omitempty"`
	DriverRSSBytes int64     `json:"driver_rss_bytes,omitempty"`
}

// Usage is the total over a whole phase or a window of it.
type Usage struct {
	Available       bool     `json:"available"`
	Seconds         float64  `json:"seconds"`
	DriverCPUSec    float64  `json:"driver_cpu_sec"`
	MachineUserSec  float64  `json:"machine_user_sec"`
	MachineSysSec   float64  `json:"machine_sys_sec"`
	MachineIOWait   float64  `json:"machine_iowait_sec"`
	DiskReads       uint64   `json:"disk_reads"`
	DiskWrites      uint64   `json:"disk_writes"`
	DiskReadKB      float64  `json:"disk_read_kb"`
	DiskWriteKB     float64  `json:"disk_write_kb"`
	ContextSwitches uint64   `json:"context_switches"`
	ServerCPUSec    float64  `json:"server_cpu_sec,omitempty"`
	ServerPeakRSS   int64    `json:"server_peak_rss_bytes,omitempty"`
	Devices         []string `json:"devices,omitempty"`
	// ServerMeasured is set when a local server's processes were followed
	// (its CPU and memory are then known, even when zero).
	ServerMeasured bool `json:"server_measured,omitempty"`
	// ServerMemBytes is the server's memory at the end: the proportional
	// set size of its processes (see TreeMemory).
	ServerMemBytes int64 `json:"server_mem_bytes,omitempty"`
	// DriverRSSBytes is the driver's resident size at the end.
	DriverRSSBytes int64 `json:"driver_rss_bytes,omitempty"`
}

// CPUPct is the machine's user+sys CPU over the period as a percentage of
// all CPUs (vmstat's us + sy), or 0 when unknown.
func (u Usage) CPUPct(cpus int) float64 {
	if u.Seconds <= 0 || cpus <= 0 {
		return 0
	}
	return 100 * (u.MachineUserSec + u.MachineSysSec) / (u.Seconds * float64(cpus))
}

// PerOp divides usage by n operations, the way LinkBench users report it.
type PerOp struct {
	DriverCPUUs  float64 `json:"driver_cpu_us_per_op"`
	MachineCPUUs float64 `json:"machine_cpu_us_per_op"`
	ServerCPUUs  float64 `json:"server_cpu_us_per_op,omitempty"`
	Reads        float64 `json:"disk_reads_per_op"`
	Writes       float64 `json:"disk_writes_per_op"`
	ReadKB       float64 `json:"disk_read_kb_per_op"`
	WriteKB      float64 `json:"disk_write_kb_per_op"`
	CtxSw        float64 `json:"context_switches_per_op"`
}

// PerOp returns u divided by n (zero when n is 0).
func (u Usage) PerOp(n int64) PerOp {
	if n <= 0 {
		return PerOp{}
	}
	f := float64(n)
	return PerOp{
		DriverCPUUs: u.DriverCPUSec * 1e6 / f, MachineCPUUs: (u.MachineUserSec + u.MachineSysSec) * 1e6 / f,
		ServerCPUUs: u.ServerCPUSec * 1e6 / f,
		Reads:       float64(u.DiskReads) / f, Writes: float64(u.DiskWrites) / f,
		ReadKB: u.DiskReadKB / f, WriteKB: u.DiskWriteKB / f, CtxSw: float64(u.ContextSwitches) / f,
	}
}

// Monitor samples /proc in the background between Start and Stop.
type Monitor struct {
	opts    Options
	devices map[string]bool
	cancel  context.CancelFunc
	done    chan struct{}

	mu         sync.Mutex
	first      counters
	firstT     time.Time
	last       counters
	lastT      time.Time
	mark       counters // the start of the current window
	markT      time.Time
	ok         bool
	peakRSS    int64
	windowPeak int64
	samples    []Sample
}

// Start begins sampling.
func Start(ctx context.Context, opts Options) *Monitor {
	if opts.Every <= 0 {
		opts.Every = time.Second
	}
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	m := &Monitor{opts: opts, devices: deviceOf(opts.DataPath), done: make(chan struct{})}
	m.first, m.ok = m.read()
	m.firstT = time.Now()
	m.last, m.lastT = m.first, m.firstT
	m.mark, m.markT = m.first, m.firstT
	ctx, m.cancel = context.WithCancel(ctx)
	go m.loop(ctx)
	return m
}

func (m *Monitor) read() (counters, bool) {
	var c counters
	root := m.opts.ProcRoot
	if !readStat(root, &c) {
		return c, false
	}
	c.driverCPU, c.driverRSS, _ = procCPU(root, strconv.Itoa(os.Getpid()))
	readDisks(root, m.devices, &c)
	for _, pid := range m.opts.ServerPIDs {
		cpu, rss, ok := treeCPU(root, pid)
		c.serverCPU, c.serverRSS, c.serverOK = c.serverCPU+cpu, c.serverRSS+rss, ok || c.serverOK
	}
	return c, true
}

func (m *Monitor) loop(ctx context.Context) {
	defer close(m.done)
	if m.opts.Skip > 0 {
		w := time.NewTimer(m.opts.Skip)
		select {
		case <-ctx.Done():
			w.Stop()
			return
		case <-w.C:
		}
		// Start the totals afresh after the skipped period.
		c, ok := m.read()
		now := time.Now()
		m.mu.Lock()
		m.first, m.ok, m.firstT = c, ok, now
		m.last, m.lastT = c, now
		m.mark, m.markT = c, now
		m.mu.Unlock()
	}
	t := time.NewTicker(m.opts.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			m.sample(time.Now())
			return
		case now := <-t.C:
			m.sample(now)
		}
	}
}

func (m *Monitor) sample(now time.Time) {
	c, ok := m.read()
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.add(c, now)
}

// add appends the sample from m.last to c. The caller holds m.mu.
func (m *Monitor) add(c counters, now time.Time) {
	d := now.Sub(m.lastT).Seconds()
	if d <= 0 {
		return
	}
	p, all := m.last, c.all-m.last.all
	pct := func(x float64) float64 {
		if all <= 0 {
			return 0
		}
		return 100 * x / all
	}
	m.samples = append(m.samples, Sample{
		Time:           now,
		DriverCPUPct:   100 * (c.driverCPU - p.driverCPU) / d,
		UserPct:        pct(c.user - p.user),
		SysPct:         pct(c.sys - p.sys),
		IOWaitPct:      pct(c.iowait - p.iowait),
		ReadsPerSec:    float64(c.reads-p.reads) / d,
		WritesPerSec:   float64(c.writes-p.writes) / d,
		ReadKBPerSec:   (c.readKB - p.readKB) / d,
		WriteKBPerSec:  (c.writeKB - p.writeKB) / d,
		CtxSwPerSec:    float64(c.ctxt-p.ctxt) / d,
		ServerCPUPct:   100 * max(c.serverCPU-p.serverCPU, 0) / d,
		ServerRSSBytes: c.serverRSS,
		DriverRSSBytes: c.driverRSS,
	})
	m.peakRSS = max(m.peakRSS, c.serverRSS)
	m.windowPeak = max(m.windowPeak, c.serverRSS)
	m.last, m.lastT = c, now
}

// between is the usage from f to l over secs seconds.
func (m *Monitor) between(f, l counters, secs float64) Usage {
	u := Usage{
		Available:       m.ok,
		Seconds:         secs,
		DriverCPUSec:    l.driverCPU - f.driverCPU,
		MachineUserSec:  l.user - f.user,
		MachineSysSec:   l.sys - f.sys,
		MachineIOWait:   l.iowait - f.iowait,
		DiskReads:       l.reads - f.reads,
		DiskWrites:      l.writes - f.writes,
		DiskReadKB:      l.readKB - f.readKB,
		DiskWriteKB:     l.writeKB - f.writeKB,
		ContextSwitches: l.ctxt - f.ctxt,
		ServerCPUSec:    max(l.serverCPU-f.serverCPU, 0),
		DriverRSSBytes:  l.driverRSS,
	}
	for d := range m.devices {
		u.Devices = append(u.Devices, d)
	}
	if l.serverOK {
		u.ServerMeasured = true
		for _, pid := range m.opts.ServerPIDs {
			u.ServerMemBytes += TreeMemory(m.opts.ProcRoot, pid)
		}
	}
	return u
}

// Window returns the usage since the previous Window (or since the end of
// the skipped period) and starts a new window: the consecutive loops of a
// long run each get their own figures while sampling goes on.
func (m *Monitor) Window() Usage {
	c, ok := m.read()
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if !ok || now.Before(m.firstT) {
		return Usage{}
	}
	m.add(c, now)
	u := m.between(m.mark, c, now.Sub(m.markT).Seconds())
	u.ServerPeakRSS = max(m.windowPeak, c.serverRSS)
	m.mark, m.markT, m.windowPeak = c, now, 0
	return u
}

// Stop ends sampling and returns the totals since Start (or the end of the
// skipped period) and the samples.
func (m *Monitor) Stop() (Usage, []Sample) {
	m.cancel()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.between(m.first, m.last, m.lastT.Sub(m.firstT).Seconds())
	u.ServerPeakRSS = m.peakRSS
	return u, append([]Sample(nil), m.samples...)
}
