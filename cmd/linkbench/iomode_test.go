package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRunSizesTheStoreForItsRequesters: a request phase alone opens the
// store for its requesters, not for the config's loaders, so io_mode=auto
// chooses from the requester count: 2 requesters with 40 loaders in the
// file wait in the kernel (blocking). Sized for the loaders, they used Go's
// poller on every MariaDB run of config/LinkConfigMysql.properties.
// Requesters too many for blocking connections get them when requestrate
// or arrival_rate throttles them, and the poller otherwise; a sweep
// chooses point by point. How a connection waits is the driver's own
// choice; what it sends is not: every run's link writes are the
// reference's statements (link_writes).
func TestRunSizesTheStoreForItsRequesters(t *testing.T) {
	url := pgURL(t)
	schema := fmt.Sprintf("lbiomode%d", os.Getpid())
	dir := t.TempDir()
	common := []string{"-c", repoConfig(t, "LinkConfigPgsql.properties"), "-D", "url=" + url, "-D", "pg_schema=" + schema,
		"-D", "nlinks_func=const", "-D", "nlinks_default=2", "-D", "maxid1=501", "-D", "loaders=40"}
	t.Cleanup(func() { pgExec(t, url, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	if out, errOut, code := runCLI(t, dir, append([]string{"load", "--truncate", "--no-results"}, common...)...); code != 0 {
		t.Fatalf("load: exit %d\n%s\n%s", code, out, errOut)
	}
	// A request phase alone gets blocking connections up to 8 requesters
	// per CPU, paced or flat out, and the poller beyond.
	type runCase struct {
		name string
		args []string
		want string
	}
	cases := []runCase{{"2 requesters", []string{"-D", "requesters=2"}, "blocking"}}
	limit := 8 * runtime.NumCPU()
	// Kept under the test server's max_connections (200).
	if n := limit + 1; n <= 65 {
		at, many := fmt.Sprint(limit), fmt.Sprint(n)
		cases = append(cases,
			runCase{at + " requesters", []string{"-D", "requesters=" + at}, "blocking"},
			runCase{at + " requesters at 100 requests/s each", []string{"-D", "requesters=" + at, "-D", "requestrate=100"}, "blocking"},
			runCase{many + " requesters", []string{"-D", "requesters=" + many}, "poller"},
			runCase{many + " requesters at 100 requests/s each", []string{"-D", "requesters=" + many, "-D", "requestrate=100"}, "poller"})
	} else {
		t.Logf("%d CPUs: the runs with more requesters than io_mode=auto's limit would need %d connections; not run", runtime.NumCPU(), 2*n)
	}
	for _, c := range cases {
		args := append([]string{"run", "-D", "maxtime=1", "-D", "requests=0", "-D", "warmup_time=0"}, c.args...)
		out, errOut, code := runCLI(t, dir, append(args, common...)...)
		if code != 0 || !strings.Contains(out, "REQUEST PHASE COMPLETED") {
			t.Fatalf("%s: run: exit %d\n%s\n%s", c.name, code, out, errOut)
		}
		got, lw, _ := bundleIOMode(t, latestBundle(t, dir, "request"))
		if got != c.want || lw != "reference" {
			t.Errorf("a run of %s: io_mode %q, link_writes %q; want %s, reference", c.name, got, lw, c.want)
		}
	}
	if len(cases) == 1 {
		return
	}
	// A sweep's points are request phases alone, the calibration too: one
	// store with blocking connections serves the point at 100 requests/s
	// per requester and the one at 2,000.
	slow, fast := fmt.Sprint(100*limit), fmt.Sprint(2000*limit)
	sweepDir := t.TempDir()
	args := append([]string{"sweep", "--rates", slow + "," + fast, "--point-time", "1", "-D", "requesters=" + fmt.Sprint(limit), "-D", "warmup_time=0"}, common...)
	if out, errOut, code := runCLI(t, sweepDir, args...); code != 0 || !strings.Contains(out, "SWEEP COMPLETED. 2 points.") {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errOut)
	}
	points, _ := filepath.Glob(filepath.Join(sweepDir, "linkbench-results", "*-request", "summary.json"))
	if len(points) != 2 {
		t.Fatalf("sweep point bundles %v, want 2", points)
	}
	want := map[string]string{slow: "blocking", fast: "blocking"}
	for _, p := range points {
		got, lw, rate := bundleIOMode(t, p)
		if got != want[rate] || lw != "reference" {
			t.Errorf("the sweep point at %s requests/s for %d requesters: io_mode %q, link_writes %q; want %s, reference", rate, limit, got, lw, want[rate])
		}
	}
}

// bundleIOMode reads the io_mode and link_writes a request bundle's
// store ran with and the arrival_rate of its configuration.
func bundleIOMode(t *testing.T, path string) (ioMode, linkWrites, arrivalRate string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		StoreSettings map[string]string             `json:"store_settings"`
		Config        []struct{ Key, Value string } `json:"config"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Config {
		if c.Key == "arrival_rate" {
			arrivalRate = c.Value
		}
	}
	return res.StoreSettings["io_mode"], res.StoreSettings["link_writes"], arrivalRate
}
