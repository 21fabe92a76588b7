package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// built is the binary the tests that run linkbench as a process share:
// built once per test process (each build links for seconds), removed by
// TestMain.
var built struct {
	once     sync.Once
	dir, bin string
	out      []byte
	err      error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildBinary builds linkbench for tests that run it as a process (skipped
// with -short).
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "linkbench-test-bin-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "linkbench")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

// TestSignalsStopCleanly runs the real binary, interrupts a long request
// phase, and checks the exit code, the printed results and a complete bundle.
// Reliability(server): SIGINT / SIGTERM | requesters stop, the results of what ran are printed and written (bundle marked `"interrupted": true`, written to a temporary directory and renamed, never half-written), exit 130 / 143
func TestSignalsStopCleanly(t *testing.T) {
	bin := buildBinary(t)
	for _, c := range []struct {
		sig    syscall.Signal
		code   int
		config string
	}{{syscall.SIGINT, 130, "LinkConfigMemory.properties"}, {syscall.SIGTERM, 143, "LinkConfigMemory.properties"},
		// SQLite reads its settings with the (cancelled) run context.
		{syscall.SIGINT, 130, "LinkConfigSqlite.properties"}} {
		dir := t.TempDir()
		cmd := exec.Command(bin, "-c", repoConfig(t, c.config), "-D", "maxid1=2001", "-D", "nlinks_func=const",
			"-D", "nlinks_default=3", "-D", "maxtime=600", "-D", "requesters=2", "-D", "progressfreq=1", "-l", "-r")
		cmd.Dir = dir
		var stdout strings.Builder
		cmd.Stdout = &stdout
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the request phase reports progress, then signal.
		sc := bufio.NewScanner(stderr)
		started := false
		for sc.Scan() {
			if strings.Contains(sc.Text(), " ops/s  p50 ") {
				started = true
				break
			}
		}
		if !started {
			t.Fatal("the request phase never reported progress")
		}
		cmd.Process.Signal(c.sig)
		go func() {
			for sc.Scan() {
			}
		}()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: the process did not stop", c.sig)
		}
		if got := cmd.ProcessState.ExitCode(); got != c.code {
			t.Errorf("%v: exit code %d, want %d", c.sig, got, c.code)
		}
		if !strings.Contains(stdout.String(), "REQUEST PHASE COMPLETED") {
			t.Errorf("%v: no results printed:\n%s", c.sig, stdout.String())
		}
		bundles, _ := filepath.Glob(filepath.Join(dir, "linkbench-results", "*-request", "summary.json"))
		tmp, _ := filepath.Glob(filepath.Join(dir, "linkbench-results", ".tmp-*"))
		if len(bundles) != 1 || len(tmp) != 0 {
			t.Errorf("%v: bundles %v, leftovers %v", c.sig, bundles, tmp)
		} else if b, _ := os.ReadFile(bundles[0]); !strings.Contains(string(b), `"interrupted": true`) {
			t.Errorf("%v: the bundle does not say it was interrupted", c.sig)
		} else if !strings.Contains(string(b), `"store_version"`) || !strings.Contains(string(b), `"store_settings"`) {
			t.Errorf("%v, %s: the interrupted run's bundle lacks the store's version and settings", c.sig, c.config)
		}
	}
}
