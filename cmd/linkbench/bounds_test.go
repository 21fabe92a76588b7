package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHugeDurationsRefusedBeforeWork: durations whose sums or products
// would overflow the deadlines (and before, printed "at most
// -1914857h49m" and "0 requests done in -4 seconds", then exited 0) are
// refused with one line before the store is opened.
func TestHugeDurationsRefusedBeforeWork(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-D", "loops=1e9"}, "loops = \"1e9\""},
		{[]string{"run", "--loops", "400", "-D", "maxtime=100000"}, "more than a year"},
		{[]string{"run", "-D", "stages=1000:1e10"}, "stages = \"1000:1e10\""},
		{[]string{"run", "-D", "maxtime=1e10"}, "at most 31,536,000 seconds"},
		{[]string{"run", "-D", "warmup_time=3e7", "-D", "maxtime=3e7"}, "more than a year"},
		{[]string{"sweep", "--point-time", "1e10"}, "at most a year together"},
	} {
		work := t.TempDir()
		start := time.Now()
		_, errOut, code := runCLI(t, work, c.args...)
		if code != 1 || !strings.Contains(errOut, c.want) || time.Since(start) > 10*time.Second || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("%v: exit %d after %v: %s", c.args, code, time.Since(start), errOut)
		}
		if _, err := os.Stat(filepath.Join(work, "linkbench-data")); err == nil {
			t.Errorf("%v: the store was opened", c.args)
		}
	}
}
