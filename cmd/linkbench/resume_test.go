package main

import (
	"bufio"
	"database/sql"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestResumeAfterCtrlC interrupts a real SQLite load with SIGINT, resumes
// it with load --resume (which must adopt the interrupted load's seed and
// load time), and compares every row with an uninterrupted load of the
// same graph, except the nodes' time: without load_time_ms they carry the
// second they were written, as the reference's.
// Reliability(load): load interrupted by Ctrl-C | exit 130, "the store holds a partial graph: `linkbench load --resume` with the same settings continues it"; `run` and `check` refuse the partial graph and say the same; `load --resume` skips the units written, writes the started ones again idempotently, ends with exactly the graph an uninterrupted load makes (row hash) and reports the whole load's rows beside its own
func TestResumeAfterCtrlC(t *testing.T) {
	bin := buildBinary(t)
	started := time.Now().Unix()
	graph := []string{"-D", "nlinks_func=const", "-D", "nlinks_default=10", "-D", "maxid1=80001", "-D", "loader_chunk_size=1000",
		"-D", "loaders=2", "-D", "progressfreq=1", "--no-results"}
	dir := t.TempDir()
	cmd := exec.Command(bin, append([]string{"load"}, graph...)...)
	cmd.Dir = dir
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the first progress line shows links written.
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "inserting links") && !strings.Contains(sc.Text(), " 0/") {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	go func() {
		for sc.Scan() {
			seen = append(seen, sc.Text())
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the load did not stop on SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("interrupted load: exit %d, want 130 (did it finish before the signal?)\n%s", code, strings.Join(seen, "\n"))
	}
	dbPath := filepath.Join(dir, "linkbench-data", "linkbench.db")
	seed, loadTime := loadRecord(t, dbPath)

	// A plain load is refused; run refuses the partial graph; --resume finishes it.
	if _, errOut, code := runCLI(t, dir, append([]string{"load"}, graph...)...); code != 1 || !strings.Contains(errOut, "--truncate") {
		t.Fatalf("plain load over the partial graph: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, dir, "run", "-D", "maxtime=1", "--no-results"); code != 1 || !strings.Contains(errOut, "load --resume") {
		t.Fatalf("run over the partial graph: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, dir, append([]string{"load", "--resume", "-D", "link_datasize=99"}, graph...)...); code != 1 || !strings.Contains(errOut, "link_datasize: interrupted load had 23, now 99") {
		t.Fatalf("resume with other settings: exit %d %s", code, errOut)
	}
	out, errOut, code := runCLI(t, dir, append([]string{"load", "--resume-if-interrupted"}, graph...)...)
	if code != 0 || !strings.Contains(out, "LOAD PHASE COMPLETED") || !strings.Contains(errOut, "resuming the interrupted load") {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errOut)
	}
	// It reports the whole load (not "Loaded 0 nodes (Expected 0)" when
	// the nodes were all written before the interruption).
	if whole := "LOAD PHASE COMPLETED (resumed). Loaded 80000 nodes (Expected 80000), 800000 links (10.00 /node), 160000 counts (2.00 /node) in all; this run wrote "; !strings.Contains(out, whole) {
		t.Errorf("the resumed load does not report the whole load (%q):\n%s", whole, out)
	}
	if _, errOut, code := runCLI(t, dir, append([]string{"load", "--resume"}, graph...)...); code != 1 || !strings.Contains(errOut, "nothing to resume") {
		t.Fatalf("second resume: exit %d %s", code, errOut)
	}
	if out, errOut, code := runCLI(t, dir, "check"); code != 0 || !strings.Contains(out, "check passed") {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errOut)
	}

	ref := t.TempDir()
	if _, errOut, code := runCLI(t, ref, append([]string{"load", "-D", "load_random_seed=" + seed, "-D", "load_time_ms=" + loadTime}, graph...)...); code != 0 {
		t.Fatalf("reference load: %s", errOut)
	}
	const nodes = "SELECT id, type, version, hex(data) FROM nodetable ORDER BY id"
	if a, b := queryHash(t, dbPath, nodes), queryHash(t, filepath.Join(ref, "linkbench-data", "linkbench.db"), nodes); a != b {
		t.Fatalf("the resumed load wrote a different graph than an uninterrupted one: %s vs %s", a, b)
	}
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var lo, hi int64
	if err := db.QueryRow("SELECT min(time), max(time) FROM nodetable").Scan(&lo, &hi); err != nil || lo < started || hi > time.Now().Unix() {
		t.Fatalf("node times [%d, %d], want within the test's run [%d, now] (%v)", lo, hi, started, err)
	}
}

// loadRecord reads the seed and load time the interrupted load recorded.
func loadRecord(t *testing.T, path string) (seed, loadTime string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow("SELECT v FROM linkbench_meta WHERE k = 'load_random_seed'").Scan(&seed); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT v FROM linkbench_meta WHERE k = 'load_time_ms'").Scan(&loadTime); err != nil {
		t.Fatal(err)
	}
	return seed, loadTime
}

// Reliability(load): `load --resume` with different graph settings, after a completed load, with `--truncate`, or on the memory store | one line: the differing settings (old and new value), "nothing to resume", "give one of them", "cannot resume"; exit 1
func TestResumeRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "--resume", "--truncate"}, "give one of them"},
		{[]string{"load", "--resume", "-D", "store=memory"}, "cannot resume"},
		{[]string{"load", "--resume", "-D", "maxid1=101"}, "nothing to resume"},
	} {
		_, errOut, code := runCLI(t, dir, append(c.args, "--no-results")...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", c.args, code, errOut, c.want)
		}
	}
	// With nothing interrupted, --resume-if-interrupted is a new load.
	small := []string{"load", "--resume-if-interrupted", "-D", "maxid1=101", "-D", "nlinks_func=const", "-D", "nlinks_default=2", "--no-results"}
	if out, errOut, code := runCLI(t, dir, small...); code != 0 || !strings.Contains(out, "LOAD PHASE COMPLETED") || strings.Contains(errOut, "resuming") {
		t.Fatalf("--resume-if-interrupted on an empty store: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, dir, small...); code != 1 || !strings.Contains(errOut, "already holds a graph") {
		t.Fatalf("--resume-if-interrupted after a complete load: exit %d %s", code, errOut)
	}
}
