package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestNormalizeArgs(t *testing.T) {
	root := newApp(nil, nil).rootCmd()
	got, err := normalizeArgs(root, []string{"-c", "x", "-csvstats", "a.csv", "-csvstream=b.csv", "-Dmaxid1=5", "-D", "-weird=1", "-l", "-truncate", "-results-dir", "-r"})
	want := []string{"-c", "x", "--csvstats", "a.csv", "--csvstream=b.csv", "-Dmaxid1=5", "-D", "-weird=1", "-l", "--truncate", "--results-dir", "-r"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q (%v) want %q", got, err, want)
	}
}

// TestDidYouMean: a mistyped flag, command or key names what was meant,
// and a config key given as a flag names the -D form with its value.
// Reliability(input): a mistyped key, flag or command; a config key given as a flag (`--maxtime 10`); the reference README's `-csvstreams` | "did you mean maxid1?" / "--truncate?" / "load?"; "config keys are set with -D: -D maxtime=10"; "did you mean -csvstream?"; exit 1 for flags, commands and -D keys, a warning for keys in files (an error with `--strict`); the ending error is also written to the `-L` file
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error, or (exit 0) in stderr
	}{
		{[]string{"-c", "x.properties", "-csvstreams", "out.csv", "-r"}, "unknown flag -csvstreams: did you mean -csvstream?"},
		{[]string{"-csvstat", "out.csv", "-r"}, "unknown flag -csvstat: did you mean -csvstats?"},
		{[]string{"run", "--maxtime", "10"}, "unknown flag: --maxtime: config keys are set with -D: -D maxtime=10"},
		{[]string{"run", "--maxtime=10"}, "-D maxtime=10"},
		{[]string{"-maxtime", "10", "-r"}, "unknown flag -maxtime: config keys are set with -D, e.g. -D maxtime=10"},
		{[]string{"run", "--maxid", "5"}, "did you mean the config key maxid1 (-D maxid1=5)?"},
		{[]string{"load", "--truncat"}, "unknown flag: --truncat: did you mean --truncate?"},
		{[]string{"run", "--loop", "3"}, "did you mean --loops?"},
		{[]string{"-rsults-dir", "x", "-r"}, "did you mean --results-dir?"},
		{[]string{"lod"}, `unknown command "lod": did you mean load?`},
		{[]string{"sweap"}, `did you mean sweep?`},
		{[]string{"config", "-D", "maxid=100"}, "unknown key maxid (-D); did you mean maxid1?"},
		{[]string{"run", "-D", "maxtiem=10"}, "unknown key maxtiem (-D); did you mean maxtime?"},
		{[]string{"config", "-D", "load_random_seeds=1"}, "did you mean load_random_seed?"},
		{[]string{"config", "-D", "requesters=1", "-D", "sqlite_synchronus=OFF"}, "did you mean sqlite_synchronous?"},
		{[]string{"config", "--strict", "-D", "maxtme=1"}, "unknown key maxtme (-D); did you mean maxtime?"},
	} {
		var out, errb bytes.Buffer
		err := newApp(&out, &errb).execute(context.Background(), tc.args)
		got := errb.String()
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "did not select benchmark mode"},
		{[]string{"-h2"}, "unknown shorthand flag"},
		{[]string{"-l", "extra"}, "invalid trailing arguments"},
		{[]string{"--bogus"}, "unknown flag"},
	} {
		var out, errb bytes.Buffer
		err := newApp(&out, &errb).execute(context.Background(), tc.args)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 1 {
			t.Errorf("%q: got %v, want exit code 1", tc.args, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "usage: linkbench") {
			t.Errorf("%q: message %q lacks %q and the usage", tc.args, err.Error(), tc.want)
		}
	}
}

// TestFatalErrorReachesLogFile: the error that ends a command is written
// to the -L file too, without the usage text.
// Reliability(input): a mistyped key, flag or command; a config key given as a flag (`--maxtime 10`); the reference README's `-csvstreams` | "did you mean maxid1?" / "--truncate?" / "load?"; "config keys are set with -D: -D maxtime=10"; "did you mean -csvstream?"; exit 1 for flags, commands and -D keys, a warning for keys in files (an error with `--strict`); the ending error is also written to the `-L` file
func TestFatalErrorReachesLogFile(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "run.log")
	if _, _, code := runCLI(t, dir, "run", "-L", log, "-D", "maxid1=101"); code != 1 {
		t.Fatalf("run of a store without schema: exit %d", code)
	}
	if _, _, code := runCLI(t, dir, "run", "-L", log, "--maxtime", "5"); code != 1 {
		t.Fatalf("bad flag: exit %d", code)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ERROR ", "linkbench: ", "`linkbench load`", "-D maxtime=5"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the log file lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "usage: linkbench") {
		t.Errorf("the log file holds the usage text:\n%s", b)
	}
}

// TestVersionPrintsTheRecordedFacts: version prints what summary.json
// records about the build and the machine.
func TestVersionPrintsTheRecordedFacts(t *testing.T) {
	out, errOut, code := runCLI(t, t.TempDir(), "version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"linkbench ", "go: go", "cpu: "} {
		if !strings.Contains(out, want) {
			t.Errorf("version lacks %q:\n%s", want, out)
		}
	}
	if runtime.GOOS == "linux" {
		for _, want := range []string{"kernel: ", "memory: ", "file system of .: "} {
			if !strings.Contains(out, want) {
				t.Errorf("version lacks %q:\n%s", want, out)
			}
		}
	}
}
