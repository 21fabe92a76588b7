package storetest

import (
	"context"
	"os"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/sysmon"
)

// Server env variables and the scripts that start their servers.
const (
	PostgresEnv = "LINKBENCH_TEST_PG_URL"
	MySQLEnv    = "LINKBENCH_TEST_MYSQL_URL"
	MongoEnv    = "LINKBENCH_TEST_MONGO_URL"
)

var scripts = map[string]string{PostgresEnv: "postgres.sh", MySQLEnv: "mariadb.sh", MongoEnv: "ferretdb.sh"}

// ServerURL returns the url of a throwaway test server from env (make test
// sets them). A missing one skips the test, except under CI=true, where it
// is a failure: CI must run every server test.
func ServerURL(t testing.TB, env string) string {
	t.Helper()
	u := os.Getenv(env)
	if u == "" {
		script := scripts[env]
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set; run scripts/%s start and export its url", env, script)
		}
		t.Skipf("%s not set (scripts/%s start)", env, script)
	}
	return u
}

// CheckLocalServer asserts that a store whose test server runs on this
// machine (as scripts/ start it) names that server: its pid file, or its
// pid, leads to a live process here, which the results' resource figures
// then follow.
func CheckLocalServer(t *testing.T, st store.ServerLocator) {
	t.Helper()
	infos, err := st.Servers(context.Background())
	if err != nil || len(infos) != 1 {
		t.Fatalf("Servers: %v, %v", infos, err)
	}
	in := infos[0]
	pid, why := sysmon.Locate("", sysmon.Server{Addr: in.Addr, PID: in.PID, PIDFile: in.PIDFile, DataDir: in.DataDir})
	if pid == 0 {
		t.Fatalf("the local test server was not located from %+v: %s", in, why)
	}
}
