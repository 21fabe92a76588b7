package sysmon

import (
	"context"
	"os"
	"path/filepath"
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
	if pids := findServerPIDs(root, []string{"my server"}); len(pids) != 1 {
		t.Fatalf("pids %v", pids)
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
