package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/store/storetest"
)

// TestLoadRefusedWhileRunning: `load --truncate` against a store a run is
// using is refused with one line naming the run's process, and the run
// goes on undisturbed: check passes after it. Before, on SQLite both
// exited 0 and check then found 14 count mismatches; on PostgreSQL the
// load failed with a duplicate key and every --resume failed again.
// Reliability(writer): `load --truncate` (or a load, `init --drop`) while a run uses the store (SQLite, PostgreSQL, MariaDB) | refused at once with one line naming the run's command, pid, host and start time, exit 1; the run goes on and `check` passes after it
func TestLoadRefusedWhileRunning(t *testing.T) {
	for _, c := range []struct {
		name string
		args func(t *testing.T, dir string) []string
	}{
		{"sqlite", func(t *testing.T, dir string) []string {
			return []string{"-D", "store=sqlite", "-D", "sqlite_path=" + filepath.Join(dir, "lb.db")}
		}},
		{"postgres", func(t *testing.T, dir string) []string {
			return []string{"-c", repoConfig(t, "LinkConfigPgsql.properties"), "-D", "url=" + storetest.ServerURL(t, storetest.PostgresEnv),
				"-D", fmt.Sprintf("pg_schema=lblock%d", os.Getpid())}
		}},
		{"mariadb", func(t *testing.T, dir string) []string {
			return []string{"-c", repoConfig(t, "LinkConfigMysql.properties"), "-D", "url=" + storetest.ServerURL(t, storetest.MySQLEnv)}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			common := append(c.args(t, dir), "-D", "nlinks_func=const", "-D", "nlinks_default=5", "-D", "maxid1=3001", "--no-results")
			if _, errOut, code := runCLI(t, dir, append([]string{"load", "--truncate"}, common...)...); code != 0 {
				t.Fatalf("load: %s", errOut)
			}
			done := make(chan [3]string, 1)
			go func() {
				out, errOut, code := runCLI(t, dir, append([]string{"run", "-D", "maxtime=4", "-D", "warmup_time=0", "-D", "requests=0", "-D", "requesters=2"}, common...)...)
				done <- [3]string{out, errOut, fmt.Sprint(code)}
			}()
			time.Sleep(1500 * time.Millisecond)
			_, errOut, code := runCLI(t, dir, append([]string{"load", "--truncate"}, common...)...)
			if code != 1 || !strings.Contains(errOut, "in use by another process: linkbench run, pid ") || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
				t.Errorf("load --truncate during a run: exit %d\n%s", code, errOut)
			}
			r := <-done
			if r[2] != "0" {
				t.Fatalf("the run: exit %s\n%s", r[2], r[1])
			}
			if out, errOut, code := runCLI(t, dir, append([]string{"check"}, common...)...); code != 0 {
				t.Fatalf("check after the run: exit %d\n%s\n%s", code, out, errOut)
			}
		})
	}
}
