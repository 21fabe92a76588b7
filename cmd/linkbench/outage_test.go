package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestServerOutageMidRun kills -9 the real server during a request phase and
// restarts it 3 s later: the run goes on to its end with exit code 0, the
// failures are counted, the error chart shows the outage, and check passes.
//
// It kills shared servers, so it runs on its own after the other tests:
// scripts/test.sh sets LINKBENCH_OUTAGE_TESTS=1 for a separate go test run.
// Reliability(server): server killed (kill -9) mid-run, restarted 3 s later (PostgreSQL, MariaDB; real server, `make test-outage`) | requesters back off (50 ms doubling to 1 s) and reconnect; the failed requests are counted per op and show as a few seconds of errors in the report's error chart; the run ends at maxtime with exit 0; `check` then finds 0 mismatches
func TestServerOutageMidRun(t *testing.T) {
	for _, c := range outageServers {
		t.Run(c.name, func(t *testing.T) {
			dir, common, script := outageLoad(t, c, 5001)
			type result struct {
				out, errOut string
				code        int
			}
			done := make(chan result, 1)
			go func() {
				out, errOut, code := runCLI(t, dir, append([]string{"run", "-D", "requesters=4", "-D", "maxtime=15", "-D", "requests=0",
					"-D", "max_failed_requests=1000"}, common...)...)
				done <- result{out, errOut, code}
			}()
			time.Sleep(3 * time.Second) // let the run get going before the outage
			killedAt := time.Now()
			if out, err := exec.Command("bash", script, "kill").CombinedOutput(); err != nil {
				t.Fatalf("kill: %v %s", err, out)
			}
			time.Sleep(3 * time.Second) // the outage lasts 3 s
			if out, err := exec.Command("bash", script, "restart").CombinedOutput(); err != nil {
				t.Fatalf("restart: %v %s", err, out)
			}
			backAt := time.Now() // the restart script returns once the server accepts connections
			r := <-done
			if r.code != 0 || !strings.Contains(r.out, "REQUEST PHASE COMPLETED") {
				t.Fatalf("run: exit %d\n%s\n%s", r.code, r.out, r.errOut)
			}
			b, err := os.ReadFile(latestBundle(t, dir, "request"))
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Totals struct {
					Requests, Errors int64
				} `json:"totals"`
				Intervals []struct {
					Errors   int64     `json:"errors"`
					Count    int64     `json:"count"`
					End      time.Time `json:"time"`
					Duration float64   `json:"duration_sec"`
				} `json:"intervals"`
			}
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			// Failures belong to the outage: no interval that ended before
			// the kill or began well after the server was back has any,
			// and the run served requests again after it.
			const reconnectSlack = 3 * time.Second
			recovered := false
			for i, iv := range res.Intervals {
				start := iv.End.Add(-time.Duration(iv.Duration * float64(time.Second)))
				switch {
				case iv.Errors > 0 && (iv.End.Before(killedAt) || start.After(backAt.Add(reconnectSlack))):
					t.Errorf("interval %d (%s - %s) has %d errors outside the outage (kill %s, server back %s)", i,
						start.Format("15:04:05.000"), iv.End.Format("15:04:05.000"), iv.Errors, killedAt.Format("15:04:05.000"), backAt.Format("15:04:05.000"))
				case start.After(killedAt.Add(time.Second)) && iv.Count > 0:
					// Served after the operations in flight at the kill
					// failed: only the restarted server can have answered.
					recovered = true
				}
			}
			if res.Totals.Errors == 0 || !recovered || res.Totals.Requests < 1000 {
				t.Fatalf("errors %d, %d requests, recovered %v: the outage should show as counted failures and the run go on after it",
					res.Totals.Errors, res.Totals.Requests, recovered)
			}
			out, errOut, code := runCLI(t, dir, append([]string{"check"}, common...)...)
			if code != 0 || !strings.Contains(out, "check passed") {
				t.Fatalf("check after the outage: exit %d\n%s\n%s", code, out, errOut)
			}
		})
	}
}

// TestLoadResumesAfterServerKill kills -9 PostgreSQL in the middle of a
// load, restarts it, and finishes the load with load --resume: the graph
// must equal an uninterrupted load's, row for row.
// Reliability(load): server killed (kill -9) during a load (PostgreSQL; real server, `make test-outage`) | the load fails with exit 1 and the `--resume` hint; after a restart `load --resume` finishes it, row for row equal to an uninterrupted load
func TestLoadResumesAfterServerKill(t *testing.T) {
	if os.Getenv("LINKBENCH_OUTAGE_TESTS") != "1" {
		t.Skip("set LINKBENCH_OUTAGE_TESTS=1 (make test-outage) to run the outage tests")
	}
	url := pgURL(t)
	script, _ := filepath.Abs(filepath.Join("..", "..", "scripts", "postgres.sh"))
	dir := t.TempDir()
	graph := []string{"-c", repoConfig(t, "LinkConfigPgsql.properties"), "-D", "url=" + url, "-D", "maxid1=60001",
		"-D", "loaders=2", "-D", "load_random_seed=77", "-D", "load_time_ms=1700000000000", "-D", "progressfreq=1", "--no-results"}
	type result struct {
		errOut string
		code   int
	}
	done := make(chan result, 1)
	linksWritten := newLineWatch(func(line string) bool {
		// A progress line with some links done: part of the graph is written.
		return strings.Contains(line, "inserting links") && !strings.Contains(line, "inserting links 0/")
	})
	go func() {
		// One try per bulk call: the load fails as soon as the server is gone.
		_, errOut, code := runCLIWatching(t, dir, linksWritten, append([]string{"load", "--truncate", "-D", "pg_schema=lbresume", "-D", "retry_attempts=1"}, graph...)...)
		done <- result{errOut, code}
	}()
	select {
	case <-linksWritten.seen:
	case r := <-done:
		t.Fatalf("the load ended before it reported links written: exit %d\n%s", r.code, r.errOut)
	}
	if out, err := exec.Command("bash", script, "kill").CombinedOutput(); err != nil {
		t.Fatalf("kill: %v %s", err, out)
	}
	start := time.Now()
	r := <-done
	t.Logf("the load failed %v after the kill", time.Since(start))
	if out, err := exec.Command("bash", script, "restart").CombinedOutput(); err != nil {
		t.Fatalf("restart: %v %s", err, out)
	}
	if r.code != 1 || !strings.Contains(r.errOut, "load --resume") {
		t.Fatalf("load during the outage: exit %d, want 1 and a hint to resume\n%s", r.code, r.errOut)
	}
	if _, errOut, code := runCLI(t, dir, append([]string{"load", "--resume", "-D", "pg_schema=lbresume"}, graph...)...); code != 0 || !strings.Contains(errOut, "resuming the interrupted load") {
		t.Fatalf("resume: exit %d\n%s", code, errOut)
	}
	t.Logf("resumed %v after the kill", time.Since(start))
	start = time.Now()
	if _, errOut, code := runCLI(t, dir, append([]string{"load", "--truncate", "-D", "pg_schema=lbfull"}, graph...)...); code != 0 {
		t.Fatalf("reference load: %s", errOut)
	}
	t.Logf("reference load %v", time.Since(start))
	if a, b := pgGraphDigest(t, url, "lbresume"), pgGraphDigest(t, url, "lbfull"); a != b {
		t.Fatalf("the resumed graph differs from an uninterrupted load's:\n%s\nvs\n%s", a, b)
	}
}

// pgGraphDigest digests every row of the three tables of a schema (an
// order-independent sum of row hashes, with the row counts).
func pgGraphDigest(t *testing.T, url, schema string) string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var b strings.Builder
	for _, q := range []string{
		"SELECT count(*), sum(hashtextextended(concat_ws(',', id1, id2, link_type, visibility, encode(data, 'hex'), time, version), 0))::text FROM %s.linktable",
		"SELECT count(*), sum(hashtextextended(concat_ws(',', id, link_type, count, time, version), 0))::text FROM %s.counttable",
		"SELECT count(*), sum(hashtextextended(concat_ws(',', id, type, version, time, encode(data, 'hex')), 0))::text FROM %s.nodetable",
	} {
		var n int64
		var sum string
		if err := conn.QueryRow(context.Background(), fmt.Sprintf(q, pgx.Identifier{schema}.Sanitize())).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%d rows %s\n", n, sum)
	}
	return b.String()
}

// lineWatch is an io.Writer that closes seen at the first line match
// accepts.
type lineWatch struct {
	mu    sync.Mutex
	part  []byte
	match func(string) bool
	seen  chan struct{}
	once  sync.Once
}

func newLineWatch(match func(string) bool) *lineWatch {
	return &lineWatch{match: match, seen: make(chan struct{})}
}

func (w *lineWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, b...)
	for {
		// Progress bars redraw with carriage returns: both end a line.
		i := bytes.IndexAny(w.part, "\r\n")
		if i < 0 {
			break
		}
		if w.match(string(w.part[:i])) {
			w.once.Do(func() { close(w.seen) })
		}
		w.part = w.part[i+1:]
	}
	return len(b), nil
}
