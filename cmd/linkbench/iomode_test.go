package main

import (
	"encoding/json"
	"fmt"
	"os"
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
// throttles them, and the poller otherwise.
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
	// One more than io_mode=auto serves with blocking connections when
	// they run flat out (4 per CPU).
	type runCase struct {
		name string
		args []string
		want string
	}
	cases := []runCase{{"2 requesters", []string{"-D", "requesters=2"}, "blocking"}}
	// Kept under the test server's max_connections (200).
	if n := 4*runtime.NumCPU() + 1; n <= 65 {
		many := fmt.Sprint(n)
		cases = append(cases,
			runCase{many + " requesters", []string{"-D", "requesters=" + many}, "poller"},
			runCase{many + " requesters at 100 requests/s each", []string{"-D", "requesters=" + many, "-D", "requestrate=100"}, "blocking"},
			runCase{many + " requesters sharing 500 arrivals/s", []string{"-D", "requesters=" + many, "-D", "arrival_rate=500"}, "blocking"})
	} else {
		t.Logf("%d CPUs: the runs with more requesters than io_mode=auto's limit would need %d connections; not run", runtime.NumCPU(), 2*n)
	}
	for _, c := range cases {
		args := append([]string{"run", "-D", "maxtime=1", "-D", "requests=0", "-D", "warmup_time=0"}, c.args...)
		out, errOut, code := runCLI(t, dir, append(args, common...)...)
		if code != 0 || !strings.Contains(out, "REQUEST PHASE COMPLETED") {
			t.Fatalf("%s: run: exit %d\n%s\n%s", c.name, code, out, errOut)
		}
		b, err := os.ReadFile(latestBundle(t, dir, "request"))
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			StoreSettings map[string]string `json:"store_settings"`
		}
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		if got := res.StoreSettings["io_mode"]; got != c.want {
			t.Errorf("io_mode of a run of %s = %q, want %s (store settings %v)", c.name, got, c.want, res.StoreSettings)
		}
	}
}
