package main

import (
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/store/storetest"
)

// noAnswer runs command against a server store at addr with
// connect_timeout = bound seconds, and checks that it exits 1 within the
// bound and a little more, with one line naming the address and the
// bound.
func noAnswer(t *testing.T, storeName, kind, addr string, extra []string, command ...string) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	args := append(append([]string{}, command...), "-D", "store="+storeName, "-D", "host="+host, "-D", "port="+port, "-D", "connect_timeout=1", "-D", "maxid1=1001", "--no-results")
	start := time.Now()
	_, errOut, code := runCLI(t, t.TempDir(), append(args, extra...)...)
	took := time.Since(start)
	want := "cannot connect to " + kind + " at " + addr + ": no answer within 1 s (connect_timeout)"
	if code != 1 || !strings.Contains(errOut, want) || took > 3*time.Second {
		t.Errorf("%s %v: exit %d after %v: %s\nwant exit 1 within 1 s and %q", storeName, command, code, took, errOut, want)
	}
}

// TestSilentServerEndsEveryCommand: load, run and check against a server
// that accepts connections and never answers exit 1 at connect_timeout
// with one line naming the address, for every server store. Before, the
// MySQL store waited forever (its first ping had no deadline), and the
// PostgreSQL store's message said 15 s where it waited 10.
func TestSilentServerEndsEveryCommand(t *testing.T) {
	for _, s := range []struct{ store, kind string }{{"postgres", "PostgreSQL"}, {"mysql", "MySQL"}, {"mongodb", "MongoDB"}} {
		addr := storetest.SilentListener(t)
		for _, command := range [][]string{{"load"}, {"run"}, {"check"}} {
			noAnswer(t, s.store, s.kind, addr, nil, command...)
		}
	}
}

// TestHungServerBeforeConnecting: a real server stopped with SIGSTOP
// before the command is a server that does not answer: load, run and
// check exit 1 at connect_timeout naming it. It stops shared servers, so
// it runs with the outage tests (LINKBENCH_OUTAGE_TESTS=1).
// Reliability(server): server stopped with SIGSTOP before load, run or check (PostgreSQL, MariaDB, FerretDB; real server, `make test-outage`) | exit 1 at `connect_timeout` with one line naming the server's address and the bound
func TestHungServerBeforeConnecting(t *testing.T) {
	for _, c := range []struct{ name, env, script, store, kind string }{
		{"postgres", "LINKBENCH_TEST_PG_URL", "postgres.sh", "postgres", "PostgreSQL"},
		{"mariadb", "LINKBENCH_TEST_MYSQL_URL", "mariadb.sh", "mysql", "MySQL"},
		{"ferretdb", "LINKBENCH_TEST_MONGO_URL", "ferretdb.sh", "mongodb", "MongoDB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, script := outageServer(t, c.env, c.script)
			addr := hostPort(t, u)
			serverScript(t, script, "pause")
			defer serverScript(t, script, "resume")
			for _, command := range [][]string{{"load"}, {"run"}, {"check"}} {
				noAnswer(t, c.store, c.kind, addr, []string{"-D", "url=" + u}, command...)
			}
		})
	}
}

// hostPort is the host:port of a server url.
func hostPort(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
