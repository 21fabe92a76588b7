package storetest

import (
	"os"
	"testing"
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
