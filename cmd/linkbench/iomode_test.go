package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestRunSizesTheStoreForItsRequesters: a request phase alone opens the
// store for its requesters, not for the config's loaders, so io_mode=auto
// chooses from the requester count: 2 requesters with 40 loaders in the
// file wait in the kernel (blocking). Sized for the loaders, they used Go's
// poller on every MariaDB run of config/LinkConfigMysql.properties.
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
	out, errOut, code := runCLI(t, dir, append([]string{"run", "-D", "requesters=2", "-D", "maxtime=1", "-D", "requests=0", "-D", "warmup_time=0"}, common...)...)
	if code != 0 || !strings.Contains(out, "REQUEST PHASE COMPLETED") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
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
	if got := res.StoreSettings["io_mode"]; got != "blocking" {
		t.Errorf("io_mode of a 2-requester run = %q, want blocking (store settings %v)", got, res.StoreSettings)
	}
}
