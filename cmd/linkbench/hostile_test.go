package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileInputsRefusedAtOnce: files that never end or are far too
// large, binary files, sizes that would spin for hours or exhaust memory,
// and SQL in a table name are each refused within seconds with one line
// naming the problem, before anything is written.
// Reliability(input): `-c`, `workload_file`, `data_file` or `password_file` naming /dev/zero, /dev/urandom or a huge file; `config -c` with a 50 MB line | refused within a second: the file is larger than its limit (1 MiB, 1 MiB, 64 MiB, 64 KiB)
// Reliability(input): a random binary file as `-c` | refused naming the first control byte and its line; no escape byte is echoed
// Reliability(input): `maxid1=1e18` or 2^63-1, `nlinks_default=1e15`, `requesters=100000`, and the other sizes above their bounds | refused before any work, naming the bound and its reason (see the limits below)
// Reliability(input): SQL in a table name (`linktable=x; DROP TABLE nodetable; --`) | refused: a name of at most 47 letters, digits and '_'
// Reliability(input): `-D linkstore=...LinkStoreMysql` without `-c` | MySQL is used (linkstore from -D beats the zero-config store=sqlite)
func TestHostileInputsRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.properties")
	f, _ := os.Create(huge)
	f.WriteString("maxid1 = 1000\nnote = ")
	f.Write([]byte(strings.Repeat("x", 50<<20)))
	f.Close()
	binary := filepath.Join(dir, "random.bin")
	b := make([]byte, 4096)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	os.WriteFile(binary, b, 0o644)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"-c /dev/zero", []string{"load", "-c", "/dev/zero"}, "/dev/zero is larger than 1 MiB"},
		{"config -c with a 50 MB line", []string{"config", "-c", huge}, "huge.properties is larger than 1 MiB"},
		{"random binary file as -c", []string{"load", "-c", binary}, "binary data, not a .properties text file"},
		{"data_file=/dev/zero", []string{"load", "-D", "data_file=/dev/zero"}, "larger than 64 MiB"},
		{"data_file=/dev/urandom", []string{"load", "-D", "data_file=/dev/urandom"}, "larger than 64 MiB"},
		{"workload_file=/dev/zero", []string{"load", "-D", "workload_file=/dev/zero"}, "larger than 1 MiB"},
		{"password_file=/dev/zero", []string{"load", "-D", "password_file=/dev/zero"}, "larger than 64 KiB"},
		{"maxid1=1e18", []string{"load", "-D", "maxid1=1e18"}, "at most 1,000,000,000,000"},
		{"maxid1=2^63-1", []string{"run", "-D", "maxid1=9223372036854775807"}, "at most 1,000,000,000,000"},
		{"nlinks_default=1e15", []string{"load", "-D", "nlinks_func=const", "-D", "nlinks_default=1e15"}, "nlinks_default"},
		{"requesters=100000", []string{"run", "-D", "requesters=100000"}, "at most 10,000"},
		{"SQL in a table name", []string{"load", "-D", "linktable=x; DROP TABLE nodetable; --"}, "letters, digits"},
		// Without -c the zero-config preset says sqlite; linkstore wins.
		{"-D linkstore=...Mysql without -c", []string{"load", "-D", "linkstore=com.facebook.LinkBench.LinkStoreMysql", "-D", "port=1"}, "cannot connect to MySQL at 127.0.0.1:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			start := time.Now()
			_, errOut, code := runCLI(t, work, c.args...)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			if code != 1 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "goroutine ") {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, excerpt(errOut, ""), c.want)
			}
			if strings.ContainsRune(errOut, 0x1b) {
				t.Error("stderr echoes an escape byte")
			}
			if _, err := os.Stat(filepath.Join(work, "linkbench-data")); err == nil {
				t.Error("a SQLite store was created")
			}
		})
	}
	// A long value under the file limit is listed cut, not padded into
	// every line of the table.
	long := filepath.Join(dir, "long.properties")
	os.WriteFile(long, []byte("store = memory\nnote = "+strings.Repeat("y", 900<<10)+"\n"), 0o644)
	start := time.Now()
	out, errOut, code := runCLI(t, dir, "config", "-c", long)
	if code != 0 || time.Since(start) > 5*time.Second || len(out) > 200<<10 || !strings.Contains(out, "(921600 bytes)") {
		t.Fatalf("config with a 900 KB value: exit %d in %v, %d bytes out\n%s", code, time.Since(start), len(out), errOut)
	}
}

// TestFileDescriptorBudget: more requesters than the process may open
// files for is refused before the store is opened, with the fix, instead
// of "too many open files" in the middle of the run and a lost bundle.
// Reliability(input): more requesters or loaders than RLIMIT_NOFILE allows | refused before the store is opened, with the files needed and the fix (`ulimit -n`, `LimitNOFILE=`)
func TestFileDescriptorBudget(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Skip(err)
	}
	low := old
	low.Cur = min(old.Cur, 2000)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	dir := t.TempDir()
	_, errOut, code := runCLI(t, dir, "run", "-D", "requesters=3000")
	if code != 1 || !strings.Contains(errOut, "requesters = 3000 with the sqlite store needs about 9070 open files") || !strings.Contains(errOut, "ulimit -n") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "linkbench-data")); err == nil {
		t.Fatal("the store was opened")
	}
}

// runCLIContext is runCLI with a context the test can cancel, as SIGINT
// cancels main's.
func runCLIContext(t *testing.T, ctx context.Context, dir string, args ...string) (string, string, int) {
	t.Helper()
	return runCLIWith(t, ctx, dir, nil, args...)
}

// runCLIWith runs the command line in dir under ctx, copying its stderr to
// watch (when not nil) as it is written, and returns stdout, stderr and
// the exit code main would use (its error line with secrets hidden).
func runCLIWith(t *testing.T, ctx context.Context, dir string, watch io.Writer, args ...string) (string, string, int) {
	t.Helper()
	old, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(old)
	var out, errb bytes.Buffer
	var stderr io.Writer = &errb
	if watch != nil {
		stderr = io.MultiWriter(&errb, watch)
	}
	a := newApp(&out, stderr)
	err := a.execute(ctx, args)
	code := 0
	if err != nil {
		code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		errb.WriteString(a.errorText(err) + "\n")
	}
	return out.String(), errb.String(), code
}

// interruptedLoad is the context of a SQLite load in dir that is
// cancelled, as Ctrl-C would, once the load has written its first rows.
func interruptedLoad(dir string) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for range 200 {
			if fi, err := os.Stat(filepath.Join(dir, "linkbench-data", "linkbench.db-wal")); err == nil && fi.Size() > 1<<20 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	return ctx
}

// TestOutputsCheckedBeforeWork: an output that cannot be written is
// refused before the store is touched, instead of after the whole run
// (which then exited 1 without its bundle).
// Reliability(output): an output that cannot be written (`--csvstats` or `--csvstream` in a missing directory, `-L`, `--cpuprofile`, a results directory under a file) | one line before the store is opened, exit 1
func TestOutputsCheckedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	missing := filepath.Join(dir, "no", "such")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--csvstats", filepath.Join(missing, "s.csv")}, "--csvstats " + filepath.Join(missing, "s.csv") + ": the directory " + missing + " does not exist"},
		{[]string{"--csvstream", filepath.Join(missing, "i.csv")}, "--csvstream"},
		{[]string{"-L", filepath.Join(missing, "log")}, "-L " + filepath.Join(missing, "log")},
		{[]string{"--cpuprofile", filepath.Join(missing, "cpu")}, "--cpuprofile"},
		{[]string{"--results-dir", filepath.Join(file, "sub")}, "results_dir"},
	} {
		work := t.TempDir()
		start := time.Now()
		_, errOut, code := runCLI(t, work, append([]string{"run", "-D", "maxtime=30"}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) || time.Since(start) > 10*time.Second {
			t.Errorf("%v: exit %d after %v: %s", c.args, code, time.Since(start), errOut)
		}
		if _, err := os.Stat(filepath.Join(work, "linkbench-data")); err == nil {
			t.Errorf("%v: the store was opened", c.args)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Error("a checked path was left behind")
	}
}

// TestOneFailedOutputKeepsTheOthers: when --csvstats cannot be written at
// the end of a run, the results bundle is written all the same and the
// exit code says what failed.
// Reliability(output): an output that fails at the end of a run | the others (the bundle) are still written; exit 1 naming the one that failed
func TestOneFailedOutputKeepsTheOthers(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	done := make(chan [3]string, 1)
	go func() {
		o, e, code := runCLI(t, dir, "-c", repoConfig(t, "LinkConfigMemory.properties"), "-D", "maxid1=2001", "-D", "nlinks_func=const",
			"-D", "nlinks_default=3", "-D", "maxtime=2", "-D", "requesters=1", "--csvstats", filepath.Join(out, "s.csv"), "-l", "-r")
		done <- [3]string{o, e, fmt.Sprint(code)}
	}()
	time.Sleep(500 * time.Millisecond) // after the check, before the end
	os.RemoveAll(out)
	r := <-done
	if r[2] != "1" || !strings.Contains(r[1], "-csvstats") || !strings.Contains(r[0], "REQUEST PHASE COMPLETED") {
		t.Fatalf("exit %s\n%s\n%s", r[2], r[0], r[1])
	}
	if _, err := os.Stat(latestBundle(t, dir, "request")); err != nil {
		t.Fatal("no bundle after the csvstats failure")
	}
}

// TestInterruptedLoadWritesResults: Ctrl-C during a load prints what was
// loaded and writes --csvstats and a bundle marked interrupted, as the
// README promises (before, nothing was written).
// Reliability(load): load interrupted by Ctrl-C | `LOAD PHASE INTERRUPTED` with what was written and the per-op lines; `--csvstats` and a bundle marked interrupted are written
func TestInterruptedLoadWritesResults(t *testing.T) {
	dir := t.TempDir()
	ctx := interruptedLoad(dir)
	out, errOut, code := runCLIContext(t, ctx, dir, "load", "-D", "maxid1=300001", "--csvstats", filepath.Join(dir, "s.csv"))
	if code != 130 || !strings.Contains(errOut, "load --resume") || !strings.Contains(out, "LOAD PHASE INTERRUPTED") || !strings.Contains(out, "LOAD_LINKS_BULK ") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(latestBundle(t, dir, "load"))
	if err != nil || !strings.Contains(string(b), `"interrupted": true`) {
		t.Fatalf("load bundle: %v\n%.300s", err, b)
	}
	if csv, err := os.ReadFile(filepath.Join(dir, "s.csv")); err != nil || !strings.Contains(string(csv), "LOAD_LINKS_BULK") {
		t.Fatalf("csvstats: %v %q", err, csv)
	}
}

// TestResumeSaysWhyItCannotHelp: a resumed load that fails on a unit for
// a reason that is not a lost connection (here a trigger that refuses
// every link) says that resuming again will not help, instead of
// suggesting --resume once more (a loop on PostgreSQL before).
// Reliability(load): a resumed load that fails on a unit for a reason that is not a lost connection | exit 1 saying that resuming again will not help, without the `--resume` hint (no loop)
func TestResumeSaysWhyItCannotHelp(t *testing.T) {
	dir := t.TempDir()
	graph := []string{"-D", "maxid1=300001", "-D", "load_random_seed=3", "-D", "load_time_ms=1700000000000", "--no-results"}
	ctx := interruptedLoad(dir)
	if _, errOut, code := runCLIContext(t, ctx, dir, append([]string{"load"}, graph...)...); code != 130 || !strings.Contains(errOut, "load --resume") {
		t.Fatalf("interrupted load: exit %d\n%s", code, errOut)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "linkbench-data", "linkbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TRIGGER refuse BEFORE INSERT ON linktable BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for range 2 {
		_, errOut, code := runCLI(t, dir, append([]string{"load", "--resume"}, graph...)...)
		if code != 1 || !strings.Contains(errOut, "refused by a trigger") || !strings.Contains(errOut, "resuming once more will not help") ||
			strings.Contains(errOut, "with the same settings continues it") {
			t.Fatalf("resume on a unit it cannot write: exit %d\n%s", code, errOut)
		}
	}
}
