package main

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestNormalizeArgs(t *testing.T) {
	got := normalizeArgs([]string{"-c", "x", "-csvstats", "a.csv", "-csvstream=b.csv", "-Dmaxid1=5", "-l"})
	want := []string{"-c", "x", "--csvstats", "a.csv", "--csvstream=b.csv", "-Dmaxid1=5", "-l"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q want %q", got, want)
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
