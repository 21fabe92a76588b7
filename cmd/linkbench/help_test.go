package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestHelpHasExamples: every command's --help shows two or three examples
// that parse as written (their commands, flags and arguments exist, and
// the config files they name are shipped) and names the documents that
// say more.
func TestHelpHasExamples(t *testing.T) {
	for _, bad := range []string{"linkbench run --loopz 3", "linkbench lod", "linkbench run -c config/NoSuch.properties", "linkbench version extra"} {
		if parseExample(strings.Fields(bad)) == nil {
			t.Errorf("%q parses", bad)
		}
	}
	root := newApp(nil, nil).rootCmd()
	for _, c := range append(root.Commands(), root) {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		var out bytes.Buffer
		args := []string{c.Name(), "--help"}
		if c == root {
			args = []string{"--help"}
		}
		a := newApp(&out, &out)
		if err := a.execute(context.Background(), args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		help := out.String()
		_, ex, ok := strings.Cut(help, "Examples:\n")
		ex, _, _ = strings.Cut(ex, "\n\n")
		lines := strings.Split(ex, "\n")
		if !ok || len(lines) < 2 || len(lines) > 3 || !strings.Contains(help, "More in the source tree: ") || !strings.Contains(help, "docs/") {
			t.Errorf("%s --help: %d examples, or no pointer to the docs:\n%s", c.Name(), len(lines), help)
		}
		for _, l := range lines {
			l, _, _ = strings.Cut(l, "#")
			l, _, _ = strings.Cut(l, "|")
			l, _, _ = strings.Cut(l, ">")
			for _, cmdline := range strings.Split(l, "&&") {
				if err := parseExample(strings.Fields(cmdline)); err != nil {
					t.Errorf("%s --help: example %q: %v", c.Name(), strings.TrimSpace(cmdline), err)
				}
			}
		}
	}
}

// parseExample parses a command line as linkbench would, without running
// it: its command, flags and arguments must exist, and a config file it
// names must be one the repository ships.
func parseExample(words []string) error {
	if len(words) == 0 || words[0] != "linkbench" {
		return fmt.Errorf("does not start with linkbench")
	}
	root := newApp(nil, nil).rootCmd()
	args, err := normalizeArgs(root, words[1:])
	if err != nil {
		return err
	}
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return err
	}
	if c := cmd.Flag("config"); c != nil && c.Value.String() != "" {
		if _, err := os.Stat(filepath.Join("..", "..", c.Value.String())); err != nil {
			return err
		}
	}
	return nil
}

// TestUnknownStoreSuggestsOne: a mistyped store names the one meant.
func TestUnknownStoreSuggestsOne(t *testing.T) {
	for in, want := range map[string]string{
		"sqllite":   `unknown store "sqllite" (-D); did you mean sqlite? (known: `,
		"postgress": "did you mean postgres?",
		"nosuchdb":  `unknown store "nosuchdb" (-D) (known: `,
	} {
		_, errOut, code := runCLI(t, t.TempDir(), "config", "-D", "store="+in)
		if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "mongodb, mysql, pebble, postgres") {
			t.Errorf("store=%s: exit %d %s", in, code, errOut)
		}
	}
}

// TestComparisonBesideTheBundles: report A B writes comparison.html in the
// directory that holds the bundles, not in the current one, or where
// --out (-o, --output) says.
func TestComparisonBesideTheBundles(t *testing.T) {
	results := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = runApp("-c", repoConfig(t, "LinkConfigMemory.properties"), "-D", "maxid1=1001", "-D", "nlinks_func=const",
				"-D", "nlinks_default=2", "-D", "maxtime=1", "-D", "warmup_time=0", "-D", "requesters=1", "--results-dir", filepath.Join(results, fmt.Sprint(i)), "-l", "-r")
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	a, b := onlyBundle(t, filepath.Join(results, "0")), onlyBundle(t, filepath.Join(results, "1"))
	// Bundles in one results directory.
	same := filepath.Join(results, "same")
	os.Mkdir(same, 0o755)
	os.Rename(a, filepath.Join(same, filepath.Base(a)+"-a"))
	os.Rename(b, filepath.Join(same, filepath.Base(b)+"-b"))
	a, b = filepath.Join(same, filepath.Base(a)+"-a"), filepath.Join(same, filepath.Base(b)+"-b")
	work := t.TempDir()
	if out, errOut, code := runCLI(t, work, "report", a, b); code != 0 || !strings.Contains(out, "report written to "+filepath.Join(same, "comparison.html")) {
		t.Fatalf("report A B: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(same, "comparison.html")); err != nil {
		t.Error(err)
	}
	if left := files(t, work); len(left) > 0 {
		t.Errorf("report A B wrote %v into the current directory", left)
	}
	// Bundles in different directories: their common parent.
	other := filepath.Join(results, "1", "later")
	os.MkdirAll(other, 0o755)
	os.Rename(b, filepath.Join(other, filepath.Base(b)))
	if _, errOut, code := runCLI(t, work, "report", a, filepath.Join(other, filepath.Base(b))); code != 0 {
		t.Fatalf("report A B apart: %s", errOut)
	}
	if _, err := os.Stat(filepath.Join(results, "comparison.html")); err != nil {
		t.Errorf("bundles apart: %v", err)
	}
	for _, flag := range []string{"--out", "-o", "--output"} {
		dest := filepath.Join(t.TempDir(), "ab.html")
		if _, errOut, code := runCLI(t, work, "report", a, filepath.Join(other, filepath.Base(b)), flag, dest); code != 0 {
			t.Fatalf("%s: %s", flag, errOut)
		}
		if _, err := os.Stat(dest); err != nil {
			t.Errorf("%s: %v", flag, err)
		}
	}
}
