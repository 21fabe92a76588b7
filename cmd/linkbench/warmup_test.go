package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// cancelOn is a writer that cancels a context when a line with text is
// written to it.
type cancelOn struct {
	text   string
	cancel context.CancelFunc
}

func (c cancelOn) Write(b []byte) (int, error) {
	if strings.Contains(string(b), c.text) {
		c.cancel()
	}
	return len(b), nil
}

// TestStopInWarmupWritesNoNegativeTime: a run stopped during its warm-up
// prints and writes a length of 0, not "done in -4 seconds" and
// elapsed_sec: -5.0 as before.
func TestStopInWarmupWritesNoNegativeTime(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut, code := runCLIWith(t, ctx, dir, cancelOn{"warming up for", cancel}, "-c", repoConfig(t, "LinkConfigMemory.properties"),
		"-D", "maxid1=1001", "-D", "nlinks_func=const", "-D", "nlinks_default=2", "-D", "warmup_time=60", "-D", "maxtime=60",
		"-D", "requesters=2", "-l", "-r")
	// In the process, main turns the cancelled context into exit 130.
	if code != 0 || !strings.Contains(out, "requests done in 0 seconds") || strings.Contains(out, " -") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(latestBundle(t, dir, "request"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		ElapsedSec float64 `json:"elapsed_sec"`
	}
	if err := json.Unmarshal(b, &res); err != nil || res.ElapsedSec < 0 {
		t.Fatalf("elapsed_sec %v (%v)", res.ElapsedSec, err)
	}
}
