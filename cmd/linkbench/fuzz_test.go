package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// FuzzCommandLine: no command line makes the argument parsing, the -D
// overrides or the config checks panic, and a rejected one gets an error
// with a message. The fields of the input (split at NUL) follow the
// config command, which parses and checks everything a run would and
// opens no store; a '/' becomes '_' so that no path reaches a device or
// a file outside the test's directory.
// Reliability(input): any command line and -D values | no panic; a rejection says why (seed corpus in testdata/fuzz; `make test` fuzzes it with 20,000 inputs)
func FuzzCommandLine(f *testing.F) {
	for _, seed := range []string{
		"-D\x00maxid1=5001",
		"-Dmaxid1=1e18\x00--strict",
		"-D\x00novalue",
		"-csvstats=out.csv\x00-csvstream\x00s.csv\x00-L\x00log",
		"-D\x00linkstore=com.facebook.LinkBench.LinkStoreMysql\x00-D\x00url=mysql://u:p@ss@h:1_db",
		"-D\x00requesters=100000\x00-D\x00loaders=-1",
		"--shard\x001_3\x00-D\x00nlinks_func=const\x00-D\x00nlinks_default=1e15",
		"-c\x00missing.properties",
		"-D\x00stages=100:5,200:x\x00-D\x00arrival_rate=NaN",
		"-D\x00password=secret\x00-D\x00password_env=NOPE",
		"-D\x00read_function=com.facebook.LinkBench.distributions.ZipfDistribution\x00-D\x00read_shape=0",
		"--\x00trailing",
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, line string) {
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"config"}, strings.Split(strings.ReplaceAll(line, "/", "_"), "\x00")...)
		a := newApp(io.Discard, io.Discard)
		err := a.execute(context.Background(), args)
		if err != nil && strings.TrimSpace(a.errorText(err)) == "linkbench:" {
			t.Fatalf("%q: an error without a message", args)
		}
		// The helpers of the other commands' flags.
		normalizeArgs(a.rootCmd(), args)
		parseShard(line)
		parseRates(line)
	})
}
