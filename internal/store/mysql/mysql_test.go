package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
	"github.com/linkbench/linkbench/internal/store/storetest/wiretap"
)

// testURL is the throwaway server of scripts/mariadb.sh. Under CI=true a
// missing server is a failure, never a skip.
func testURL(t testing.TB) string { return storetest.ServerURL(t, storetest.MySQLEnv) }

var dbSeq atomic.Int64

// fresh creates a new database, opens the store on it and drops it
// afterwards; props are extra key, value pairs.
func fresh(t *testing.T, engine string, props ...string) *Store {
	t.Helper()
	base, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("lbtest_%d_%d", os.Getpid(), dbSeq.Add(1))
	admin, err := Open(context.Background(), store.Options{Props: store.MapProps{"url": base.String()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.w.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	u := *base
	u.Path = "/" + name
	p := store.MapProps{"url": u.String(), "mysql_engine": engine}
	for i := 0; i+1 < len(props); i += 2 {
		p[props[i]] = props[i+1]
	}
	s, err := Open(context.Background(), store.Options{Props: p, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		admin.w.Exec("DROP DATABASE IF EXISTS " + name)
		admin.Close()
	})
	return s
}

func TestConformance(t *testing.T) {
	for _, engine := range []string{"innodb", "rocksdb"} {
		// Link writes as the reference's statements (the default) and by
		// the stored procedure.
		for _, mode := range []string{"reference", "routine"} {
			t.Run(engine+"/"+mode, func(t *testing.T) {
				storetest.Run(t, func(t *testing.T) store.Store {
					s := fresh(t, engine, "link_writes", mode)
					if err := s.Init(context.Background(), false); err != nil {
						t.Fatal(err)
					}
					return s
				})
			})
		}
	}
}

func TestEngineAndPartitions(t *testing.T) {
	s := fresh(t, "rocksdb")
	s.partitions = 16
	ctx := context.Background()
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	var engine, opts sql.NullString
	if err := s.r.QueryRow("SELECT engine, create_options FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'linktable'").Scan(&engine, &opts); err != nil {
		t.Fatal(err)
	}
	if !strings.EqualFold(engine.String, "rocksdb") || !strings.Contains(opts.String, "partitioned") {
		t.Fatalf("engine %q options %q", engine.String, opts.String)
	}
}

// Reliability(server): wrong password, server down, missing database, missing tables (real server) | one line naming host:port and the fix, exit 1, password never shown
func TestConnectionErrors(t *testing.T) {
	base, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		mod  func(u *url.URL)
		want []string
	}{
		{"wrong password", func(u *url.URL) { u.User = url.UserPassword(u.User.Username(), "wrong-secret") }, []string{"access denied", base.Host, "check user and password"}},
		{"server down", func(u *url.URL) { u.Host = "127.0.0.1:1" }, []string{"127.0.0.1:1", "connection refused", "scripts/mariadb.sh"}},
		{"missing database", func(u *url.URL) { u.Path = "/no_such_db" }, []string{"database \"no_such_db\" does not exist", "CREATE DATABASE"}},
	} {
		u := *base
		c.mod(&u)
		_, err := Open(context.Background(), store.Options{Props: store.MapProps{"url": u.String()}})
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
		if strings.Contains(err.Error(), "wrong-secret") {
			t.Errorf("%s: the password leaks: %q", c.name, err)
		}
	}
	s := fresh(t, "innodb")
	if err := s.CheckSchema(context.Background()); err == nil || !strings.Contains(err.Error(), "`linkbench load` creates the schema") {
		t.Errorf("missing tables: %v", err)
	}
}

// TestReconnectAfterRestart restarts the server under an open store: calls
// that hit the restart fail as connection errors, later ones succeed.
// Reliability(server): server restarted under an open store (real server) | calls during the restart fail as connection errors, later calls succeed on new connections
func TestReconnectAfterRestart(t *testing.T) {
	storetest.ReconnectAfterRestart(t, "mariadb.sh", 30*time.Second, func(t *testing.T) store.Store {
		testURL(t)
		return fresh(t, "innodb")
	})
}

// TestConcurrentLoadsShareTheDeferredIndex: --shard processes begin their
// loads on one empty table together (each drops the deferred index) and
// end them together (each builds it): no step may fail, and the index
// exists afterwards.
func TestConcurrentLoadsShareTheDeferredIndex(t *testing.T) {
	first := fresh(t, "innodb")
	if err := first.Init(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(testURL(t))
	u.Path = "/" + first.db
	loaders := []store.BulkLoader{first}
	for i := 0; i < 4; i++ {
		s, err := Open(context.Background(), store.Options{Props: store.MapProps{"url": u.String()}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		loaders = append(loaders, s)
	}
	storetest.BeginAndEndLoadsAtOnce(t, loaders)
	var n int
	if err := first.r.QueryRow("SELECT count(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = 'id1_type'", first.t.Link).Scan(&n); err != nil || n == 0 {
		t.Fatalf("index id1_type missing after the loads (%v)", err)
	}
}

func linkWrites(t *testing.T, s *Store) string {
	t.Helper()
	d, err := s.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d.Settings["link_writes"]
}

// TestLinkWritesByTheKeyAlone: link writes go as the reference's
// statements at any number of requesters, paced or flat out, in a request
// phase or beside a load; link_writes = routine calls the procedure,
// which init creates then; without it (a schema made by another tool, an
// older linkbench) routine fails naming the fix rather than send other
// statements; a bad value, and the key that chose before, are refused
// before connecting.
func TestLinkWritesByTheKeyAlone(t *testing.T) {
	ctx := context.Background()
	for k, v := range map[string]string{"link_writes": "auto", "mysql_write_procedure": "true"} {
		_, err := Open(ctx, store.Options{Props: store.MapProps{"url": "mysql://u@127.0.0.1:1/x", k: v}})
		if err == nil || !strings.Contains(err.Error(), k) || !strings.Contains(err.Error(), "routine") {
			t.Errorf("%s = %s: %v", k, v, err)
		}
	}
	made := fresh(t, "innodb")
	if err := made.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + made.db
	for _, o := range []store.Options{{Concurrency: 1, Requests: true}, {Concurrency: 2}, {Concurrency: 16 * runtime.NumCPU(), Requests: true}, {Concurrency: 64}} {
		o.Props = store.MapProps{"url": u.String()}
		s, err := Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := linkWrites(t, s); got != "reference" {
			t.Errorf("link_writes at %d requesters (request phase %v) = %q, want reference", o.Concurrency, o.Requests, got)
		}
		s.Close()
	}
	if res, err := made.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 2, Visibility: 1, Data: []byte("x")}); err != nil || res != graph.Inserted {
		t.Fatalf("AddLink = %v, %v", res, err)
	}

	routine := fresh(t, "innodb", "link_writes", "routine")
	if err := routine.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := linkWrites(t, routine); got != "routine (CALL linkbench_write_linktable)" {
		t.Fatalf("link_writes = %q, want the procedure", got)
	}
	if _, err := routine.w.Exec("DROP PROCEDURE " + routine.writeProc()); err != nil {
		t.Fatal(err)
	}
	routine.st.close()
	if _, err := routine.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 2, Visibility: 1}); !errors.Is(err, graph.ErrSchema) || !strings.Contains(err.Error(), "link_writes=routine") {
		t.Fatalf("AddLink without the procedure: %v, want a schema error naming init", err)
	}
}

// TestProcedureComparesDataAsBytes: an overwrite that changes only the
// case or trailing spaces of the payload is an update. The latin1
// column's collation calls such strings equal, so a procedure comparing
// with it would report Unchanged and keep the old bytes.
func TestProcedureComparesDataAsBytes(t *testing.T) {
	ctx := context.Background()
	s := fresh(t, "innodb", "link_writes", "routine")
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	l := graph.Link{ID1: 7, LinkType: 1, ID2: 8, Visibility: 1, Data: []byte("abc"), Time: 5, Version: 1}
	if _, err := s.AddLink(ctx, &l); err != nil {
		t.Fatal(err)
	}
	for _, data := range []string{"ABC", "ABC  ", "ABC"} {
		l.Data = []byte(data)
		res, err := s.AddLink(ctx, &l)
		if err != nil || res != graph.Updated {
			t.Fatalf("overwrite with %q = %v, %v; want Updated", data, res, err)
		}
		got, err := s.MultigetLinks(ctx, 7, 1, []int64{8}, nil)
		if err != nil || len(got) != 1 || string(got[0].Data) != data {
			t.Fatalf("after overwrite with %q read %+v, %v", data, got, err)
		}
	}
}

// openAs opens another client on db, as user (nil: the test URL's user),
// with props (key, value pairs); it is closed when the test ends.
func openAs(t *testing.T, db string, user *url.Userinfo, props ...string) *Store {
	t.Helper()
	u, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	if user != nil {
		u.User = user
	}
	u.Path = "/" + db
	p := store.MapProps{"url": u.String()}
	for i := 0; i+1 < len(props); i += 2 {
		p[props[i]] = props[i+1]
	}
	s, err := Open(context.Background(), store.Options{Props: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// withOneLink is an initialised InnoDB store with the procedure
// (link_writes = routine) holding the link 1/1/2.
func withOneLink(t *testing.T) *Store {
	t.Helper()
	s := fresh(t, "innodb", "link_writes", "routine")
	if err := s.Init(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddLink(context.Background(), &graph.Link{ID1: 1, LinkType: 1, ID2: 2, Visibility: 1}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestInitWithoutRoutinePrivilege: a user who may not create routines
// still loads and runs with the reference's statements, and a run that
// asks for the procedure is told what is missing.
func TestInitWithoutRoutinePrivilege(t *testing.T) {
	ctx := context.Background()
	admin := fresh(t, "innodb")
	user := fmt.Sprintf("lbnoproc%d", os.Getpid())
	for _, stmt := range []string{
		"CREATE USER '" + user + "'@'127.0.0.1' IDENTIFIED BY 'pw'",
		"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER ON " + admin.db + ".* TO '" + user + "'@'127.0.0.1'",
	} {
		if _, err := admin.w.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { admin.w.Exec("DROP USER '" + user + "'@'127.0.0.1'") })
	s := openAs(t, admin.db, url.UserPassword(user, "pw"), "link_writes", "routine")
	if err := s.Init(ctx, false); err != nil {
		t.Fatalf("init without CREATE ROUTINE: %v", err)
	}
	if _, err := s.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 2, Visibility: 1}); !errors.Is(err, graph.ErrSchema) || !strings.Contains(err.Error(), "privilege") {
		t.Fatalf("AddLink with link_writes = routine and no procedure: %v", err)
	}
	ref := openAs(t, admin.db, url.UserPassword(user, "pw"))
	if res, err := ref.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 2, Visibility: 1}); err != nil || res != graph.Inserted {
		t.Fatalf("AddLink = %v, %v", res, err)
	}
}

// TestProcedureLockTimeoutRollsBack: a lock wait timeout inside the
// procedure is a transient error (the runner retries it) and leaves no
// open transaction behind. InnoDB undoes only the timed-out statement, so
// without the procedure's rollback handler its connection would keep the
// count-row lock taken by the first statement.
func TestProcedureLockTimeoutRollsBack(t *testing.T) {
	ctx := context.Background()
	s := withOneLink(t)
	if got := linkWrites(t, s); !strings.HasPrefix(got, "routine (CALL") {
		t.Fatalf("link_writes = %q", got)
	}
	// One write connection, with a 1 s lock wait timeout.
	s.w.SetMaxOpenConns(1)
	conn, err := s.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	// Hold the link row: the procedure locks the count row, then waits here.
	blocker, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback()
	if _, err := blocker.Exec("SELECT version FROM " + q(s.t.Link) + " WHERE link_type = 1 AND id1 = 1 AND id2 = 2 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	_, err = s.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 2, Visibility: 1, Data: []byte("new")})
	if !graph.IsTransient(err) {
		t.Fatalf("AddLink behind a held link-row lock: %v, want a transient error", err)
	}
	probe, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = probe.Exec("SELECT count FROM " + q(s.t.Count) + " WHERE id = 1 AND link_type = 1 FOR UPDATE NOWAIT")
	probe.Rollback()
	if err != nil {
		t.Fatalf("the count row is still locked after the failed call: %v", err)
	}
	if err := blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	if res, err := s.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 2, Visibility: 1, Data: []byte("new")}); err != nil || res != graph.Updated {
		t.Fatalf("retry = %v, %v; want Updated", res, err)
	}
	if n, err := s.CountLinks(ctx, 1, 1); err != nil || n != 1 {
		t.Fatalf("count = %d, %v; want 1", n, err)
	}
}

// TestCancelAbortsStatementInFlight: request operations do not hand their
// context to the driver's per-statement watcher (see cancel.go), so a
// cancellation has to reach a statement blocked in the server another way:
// the store aborts its sockets. Here the statement waits for a row lock
// (InnoDB would wait 50 s); cancelling returns context.Canceled at once and
// the store keeps working on new connections.
func TestCancelAbortsStatementInFlight(t *testing.T) {
	for _, onSession := range []bool{false, true} {
		t.Run(map[bool]string{false: "store", true: "session"}[onSession], func(t *testing.T) {
			s := withOneLink(t)
			var ops store.Store = s
			if onSession {
				ops = s.Session()
				defer ops.Close()
			}
			cancelInFlight(t, s, ops)
		})
	}
}

// cancelInFlight cancels a link write of ops (s or a session of s) while
// the write waits for a lock another client holds.
func cancelInFlight(t *testing.T, s *Store, ops store.Store) {
	bg := context.Background()
	// The lock holder is another client: the abort closes this store's sockets.
	other := openAs(t, s.db, nil)
	blocker, err := other.r.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback()
	if _, err := blocker.Exec("SELECT count FROM " + q(s.t.Count) + " WHERE id = 1 AND link_type = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	res := make(chan error, 1)
	go func() {
		_, err := ops.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 3, Visibility: 1})
		res <- err
	}()
	// Cancel once the write's count-row statement runs: it is blocked
	// until the blocker rolls back.
	admin := other.load
	for waited := time.Duration(0); ; waited += 10 * time.Millisecond {
		var n int
		if err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.processlist WHERE db = DATABASE() AND info LIKE 'INSERT INTO `counttable`%'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		select {
		case err := <-res:
			t.Fatalf("the write returned %v before waiting for the lock", err)
		default:
		}
		if waited > 10*time.Second {
			rows, _ := admin.Query("SELECT COALESCE(state, ''), COALESCE(info, '') FROM information_schema.processlist WHERE db = DATABASE()")
			var states []string
			for rows != nil && rows.Next() {
				var st, info string
				rows.Scan(&st, &info)
				states = append(states, st+": "+info)
			}
			t.Fatalf("the write never reached the count row; sessions: %q", states)
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-res:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled write returned %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("cancelled write took %v to return", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("cancelled write still blocked after 20 s")
	}
	if err := blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	// The server may still have finished the aborted write once the lock
	// was free (closing a socket does not stop a statement; go-sql-driver's
	// own cancellation closes the connection too): either way the count
	// matches the links.
	if res, err := s.AddLink(bg, &graph.Link{ID1: 1, LinkType: 1, ID2: 3, Visibility: 1}); err != nil || (res != graph.Inserted && res != graph.Unchanged) {
		t.Fatalf("write after the abort = %v, %v", res, err)
	}
	if n, err := s.CountLinks(bg, 1, 1); err != nil || n != 2 {
		t.Fatalf("count = %d, %v; want 2", n, err)
	}
}

// TestLockRules: named locks (GET_LOCK slots) keep a load from running
// beside a run on one database, and name the holder.
func TestLockRules(t *testing.T) {
	db := fresh(t, "innodb").db
	storetest.LockRules(t, func(t *testing.T) store.Store { return openAs(t, db, nil) })
}

// TestLockOfAHolderThatJustLetGo: a holder that lets go between the
// refusal and the lookup of its name (a stopped load's connection
// closing as the resumed one starts) does not refuse the lock on behalf
// of "another connection": the locks are tried again and taken.
func TestLockOfAHolderThatJustLetGo(t *testing.T) {
	db := fresh(t, "innodb").db
	ctx := context.Background()
	for _, mode := range []store.LockMode{store.LockLoad, store.LockRun} {
		holder := openAs(t, db, nil)
		release, err := holder.Lock(ctx, store.LockLoad, store.Holder("stopped load"))
		if err != nil {
			t.Fatal(err)
		}
		resumed := openAs(t, db, nil)
		refusals := 0
		resumed.refused = func() {
			if refusals++; refusals == 1 {
				release()
			}
		}
		again, err := resumed.Lock(ctx, mode, store.Holder("resumed"))
		if err != nil {
			t.Fatalf("%s: refused after the holder let go: %v", mode, err)
		}
		again()
		if refusals != 1 {
			t.Errorf("%s: %d refusals, want 1", mode, refusals)
		}
	}
}

// GET_LINKS_LIST reads its page from the covering index in order, as the
// reference's statement (FORCE INDEX) does: without the hint MariaDB chose
// the primary key and a filesort for short lists, more server CPU per list.
func TestListReadsTheCoveringIndex(t *testing.T) {
	for _, engine := range []string{"innodb", "rocksdb"} {
		t.Run(engine, func(t *testing.T) {
			s := fresh(t, engine)
			ctx := context.Background()
			if err := s.Init(ctx, false); err != nil {
				t.Fatal(err)
			}
			for id2 := int64(1); id2 <= 3; id2++ {
				l := graph.Link{ID1: 5, LinkType: graph.DefaultLinkType, ID2: id2, Visibility: graph.VisibilityDefault, Time: id2}
				if _, err := s.AddLink(ctx, &l); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.w.ExecContext(ctx, "ANALYZE TABLE "+q(s.t.Link)); err != nil {
				t.Fatal(err)
			}
			rows, err := s.r.QueryContext(ctx, "EXPLAIN "+s.listSQL(true), 5, graph.DefaultLinkType, 0, int64(1)<<62, 10000, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]sql.NullString, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				plan := map[string]string{}
				for i, c := range cols {
					plan[c] = vals[i].String
				}
				if plan["key"] != "id1_type" || strings.Contains(plan["Extra"], "filesort") {
					t.Fatalf("list plan: key %q, extra %q; want the id1_type index without a filesort", plan["key"], plan["Extra"])
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestProcedureRunsTheReferenceStatements: each link write runs the
// statements of the reference's transaction and no more (its INSERT,
// SELECT ... FOR UPDATE, UPDATE or DELETE of the link, then one upsert of
// the count row), counted by the session's statement counters. The first
// procedure also locked the count row with an upsert before anything and
// updated it after, which cost the server two statements per write.
// Every other write is blind (store.BlindLinkWriter): the procedure then
// leaves out the SELECT of its result, a statement the reference does not
// send.
func TestProcedureRunsTheReferenceStatements(t *testing.T) {
	ctx := context.Background()
	s := fresh(t, "innodb", "link_writes", "routine")
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	counters := func() map[string]int {
		m := map[string]int{}
		for k, v := range sessionStatus(t, conn, "Com_insert", "Com_update", "Com_delete", "Com_delete_multi", "Com_select") {
			// The link DELETE names its index in the multi-table form.
			m[strings.TrimSuffix(strings.TrimPrefix(k, "Com_"), "_multi")] += v
		}
		return m
	}
	call := s.callSQL()
	for i, c := range []struct {
		name      string
		id2       int64
		vis, mode int
		res       int
		want      map[string]int // besides the procedure's SELECT of its result
	}{
		{"ADD_LINK of a new link", 2, 1, 0, 1, map[string]int{"insert": 2}},
		{"ADD_LINK of a stored link", 2, 0, 0, 2, map[string]int{"insert": 2, "select": 1, "update": 1}},
		{"UPDATE_LINK of a stored link", 2, 1, procUpsertReadFirst, 2, map[string]int{"insert": 1, "select": 1, "update": 1}},
		// A write that keeps the visibility leaves the count row alone.
		{"UPDATE_LINK keeping the visibility", 2, 1, procUpsertReadFirst, 0, map[string]int{"select": 1}},
		{"ADD_LINK keeping the visibility", 2, 1, 0, 0, map[string]int{"insert": 1, "select": 1}},
		{"UPDATE_LINK of a new link", 3, 1, procUpsertReadFirst, 1, map[string]int{"insert": 2, "select": 1}},
		{"DELETE_LINK of a visible link", 3, 0, int(graph.WriteHide), 1, map[string]int{"insert": 1, "select": 1, "update": 1}},
		{"DELETE_LINK of a hidden link", 3, 0, int(graph.WriteHide), 1, map[string]int{"select": 1}},
		{"DELETE_LINK expunging a hidden link", 3, 0, int(graph.WriteExpunge), 1, map[string]int{"select": 1, "delete": 1}},
		{"DELETE_LINK of no link", 4, 0, int(graph.WriteHide), 0, map[string]int{"select": 1}},
	} {
		blind := i%2 == 1
		before := counters()
		var res int
		if blind {
			res = c.res // not reported
			if _, err := conn.ExecContext(ctx, call, 1, 1, c.id2, c.vis, "d", 5, 1, 6, c.mode, false); err != nil {
				t.Fatalf("%s, blind: %v", c.name, err)
			}
		} else if err := conn.QueryRowContext(ctx, call, 1, 1, c.id2, c.vis, "d", 5, 1, 6, c.mode, true).Scan(&res); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		after := counters()
		got := map[string]int{}
		for k, v := range after {
			if d := v - before[k]; d != 0 {
				got[k] = d
			}
		}
		if !blind {
			got["select"]--
		}
		if got["select"] == 0 {
			delete(got, "select")
		}
		if res != c.res || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s (blind %v): result %d, statements %v; want %d, %v", c.name, blind, res, got, c.res, c.want)
		}
	}
	if n, err := s.CountLinks(ctx, 1, 1); err != nil || n != 1 {
		t.Errorf("count after the writes = %d, %v; want 1 (link 1/1/2)", n, err)
	}
}

// TestLinkWritesLockOnlyTheirRow: the procedure's link write (link_writes
// = routine) locks its own link row, not its neighbours in the list.
// MariaDB plans the link UPDATE and DELETE on a small table as a range
// over id1_type (every column of linktable is in that index), and MyRocks
// then locks every row of the (id1, link_type) list it reads. Without
// deadlock detection (MyRocks' default) writers of one list then wait out
// lock timeouts for one another. The procedure names the primary key; the
// reference's statements name none, and are sent as they are.
func TestLinkWritesLockOnlyTheirRow(t *testing.T) {
	ctx := context.Background()
	for _, engine := range []string{"innodb", "rocksdb"} {
		{
			t.Run(engine+"/routine", func(t *testing.T) {
				s := fresh(t, engine, "link_writes", "routine")
				if err := s.Init(ctx, false); err != nil {
					t.Fatal(err)
				}
				for id2 := int64(2); id2 <= 5; id2++ {
					if _, err := s.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: id2, Visibility: 1, Data: []byte("a")}); err != nil {
						t.Fatal(err)
					}
				}
				// One write connection that gives up on a lock after 1 s.
				s.w.SetMaxOpenConns(1)
				conn, err := s.w.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1, SESSION rocksdb_lock_wait_timeout = 1"); err != nil {
					t.Fatal(err)
				}
				conn.Close()

				// Another client holds the list's first link.
				blocker, err := openAs(t, s.db, nil).r.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer blocker.Rollback()
				if _, err := blocker.Exec("SELECT version FROM " + q(s.t.Link) + " WHERE link_type = 1 AND id1 = 1 AND id2 = 2 FOR UPDATE"); err != nil {
					t.Fatal(err)
				}
				if res, err := s.UpdateLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 3, Visibility: 1, Data: []byte("b")}); err != nil || res != graph.Updated {
					t.Errorf("UpdateLink of a neighbour = %v, %v; want Updated", res, err)
				}
				if res, err := s.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 3, Visibility: 1, Data: []byte("c")}); err != nil || res != graph.Updated {
					t.Errorf("AddLink of a neighbour = %v, %v; want Updated", res, err)
				}
				if ok, err := s.DeleteLink(ctx, 1, 1, 4, false); err != nil || !ok {
					t.Errorf("hiding a neighbour = %v, %v", ok, err)
				}
				if ok, err := s.DeleteLink(ctx, 1, 1, 5, true); err != nil || !ok {
					t.Errorf("deleting a neighbour = %v, %v", ok, err)
				}
			})
		}
	}
}

// TestMultigetReadsOnlyTheIndex: a multiget that follows an UPDATE of the
// link table on its connection reads the rows as one that follows none
// does, from the covering index. MariaDB's UPDATE clears the covering
// indexes of the table instance it ran on; a prepared multiget executed
// next on that instance planned without them (on this small table a scan
// of the rows, on a loaded graph the index's rows looked up by primary
// key), where the reference's text multiget, resolved anew, reads the
// index alone. Sent as text, ours does too.
func TestMultigetReadsOnlyTheIndex(t *testing.T) {
	ctx := context.Background()
	s := fresh(t, "innodb")
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	for id2 := int64(2); id2 <= 4; id2++ {
		if _, err := s.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: id2, Visibility: 1, Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	ses := s.Session().(*Store)
	defer ses.Close()
	id2s := []int64{9, 3, 7, 11, 13, 15, 17}
	if _, err := ses.MultigetLinks(ctx, 1, 1, id2s, nil); err != nil { // takes the session's connections
		t.Fatal(err)
	}
	conn := ses.sess.r
	handler := func() map[string]int {
		return sessionStatus(t, conn, "Handler_icp_attempts", "Handler_read_key", "Handler_read_next", "Handler_read_prev", "Handler_read_rnd", "Handler_read_rnd_next")
	}
	// reads is what one multiget asked of the engine; the status query
	// itself reads nothing from these counters.
	reads := func() map[string]int {
		before := handler()
		got, err := ses.MultigetLinks(ctx, 1, 1, id2s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID2 != 3 {
			t.Fatalf("multiget found %+v, want the link to 3", got)
		}
		d := map[string]int{}
		for k, v := range handler() {
			if v != before[k] {
				d[k] = v - before[k]
			}
		}
		return d
	}
	want := reads()
	for round := range 3 {
		if _, err := conn.ExecContext(ctx, "UPDATE "+q(s.t.Link)+" FORCE INDEX (PRIMARY) SET version = version + 1 WHERE link_type = 1 AND id1 = 1 AND id2 = 2"); err != nil {
			t.Fatal(err)
		}
		if got := reads(); !maps.Equal(got, want) {
			t.Fatalf("round %d: after an UPDATE the multiget read %v, against %v before any: it no longer read the covering index alone", round, got, want)
		}
	}
}

// sessionStatus reads the named counters of conn's session.
func sessionStatus(t *testing.T, conn *sql.Conn, names ...string) map[string]int {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "SHOW SESSION STATUS WHERE Variable_name IN ('"+strings.Join(names, "', '")+"')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int{}
	for rows.Next() {
		var k string
		var v int
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// A session watches its requester's context once (detach): its operations
// with one cancellable context allocate nothing for the watch (registering
// it for every operation made 5 allocations), and a context that ended
// makes the next operation fail at once with that context's error (it ran
// the statement before).
func TestSessionWatchesItsContextOnce(t *testing.T) {
	s := withOneLink(t)
	sess := s.Session()
	defer sess.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	count := func(c context.Context) error {
		n, err := sess.CountLinks(c, 1, 1)
		if err == nil && n != 1 {
			err = fmt.Errorf("count %d, want 1", n)
		}
		return err
	}
	if err := count(ctx); err != nil {
		t.Fatal(err)
	}
	var failed error
	detached := testing.AllocsPerRun(100, func() {
		if err := count(ctx); err != nil {
			failed = err
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	plain := testing.AllocsPerRun(100, func() {
		if err := count(context.Background()); err != nil {
			failed = err
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	if detached > plain {
		t.Errorf("CountLinks on a session: %.1f allocations with a cancellable context, %.1f without; want no more", detached, plain)
	}
	cancel()
	if err := count(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("CountLinks with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestIndexBuildProgress: while EndLoad builds the deferred index,
// MariaDB tells the part of its in-place ALTER TABLE done
// (Innodb_onlineddl_pct_progress) and the store turns it into rows done.
func TestIndexBuildProgress(t *testing.T) {
	s := fresh(t, "innodb")
	if s.kind != "MariaDB" {
		t.Skipf("%s reports no index build progress", s.kind)
	}
	if err := s.Init(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	said := storetest.IndexBuildProgress(t, s, 100000)
	t.Logf("last answer: %+v", said[len(said)-1])
}

// TestSendsTheReferencesStatements: every request sends the server the
// statements the reference's MySQL store sends, on the same of its two
// connections, in the same transactions (autocommit off, no BEGIN, no
// ROLLBACK after a failed first statement), with the same errors and
// rollbacks (wiretap.RefPaths). InnoDB reports an
// identical rewrite as no row changed, which the reference rolls back;
// MyRocks reports the row.
func TestSendsTheReferencesStatements(t *testing.T) {
	for _, engine := range []string{"innodb", "rocksdb"} {
		t.Run(engine, func(t *testing.T) {
			base, err := url.Parse(testURL(t))
			if err != nil {
				t.Fatal(err)
			}
			p, err := wiretap.Start(wiretap.MySQL, base.Host)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close) // after the store's cleanup, which runs first
			made := fresh(t, engine)
			ctx := context.Background()
			if err := made.Init(ctx, false); err != nil {
				t.Fatal(err)
			}
			u := *base
			u.Host, u.Path = p.Addr(), "/"+made.db
			s, err := Open(ctx, store.Options{Props: store.MapProps{"url": u.String()}, Concurrency: 1, Requests: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			node, err := s.AddNode(ctx, &graph.Node{Type: graph.NodeType, Version: 1, Time: 1, Data: []byte("n")})
			if err != nil {
				t.Fatal(err)
			}
			p.Take()
			wiretap.CheckRefPaths(t, p, s, wiretap.Dialect{Dup: "1062", Elide: true, Matched: engine == "rocksdb"}, node)
		})
	}
}
