package sysmon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMonitorSeesDriverCPUAndDiskWrites(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	dir := t.TempDir()
	m := Start(context.Background(), Options{DataPath: dir, Every: 50 * time.Millisecond})
	// Burn CPU and write synced data so both counters must move.
	deadline := time.Now().Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	f, err := os.Create(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for i := 0; i < 8; i++ {
		f.Write(buf)
		f.Sync()
	}
	f.Close()
	u, samples := m.Stop()
	if !u.Available || u.DriverCPUSec <= 0 || len(samples) == 0 {
		t.Fatalf("usage %+v, %d samples", u, len(samples))
	}
	if u.DiskWriteKB <= 0 {
		t.Logf("no disk writes seen on %v (a tmpfs temp dir?)", u.Devices)
	}
	per := u.PerOp(1000)
	if per.DriverCPUUs <= 0 {
		t.Fatalf("per op %+v", per)
	}
	_ = x
}

func TestProcParsersOnFixture(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "stat"), []byte("cpu  100 0 50 1000 10 0 0 0 0 0\ncpu0 1 1 1 1 1\nctxt 12345\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "42"), 0o755)
	os.WriteFile(filepath.Join(root, "42", "stat"), []byte("42 (my server) S 1 2 3 4 5 6 7 8 9 10 300 200 0 0 20 0 1 0 100 1000 250 0\n"), 0o644)
	os.WriteFile(filepath.Join(root, "42", "comm"), []byte("my server\n"), 0o644)
	os.WriteFile(filepath.Join(root, "diskstats"), []byte("   8       0 sdz 10 0 2048 0 20 0 4096 0 0 0 0\n   8       1 sdz1 10 0 2048 0 20 0 4096 0 0 0 0\n"), 0o644)
	var c counters
	if !readStat(root, &c) || c.user != 1 || c.sys != 0.5 || c.iowait != 0.1 || c.ctxt != 12345 {
		t.Fatalf("stat %+v", c)
	}
	cpu, rss, ok := procCPU(root, "42")
	if !ok || cpu != 5 || rss != 250*int64(os.Getpagesize()) {
		t.Fatalf("proc cpu %v rss %v", cpu, rss)
	}
	readDisks(root, map[string]bool{"sdz": true}, &c)
	if c.reads != 10 || c.writes != 20 || c.readKB != 1024 || c.writeKB != 2048 {
		t.Fatalf("disks %+v", c)
	}
}

// TestSkipLeavesOutTheWarmup: CPU burned during the skipped period is not
// in the totals (the request phase skips its warm-up this way).
func TestSkipLeavesOutTheWarmup(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	m := Start(context.Background(), Options{Skip: 300 * time.Millisecond, Every: 50 * time.Millisecond})
	busy := time.Now().Add(250 * time.Millisecond)
	for time.Now().Before(busy) {
	}
	time.Sleep(400 * time.Millisecond) // idle after the skipped period
	u, _ := m.Stop()
	if u.DriverCPUSec > 0.1 {
		t.Fatalf("driver CPU %.3f s counted, but the busy part was in the skipped period", u.DriverCPUSec)
	}
}

// writeProc writes a /proc/<pid> fixture: stat with the given parent, CPU
// ticks (utime, stime, cutime, cstime), RSS pages and children.
func writeProc(t *testing.T, root string, pid, parent int, ticks [4]int, rssPages int, children string, pssKB int) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprint(pid))
	if err := os.MkdirAll(filepath.Join(dir, "task", fmt.Sprint(pid)), 0o755); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (srv) S %d 2 3 4 5 6 7 8 9 10 %d %d %d %d 20 0 1 0 100 1000 %d 0\n", pid, parent, ticks[0], ticks[1], ticks[2], ticks[3], rssPages)
	os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
	os.WriteFile(filepath.Join(dir, "task", fmt.Sprint(pid), "children"), []byte(children), 0o644)
	if pssKB > 0 {
		os.WriteFile(filepath.Join(dir, "smaps_rollup"), []byte(fmt.Sprintf("00-ff ---p 0 0:0 0 [rollup]\nRss: 999 kB\nPss: %d kB\n", pssKB)), 0o644)
	}
}

// TestServerTreeCPUAndMemory: a server's CPU is its own, its live
// children's and its reaped children's; its memory is the sum of the
// proportional set sizes (the resident sizes when those cannot be read).
func TestServerTreeCPUAndMemory(t *testing.T) {
	root := t.TempDir()
	writeProc(t, root, 100, 1, [4]int{100, 50, 30, 20}, 10, "101 102", 1000)
	writeProc(t, root, 101, 100, [4]int{200, 0, 0, 0}, 20, "103", 2000)
	writeProc(t, root, 102, 100, [4]int{0, 100, 0, 0}, 30, "", 3000)
	writeProc(t, root, 103, 101, [4]int{10, 0, 0, 0}, 40, "", 4000)
	writeProc(t, root, 200, 1, [4]int{999, 999, 0, 0}, 50, "", 5000) // not part of the server
	cpu, rss, ok := treeCPU(root, 100)
	// (100+50+30+20 + 200 + 100 + 10) ticks at 100 per second.
	if !ok || cpu != 5.1 || rss != 100*int64(os.Getpagesize()) {
		t.Fatalf("tree CPU %v s, RSS %v, ok %v", cpu, rss, ok)
	}
	if m := TreeMemory(root, 100); m != 10000*1024 {
		t.Fatalf("tree memory %d, want the PSS sum %d", m, 10000*1024)
	}
	os.Remove(filepath.Join(root, "103", "smaps_rollup"))
	if m := TreeMemory(root, 100); m != 100*int64(os.Getpagesize()) {
		t.Fatalf("tree memory without one smaps_rollup %d, want the RSS sum", m)
	}
	// Without children lists, the parents in stat give the same tree.
	for _, pid := range []int{100, 101, 102, 103} {
		os.RemoveAll(filepath.Join(root, fmt.Sprint(pid), "task"))
	}
	if got := tree(root, 100); len(got) != 4 {
		t.Fatalf("tree from parents: %v", got)
	}
}

func TestLocateOnlyLocalServers(t *testing.T) {
	root := t.TempDir()
	writeProc(t, root, 300, 1, [4]int{}, 1, "", 0)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "postmaster.pid")
	os.WriteFile(pidFile, []byte("300\n"+dir+"\n1700000000\n5432\n"), 0o644)
	cases := []struct {
		s       Server
		pid     int
		because string
	}{
		{Server{Addr: "127.0.0.1:5432", PIDFile: pidFile, DataDir: dir}, 300, ""},
		{Server{Addr: "localhost:5432", PIDFile: pidFile}, 300, ""},
		{Server{Addr: "[::1]:3306", PID: 300}, 300, ""},
		{Server{Addr: "/var/run/postgresql:5432", PIDFile: pidFile, DataDir: dir}, 300, ""},
		{Server{Addr: "db1.example.com:5432", PIDFile: pidFile, DataDir: dir}, 0, "not on this machine"},
		{Server{Addr: "10.0.0.5:5432", PID: 300}, 0, "not on this machine"},
		{Server{Addr: "127.0.0.1:5432", PIDFile: pidFile, DataDir: "/elsewhere"}, 0, "belongs to the server of"},
		{Server{Addr: "127.0.0.1:5432", PIDFile: filepath.Join(dir, "missing.pid")}, 0, "cannot be read"},
		{Server{Addr: "127.0.0.1:5432", PID: 301}, 0, "not a process here"},
		{Server{Addr: "127.0.0.1:5432"}, 0, "does not say"},
	}
	for _, c := range cases {
		pid, why := Locate(root, c.s)
		if pid != c.pid || !strings.Contains(why, c.because) {
			t.Errorf("Locate(%+v) = %d, %q; want %d, %q", c.s, pid, why, c.pid, c.because)
		}
	}
}

// TestWindowsSplitTheTotals: consecutive windows add up to the whole, and
// each sees the work done inside it.
func TestWindowsSplitTheTotals(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	m := Start(context.Background(), Options{Every: 20 * time.Millisecond, ServerPIDs: []int{os.Getpid()}})
	// Burn 0.2 s of this process's CPU (not of wall time: the machine may
	// be busy with other work).
	start, _, _ := procCPU("/proc", "self")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if now, _, _ := procCPU("/proc", "self"); now-start >= 0.2 {
			break
		}
	}
	w1 := m.Window()
	time.Sleep(200 * time.Millisecond)
	w2 := m.Window()
	total, _ := m.Stop()
	if !w1.ServerMeasured || w1.ServerMemBytes <= 0 || w1.DriverRSSBytes <= 0 {
		t.Fatalf("window 1 %+v", w1)
	}
	// Busy then idle: the first window holds the 0.2 s burned (the clock
	// ticks at 10 ms, so allow a few ticks either way).
	if w1.DriverCPUSec < 0.17 || w2.DriverCPUSec > w1.DriverCPUSec/2+0.02 {
		t.Fatalf("driver CPU per window %.3f then %.3f s", w1.DriverCPUSec, w2.DriverCPUSec)
	}
	if sum := w1.DriverCPUSec + w2.DriverCPUSec; sum > total.DriverCPUSec+1e-9 {
		t.Fatalf("windows %.3f s exceed the total %.3f s", sum, total.DriverCPUSec)
	}
}
