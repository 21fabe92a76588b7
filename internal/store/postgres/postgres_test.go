package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/netconn"
	"github.com/linkbench/linkbench/internal/store/storetest"
	"github.com/linkbench/linkbench/internal/store/storetest/wiretap"
)

// testURL is the throwaway server of scripts/postgres.sh. Under CI=true a
// missing server is a failure, never a skip.
func testURL(t testing.TB) string { return storetest.ServerURL(t, storetest.PostgresEnv) }

var schemaSeq atomic.Int64

// fresh opens the store on a new schema that is dropped afterwards.
func fresh(t *testing.T, extra store.MapProps) *Store {
	t.Helper()
	schema := fmt.Sprintf("lbtest_%d_%d", os.Getpid(), schemaSeq.Add(1))
	props := store.MapProps{"url": testURL(t), "pg_schema": schema}
	for k, v := range extra {
		props[k] = v
	}
	s, err := Open(context.Background(), store.Options{Props: props, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		s.Close()
	})
	return s
}

// TestConformance runs the suite with link writes as the reference's
// statements (the default) and as calls of the write function.
func TestConformance(t *testing.T) {
	for _, mode := range []string{"reference", "routine"} {
		t.Run(mode, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				s := fresh(t, store.MapProps{"link_writes": mode})
				if err := s.Init(context.Background(), false); err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}

// A session holds two connections, as a requester of the reference does,
// one of each pool (its reads' and its link writes'), and gives both back
// when it closes.
func TestSessionKeepsTwoConnections(t *testing.T) {
	ctx := context.Background()
	s := fresh(t, nil)
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	sess := s.Session()
	id, err := sess.AddNode(ctx, &graph.Node{Type: 1, Data: []byte("n")})
	if err != nil {
		t.Fatal(err)
	}
	l := graph.Link{ID1: id, LinkType: 1, ID2: 2, Visibility: graph.VisibilityDefault}
	if _, err := sess.AddLink(ctx, &l); err != nil {
		t.Fatal(err)
	}
	if n, err := sess.CountLinks(ctx, id, 1); err != nil || n != 1 {
		t.Fatalf("count %d (%v) after one link, want 1", n, err)
	}
	if r, w := s.pool.Stat().AcquiredConns(), s.wpool.Stat().AcquiredConns(); r != 1 || w != 1 {
		t.Errorf("a session that wrote and read holds %d + %d connections, want one of each pool", r, w)
	}
	sess.Close()
	if got := s.pool.Stat().AcquiredConns() + s.wpool.Stat().AcquiredConns(); got != 0 {
		t.Errorf("a closed session still holds %d connections", got)
	}
}

// TestLinkWritesByTheKeyAlone: link writes go as the reference's
// statements at any number of requesters, paced or flat out, in a request
// phase or beside a load; link_writes = routine calls the write function;
// the store's description says which; a bad value, and the keys that
// chose before, are refused before connecting.
func TestLinkWritesByTheKeyAlone(t *testing.T) {
	ctx := context.Background()
	for k, v := range map[string]string{"link_writes": "auto", "pg_write_function": "true", "pg_write_connection": "own"} {
		_, err := Open(ctx, store.Options{Props: store.MapProps{"url": "postgres://u@127.0.0.1:1/x", k: v}})
		if err == nil || !strings.Contains(err.Error(), k) || !strings.Contains(err.Error(), "routine") {
			t.Errorf("%s = %s: %v", k, v, err)
		}
	}
	made := fresh(t, nil)
	if err := made.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	linkWrites := func(o store.Options, props store.MapProps) string {
		o.Props = store.MapProps{"url": testURL(t), "pg_schema": made.schema}
		for k, v := range props {
			o.Props.(store.MapProps)[k] = v
		}
		s, err := Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		d, err := s.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return d.Settings["link_writes"]
	}
	for _, o := range []store.Options{{Concurrency: 1, Requests: true}, {Concurrency: 2}, {Concurrency: 16 * runtime.NumCPU(), Requests: true}, {Concurrency: 64}} {
		if got := linkWrites(o, nil); got != "reference" {
			t.Errorf("link_writes at %d requesters (request phase %v) = %q, want reference", o.Concurrency, o.Requests, got)
		}
	}
	if got := linkWrites(store.Options{Concurrency: 4, Requests: true}, store.MapProps{"link_writes": "routine"}); !strings.HasPrefix(got, "routine (SELECT ") {
		t.Errorf("link_writes = routine described as %q", got)
	}
}

// A session's two connections are replaced together: when the server ends
// both (here pg_terminate_backend, as a restart does), the statement that
// finds one closed fails as a connection error, and the next read and the
// next write succeed. Before, the write connection was kept until its own
// next statement failed too.
func TestSessionConnectionsReplacedTogether(t *testing.T) {
	ctx := context.Background()
	u, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	app := fmt.Sprintf("lbtest_pair_%d", os.Getpid())
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	s := fresh(t, store.MapProps{"url": u.String()})
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	sess := s.Session()
	defer sess.Close()
	l := graph.Link{ID1: 5, LinkType: 1, ID2: 6, Visibility: graph.VisibilityDefault}
	if _, err := sess.AddLink(ctx, &l); err != nil {
		t.Fatal(err)
	}
	var ended int
	if err := s.pool.QueryRow(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()", app).Scan(&ended); err != nil || ended < 2 {
		t.Fatalf("ended %d of the session's backends (%v), want both", ended, err)
	}
	if _, err := sess.CountLinks(ctx, 5, 1); !errors.Is(err, graph.ErrConnection) {
		t.Fatalf("the first read after the backends ended: %v, want a connection error", err)
	}
	if n, err := sess.CountLinks(ctx, 5, 1); err != nil || n != 1 {
		t.Fatalf("the next read: count %d (%v), want 1", n, err)
	}
	l.ID2 = 7
	if _, err := sess.AddLink(ctx, &l); err != nil {
		t.Fatalf("the next write: %v", err)
	}
}

// referenceDDL is the reference's PostgreSQL schema (its README): link
// version int and count bigint where ours are bigint and int.
const referenceDDL = `
CREATE TABLE %[1]s.linktable (id1 bigint NOT NULL DEFAULT '0', id2 bigint NOT NULL DEFAULT '0',
  link_type bigint NOT NULL DEFAULT '0', visibility smallint NOT NULL DEFAULT '0', data bytea NOT NULL,
  time bigint NOT NULL DEFAULT '0', version int NOT NULL DEFAULT '0', PRIMARY KEY (link_type, id1, id2));
CREATE TABLE %[1]s.counttable (id bigint NOT NULL DEFAULT '0', link_type bigint NOT NULL DEFAULT '0',
  count bigint NOT NULL DEFAULT '0', time bigint NOT NULL DEFAULT '0', version bigint NOT NULL DEFAULT '0',
  PRIMARY KEY (id, link_type));
CREATE TABLE %[1]s.nodetable (id BIGSERIAL NOT NULL, type int NOT NULL, version bigint NOT NULL,
  time int NOT NULL, data bytea NOT NULL, PRIMARY KEY (id));
CREATE INDEX id1_type ON %[1]s.linktable (id1, link_type, visibility, time, id2, version, data);`

// TestConformanceOnReferenceTables: tables made by the reference's DDL,
// completed by init (function, metadata), pass the whole suite. Their
// column types differ from ours (integer where ours is bigint); the
// request statements encode and decode values by the types the server
// reports.
func TestConformanceOnReferenceTables(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := fresh(t, nil)
		ctx := context.Background()
		if _, err := s.pool.Exec(ctx, "CREATE SCHEMA "+s.schema+"; "+fmt.Sprintf(referenceDDL, s.schema)); err != nil {
			t.Fatal(err)
		}
		if err := s.Init(ctx, false); err != nil {
			t.Fatal(err)
		}
		var typ string
		if err := s.pool.QueryRow(ctx, "SELECT data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'linktable' AND column_name = 'version'", s.schema).Scan(&typ); err != nil || typ != "integer" {
			t.Fatalf("linktable.version is %q (%v), want the reference's integer", typ, err)
		}
		return s
	})
}

// Reliability(server): wrong password, server down, missing database, missing tables (real server) | one line naming host:port and the fix, exit 1, password never shown
func TestConnectionErrors(t *testing.T) {
	base, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	open := func(mod func(u *url.URL)) error {
		u := *base
		mod(&u)
		_, err := Open(ctx, store.Options{Props: store.MapProps{"url": u.String()}})
		return err
	}
	cases := []struct {
		name string
		mod  func(u *url.URL)
		want []string
	}{
		{"wrong password", func(u *url.URL) { u.User = url.UserPassword(u.User.Username(), "wrong-secret") }, []string{"authentication failed", base.Host, "check user and password"}},
		{"server down", func(u *url.URL) { u.Host = "127.0.0.1:1" }, []string{"127.0.0.1:1", "connection refused", "scripts/postgres.sh"}},
		{"missing database", func(u *url.URL) { u.Path = "/no_such_db" }, []string{"database \"no_such_db\" does not exist", "CREATE DATABASE"}},
	}
	for _, c := range cases {
		err := open(c.mod)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
		if strings.Contains(err.Error(), "wrong-secret") || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%s: message leaks the password or spans lines: %q", c.name, err)
		}
	}
	s := fresh(t, nil)
	if err := s.CheckSchema(ctx); err == nil || !strings.Contains(err.Error(), "`linkbench load` creates the schema") || !strings.Contains(err.Error(), base.Host) {
		t.Errorf("missing tables: %v", err)
	}
}

// TestReconnectAfterRestart restarts the server under an open store: the
// calls that hit the restart fail as connection errors and later calls
// succeed on new connections.
// Reliability(server): server restarted under an open store (real server) | calls during the restart fail as connection errors, later calls succeed on new connections
func TestReconnectAfterRestart(t *testing.T) {
	storetest.ReconnectAfterRestart(t, "postgres.sh", 20*time.Second, func(t *testing.T) store.Store {
		testURL(t)
		return fresh(t, nil)
	})
}

// sameSchema opens n more stores on first's schema, closed at the end.
func sameSchema(t *testing.T, first *Store, n int) []*Store {
	t.Helper()
	stores := []*Store{first}
	for range n {
		s, err := Open(context.Background(), store.Options{Props: store.MapProps{"url": testURL(t), "pg_schema": first.schema}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	return stores
}

// TestConcurrentInit: the processes of a --shard load start together and
// each creates the schema; concurrent CREATE ... IF NOT EXISTS and CREATE
// OR REPLACE FUNCTION on one schema must not fail ("tuple concurrently
// updated").
func TestConcurrentInit(t *testing.T) {
	for round := 0; round < 3; round++ {
		stores := sameSchema(t, fresh(t, nil), 5)
		err := storetest.AtOnce(len(stores), func(i int) error { return stores[i].Init(context.Background(), false) })
		if err != nil {
			t.Fatalf("round %d: concurrent init: %v", round, err)
		}
	}
}

// TestConcurrentLoadsShareTheDeferredIndex: --shard processes begin their
// loads on one empty table together (each drops the deferred index) and
// end them together (each builds it): no step may fail, and the index
// exists afterwards.
func TestConcurrentLoadsShareTheDeferredIndex(t *testing.T) {
	first := fresh(t, nil)
	if err := first.Init(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	var loaders []store.BulkLoader
	for _, s := range sameSchema(t, first, 5) {
		loaders = append(loaders, s)
	}
	storetest.BeginAndEndLoadsAtOnce(t, loaders)
	var missing bool
	if err := first.pool.QueryRow(context.Background(), "SELECT to_regclass($1) IS NULL", first.schema+".id1_type").Scan(&missing); err != nil || missing {
		t.Fatalf("index id1_type missing after the loads (%v)", err)
	}
}

// TestConcurrentMetaUpdates: the processes of a --shard load record the
// graph's metadata at the same moment; updates of the same keys must not
// deadlock.
func TestConcurrentMetaUpdates(t *testing.T) {
	first := fresh(t, nil)
	if err := first.Init(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	set := map[string]string{}
	for i := 0; i < 30; i++ {
		set[fmt.Sprintf("key%02d", i)] = "v"
	}
	stores := sameSchema(t, first, 5)
	err := storetest.AtOnce(len(stores), func(i int) error {
		for range 5 {
			if err := stores[i].UpdateMeta(context.Background(), set, fmt.Sprintf("journal.%dof6.", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReferenceLayoutDefaults: without url the store connects to the
// database "linkbench", and the tables live in the schema named by dbid
// (or dbprefix followed by 0), where the reference looks for them.
func TestReferenceLayoutDefaults(t *testing.T) {
	cs, err := connString(store.MapProps{"host": "127.0.0.1", "port": "5"})
	if err != nil || !strings.Contains(cs, "/linkbench?") {
		t.Fatalf("connString = %q, %v; want database linkbench", cs, err)
	}
	cs, err = connString(store.MapProps{"host": "127.0.0.1", "port": "5", "pg_database": "other", "dbid": "x"})
	if err != nil || !strings.Contains(cs, "/other?") {
		t.Fatalf("connString with pg_database = %q, %v", cs, err)
	}
	for _, c := range []struct {
		props  store.MapProps
		schema string
	}{
		{store.MapProps{}, "linkdb0"},
		{store.MapProps{"dbprefix": "bench"}, "bench0"},
		{store.MapProps{"dbid": "graph1", "dbprefix": "bench"}, "graph1"},
		{store.MapProps{"dbid": "graph1", "pg_schema": "mine"}, "mine"},
	} {
		c.props["url"] = testURL(t)
		s, err := Open(context.Background(), store.Options{Props: c.props})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if s.schema != c.schema {
			t.Errorf("%v: schema %q, want %q", c.props, s.schema, c.schema)
		}
	}
}

// TestLockRules: advisory locks keep a load from running beside a run on
// one schema, and name the holder (its application_name).
// onSchema opens the store on schema, shared by the processes a lock test
// plays (closed at the end of the test, the schema kept).
func onSchema(t *testing.T, schema string) *Store {
	t.Helper()
	s, err := Open(context.Background(), store.Options{Props: store.MapProps{"url": testURL(t), "pg_schema": schema}, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestLockRules(t *testing.T) {
	schema := fmt.Sprintf("lblock_%d", os.Getpid())
	storetest.LockRules(t, func(t *testing.T) store.Store { return onSchema(t, schema) })
}

// TestSchemaWithoutUsage: a user without the USAGE privilege on the
// schema is told so, with the GRANT to run, instead of "table ... is
// missing" (information_schema hid the tables from it).
// Reliability(writer): a PostgreSQL user without USAGE on the schema | told so, with the GRANT to run (not "table is missing")
func TestSchemaWithoutUsage(t *testing.T) {
	owner := fresh(t, nil)
	if err := owner.Init(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("lbnousage%d", os.Getpid())
	ctx := context.Background()
	owner.pool.Exec(ctx, "DROP ROLE IF EXISTS "+role)
	if _, err := owner.pool.Exec(ctx, "CREATE ROLE "+role+" LOGIN PASSWORD 'pw'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { owner.pool.Exec(ctx, "DROP ROLE IF EXISTS "+role) })
	u, _ := url.Parse(testURL(t))
	u.User = url.UserPassword(role, "pw")
	s, err := Open(ctx, store.Options{Props: store.MapProps{"url": u.String(), "pg_schema": owner.schema}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, err := range map[string]error{"check": s.CheckSchema(ctx), "init": s.Init(ctx, false)} {
		if err == nil || !strings.Contains(err.Error(), `user "`+role+`" has no USAGE privilege on schema `+owner.schema) || !strings.Contains(err.Error(), "GRANT USAGE ON SCHEMA") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestRefusedLockHoldsNothing: a load refused beside a run leaves no
// advisory lock behind, not even for the moment its backend takes to exit
// (the next process was refused naming the refused load, under make test).
func TestRefusedLockHoldsNothing(t *testing.T) {
	schema := fmt.Sprintf("lbrefused_%d", os.Getpid())
	ctx := context.Background()
	runner := onSchema(t, schema)
	release, err := runner.Lock(ctx, store.LockRun, store.Holder("run"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for i := 0; i < 20; i++ {
		loader := onSchema(t, schema)
		if _, err := loader.Lock(ctx, store.LockLoad, store.Holder("load")); err == nil {
			t.Fatal("a load was not refused beside a run")
		}
		u := uint64(loader.lockKey("load"))
		var held int
		if err := runner.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid::bigint = $1 AND objid::bigint = $2`,
			int64(u>>32), int64(u&0xffffffff)).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if held != 0 {
			t.Fatalf("attempt %d: the refused load's lock is still held by %d session(s)", i, held)
		}
	}
}

// TestLockOfAHolderThatJustLetGo: a holder that lets go of the key between
// the refused try and the lookup of its holders (a stopped load's backend
// exiting as the resumed one starts) does not refuse the lock on behalf of
// "another session": the key is tried again and taken.
func TestLockOfAHolderThatJustLetGo(t *testing.T) {
	schema := fmt.Sprintf("lbletgo_%d", os.Getpid())
	ctx := context.Background()
	holder := onSchema(t, schema)
	release, err := holder.Lock(ctx, store.LockLoad, store.Holder("stopped load"))
	if err != nil {
		t.Fatal(err)
	}
	resumed := onSchema(t, schema)
	refusals := 0
	resumed.refused = func() {
		if refusals++; refusals == 1 {
			release()
		}
	}
	again, err := resumed.Lock(ctx, store.LockLoad, store.Holder("resumed load"))
	if err != nil {
		t.Fatalf("refused after the holder let go: %v", err)
	}
	again()
	if refusals != 1 {
		t.Errorf("%d refused tries, want 1", refusals)
	}
}

// The request statements run on pgx's protocol layer with pooled
// parameter buffers and, on a blocking connection, without pgconn's result
// reader (direct): a primary-key read and a short list read make 1
// allocation each, the node's data and the list's (pgconn's result reader
// made 1 and 2 with its command tag, pgx's Query and Scan 13 and 10); on a
// session a link write as the reference's statements, in its transaction,
// makes at most 1 (its steps were 67 as closures on pgconn's batches).
func TestRequestsAllocateLittle(t *testing.T) {
	s := fresh(t, store.MapProps{"io_mode": "blocking"})
	ctx, cancel := context.WithCancel(context.Background()) // a requester's context can be cancelled
	defer cancel()
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	id, err := s.AddNode(ctx, &graph.Node{Type: graph.NodeType, Version: 1, Time: 2, Data: []byte("payload")})
	if err != nil {
		t.Fatal(err)
	}
	l := graph.Link{ID1: 7, LinkType: 1, ID2: 8, Visibility: graph.VisibilityDefault, Data: []byte("x"), Time: 3}
	if _, err := s.AddLink(ctx, &l); err != nil {
		t.Fatal(err)
	}
	dst := make([]graph.Link, 0, 16)
	sess := s.Session()
	defer sess.Close()
	nl := l
	nl.ID1 = 9 // not the list read below
	for _, c := range []struct {
		name string
		max  float64
		op   func() error
	}{
		{"GetNode", 1, func() error { _, _, err := s.GetNode(ctx, graph.NodeType, id); return err }},
		{"AddLink of a new link", 1, func() error { nl.ID2++; _, err := sess.AddLink(ctx, &nl); return err }},
		{"UpdateLink", 1, func() error { _, err := sess.UpdateLink(ctx, &l); return err }},
		{"GetLinkList", 1, func() error {
			_, err := s.GetLinkList(ctx, graph.ListQuery{ID1: 7, LinkType: 1, MaxTime: 1 << 40, Limit: 10}, dst[:0])
			return err
		}},
	} {
		var failed error
		n := testing.AllocsPerRun(200, func() {
			if err := c.op(); err != nil {
				failed = err
			}
		})
		if failed != nil {
			t.Fatalf("%s: %v", c.name, failed)
		}
		if n > c.max {
			t.Errorf("%s: %.1f allocations per call, want at most %.0f", c.name, n, c.max)
		}
	}
}

// A session's list reads copy the rows' data into one buffer it keeps
// (store.Sessioner): a list of 20 rows allocates no data on a session,
// where the store's own lists each get a new buffer; a session's node
// reads use the same buffer and allocate nothing.
func TestSessionListsReuseTheirBuffer(t *testing.T) {
	s := fresh(t, store.MapProps{"io_mode": "blocking"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		l := graph.Link{ID1: 7, LinkType: 1, ID2: int64(100 + i), Visibility: graph.VisibilityDefault, Data: []byte(fmt.Sprintf("data of link %d", i)), Time: int64(i)}
		if _, err := s.AddLink(ctx, &l); err != nil {
			t.Fatal(err)
		}
	}
	sess := s.Session()
	defer sess.Close()
	q := graph.ListQuery{ID1: 7, LinkType: 1, MaxTime: 1 << 40, Limit: 100}
	dst := make([]graph.Link, 0, 32)
	allocs := func(st store.Store) float64 {
		var failed error
		n := testing.AllocsPerRun(100, func() {
			got, err := st.GetLinkList(ctx, q, dst[:0])
			if err == nil && (len(got) != 20 || string(got[0].Data) != "data of link 19") {
				err = fmt.Errorf("%d links, the first with data %q", len(got), got[0].Data)
			}
			if err != nil {
				failed = err
			}
		})
		if failed != nil {
			t.Fatal(failed)
		}
		return n
	}
	onSession, onStore := allocs(sess), allocs(s)
	if onSession > 1 || onStore < onSession+1 {
		t.Errorf("a list of 20 rows: %.1f allocations per call on a session, %.1f on the store; want at most 1 on a session (the row callback), and the rows' data allocated on the store", onSession, onStore)
	}
	// A node read takes the same buffer: its data is the list's, and a list
	// read after it fills the buffer again.
	id, err := s.AddNode(ctx, &graph.Node{Type: graph.NodeType, Version: 1, Time: 2, Data: []byte("node data")})
	if err != nil {
		t.Fatal(err)
	}
	var failed error
	onSession = testing.AllocsPerRun(100, func() {
		n, ok, err := sess.GetNode(ctx, graph.NodeType, id)
		if err == nil && (!ok || string(n.Data) != "node data") {
			err = fmt.Errorf("GetNode on the session: %q, found %v", n.Data, ok)
		}
		if err != nil {
			failed = err
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	if onSession != 0 || allocs(sess) > 1 {
		t.Errorf("GetNode on a session: %.1f allocations per call, want none", onSession)
	}
}

// TestWriteFunctionRunsTheReferenceStatements: each link write changes
// the rows the reference's statements change and no more, counted by the
// transaction's table statistics; the count row is written only when a
// link is inserted or its visibility changes. Before, the function upserted
// the count row first to lock it, so every write wrote it, twice for most.
func TestWriteFunctionRunsTheReferenceStatements(t *testing.T) {
	ctx := context.Background()
	s := fresh(t, store.MapProps{"link_writes": "routine"})
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	call := "SELECT " + s.writeFunc() + "($1, $2, $3, $4, $5, $6, $7, $8, $9)"
	for _, c := range []struct {
		name      string
		id2       int64
		vis       int16
		data      string
		mode, res int32
		want      string // rows changed per table
	}{
		{"ADD_LINK of a new link", 2, 1, "d", 0, 1, "counts ins 1, links ins 1"},
		{"ADD_LINK keeping the visibility", 2, 1, "e", 0, 2, "links upd 1"},
		{"ADD_LINK of an unchanged link", 2, 1, "e", 0, 0, ""},
		{"UPDATE_LINK hiding a link", 2, 0, "e", upsertReadFirst, 2, "counts upd 1, links upd 1"},
		{"UPDATE_LINK keeping the visibility", 2, 0, "f", upsertReadFirst, 2, "links upd 1"},
		{"UPDATE_LINK of a new link", 3, 1, "d", upsertReadFirst, 1, "counts upd 1, links ins 1"},
		{"DELETE_LINK of a hidden link", 2, 0, "", 1, 1, ""},
		{"DELETE_LINK expunging a hidden link", 2, 0, "", 2, 1, "links del 1"},
		{"DELETE_LINK of no link", 4, 0, "", 1, 0, ""},
		{"DELETE_LINK of a visible link", 3, 0, "", 1, 1, "counts upd 1, links upd 1"},
	} {
		// The statistics of the transaction include those not yet flushed
		// of the connection's earlier ones: the difference is the call's.
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before := tupleStats(t, tx, s)
		var res int32
		if err := tx.QueryRow(ctx, call, int64(1), int64(1), c.id2, c.vis, []byte(c.data), int64(5), int64(1), int64(6), c.mode).Scan(&res); err != nil {
			tx.Rollback(ctx)
			t.Fatalf("%s: %v", c.name, err)
		}
		after := tupleStats(t, tx, s)
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		var changed []string
		for _, k := range []string{"counts ins", "counts upd", "counts del", "links ins", "links upd", "links del"} {
			if d := after[k] - before[k]; d != 0 {
				changed = append(changed, fmt.Sprintf("%s %d", k, d))
			}
		}
		if got := strings.Join(changed, ", "); res != c.res || got != c.want {
			t.Errorf("%s: result %d, rows changed %q; want %d, %q", c.name, res, got, c.res, c.want)
		}
	}
	if n, err := s.CountLinks(ctx, 1, 1); err != nil || n != 0 {
		t.Errorf("count after the writes = %d, %v; want 0", n, err)
	}
}

// tupleStats reads the rows inserted, updated and deleted in the link and
// count tables as tx sees them ("links ins", "counts upd", ...).
func tupleStats(t *testing.T, tx pgx.Tx, s *Store) map[string]int64 {
	t.Helper()
	rows, err := tx.Query(context.Background(), `SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_xact_user_tables
		WHERE schemaname = $1 AND relname IN ($2, $3)`, s.schema, s.raw.Count, s.raw.Link)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var rel string
		var n [3]int64
		if err := rows.Scan(&rel, &n[0], &n[1], &n[2]); err != nil {
			t.Fatal(err)
		}
		table := map[string]string{s.raw.Count: "counts", s.raw.Link: "links"}[rel]
		for i, what := range []string{"ins", "upd", "del"} {
			m[table+" "+what] = n[i]
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestConcurrentSharersAreNotRefused: the processes of a --shard load (or
// runs beside each other) take their locks at the same moment, and none
// is refused because another was checking the other phase's lock at that
// instant (a shard of TestThreeProcessLoadEqualsOne was, under make test).
func TestConcurrentSharersAreNotRefused(t *testing.T) {
	schema := fmt.Sprintf("lbsharers_%d", os.Getpid())
	ctx := context.Background()
	for _, mode := range []store.LockMode{store.LockShardLoad, store.LockRun} {
		const procs, rounds = 8, 25
		stores := make([]*Store, procs)
		for i := range stores {
			stores[i] = onSchema(t, schema)
		}
		errs := make(chan error, procs*rounds)
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					release, err := s.Lock(ctx, mode, store.Holder(fmt.Sprintf("%s %d", mode, i)))
					if err != nil {
						errs <- err
						continue
					}
					release()
				}
			}()
		}
		wg.Wait()
		close(errs)
		n := 0
		for err := range errs {
			if n++; n == 1 {
				t.Errorf("%s: %v", mode, err)
			}
		}
		if n > 0 {
			t.Errorf("%s: %d of %d locks refused beside processes of the same phase", mode, n, procs*rounds)
		}
	}
}

// TestClientWriteFailureKeepsItsConnection: a link write that fails after its BEGIN (here the count row's
// upsert overflows) is rolled back on its connection, which the session
// keeps for its next write; the link it inserted is gone.
func TestClientWriteFailureKeepsItsConnection(t *testing.T) {
	ctx := context.Background()
	s := fresh(t, nil)
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, "INSERT INTO "+s.t.Count+" (id, link_type, count, time, version) VALUES (1, 1, 2147483647, 0, 0)"); err != nil {
		t.Fatal(err)
	}
	sess := s.Session().(*Store)
	defer sess.Close()
	w := sess.wconns.(*held)
	if _, err := sess.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 9, Visibility: graph.VisibilityDefault}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("adding a link to a full count: %v, want integer out of range", err)
	}
	kept := w.c
	if kept == nil || kept.Conn().PgConn().IsClosed() || kept.Conn().PgConn().TxStatus() != 'I' {
		t.Fatal("the failed write's connection was not kept idle")
	}
	if got, err := sess.MultigetLinks(ctx, 1, 1, []int64{9}, nil); err != nil || len(got) != 0 {
		t.Fatalf("the failed write's link: %v (%v), want none", got, err)
	}
	if _, err := sess.AddLink(ctx, &graph.Link{ID1: 2, LinkType: 1, ID2: 9, Visibility: graph.VisibilityDefault}); err != nil {
		t.Fatal(err)
	}
	if w.c != kept {
		t.Error("the next write took another connection")
	}
	if d, err := s.Describe(ctx); err != nil || d.Settings["link_writes"] != "reference" {
		t.Errorf("Describe says link_writes %q (%v)", d.Settings["link_writes"], err)
	}
}

// TestLinkWritesReadTheVisibilityAlone: every link write that reads the
// link reads its visibility for update and nothing else, as the
// reference's do.
func TestLinkWritesReadTheVisibilityAlone(t *testing.T) {
	ctx := context.Background()
	s := fresh(t, nil)
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	sess := s.Session().(*Store)
	defer sess.Close()
	l := graph.Link{ID1: 1, LinkType: 1, ID2: 2, Visibility: graph.VisibilityDefault}
	for _, write := range []func() error{
		func() error { _, err := sess.AddLink(ctx, &l); return err },
		func() error { _, err := sess.AddLink(ctx, &l); return err },
		func() error { _, err := sess.UpdateLink(ctx, &l); return err },
		func() error { _, err := sess.DeleteLink(ctx, 1, 1, 2, false); return err },
	} {
		if err := write(); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	rows, err := sess.wconns.(*held).c.Query(ctx, "SELECT name FROM pg_prepared_statements WHERE name LIKE 'lb_read%' ORDER BY name")
	if err == nil {
		names, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, " "); got != "lb_read_visibility" {
		t.Errorf("the write connection prepared %q, want lb_read_visibility", got)
	}
	if n, err := sess.CountLinks(ctx, 1, 1); err != nil || n != 0 {
		t.Errorf("count %d (%v), want 0", n, err)
	}
}

// A statement that direct runs leaves its connection idle and in use when
// the server refuses it or a row callback fails (the answer is read to its
// ReadyForQuery), gives its rows and their count, and closes the
// connection when the answer cannot be read (an armed connection whose
// channel is closed), so the pool drops it.
func TestDirectStatements(t *testing.T) {
	s := fresh(t, store.MapProps{"io_mode": "blocking"})
	ctx := context.Background()
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	pc := c.Conn().PgConn()
	pid := func() int64 {
		t.Helper()
		var p int64
		if _, err := direct(ctx, c, &stmt{"lbt_pid", "SELECT pg_backend_pid()"}, nil, func(r row) (err error) {
			p, err = r.int(0)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	idle := func(what string) {
		t.Helper()
		if pc.IsClosed() || pc.IsBusy() || pc.TxStatus() != 'I' {
			t.Fatalf("after %s the connection is not idle", what)
		}
	}
	before := pid()
	series := &stmt{"lbt_series", "SELECT generate_series(1, $1)"}
	var got []int64
	n, err := direct(ctx, c, series, []arg{num(3)}, func(r row) error {
		v, err := r.int(0)
		got = append(got, v)
		return err
	})
	if err != nil || n != 3 || fmt.Sprint(got) != "[1 2 3]" {
		t.Fatalf("3 rows: %v, count %d (%v)", got, n, err)
	}
	var pe *pgconn.PgError
	if _, err := direct(ctx, c, &stmt{"lbt_div", "SELECT 1 / $1"}, []arg{num(0)}, nil); !errors.As(err, &pe) || pe.Code != "22012" {
		t.Fatalf("dividing by zero: %v, want the server's error 22012", err)
	}
	idle("a refused statement")
	stop := errors.New("stop")
	calls := 0
	if _, err := direct(ctx, c, series, []arg{num(5)}, func(row) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("a failing row callback: %v after %d calls, want stop after 1", err, calls)
	}
	idle("a failing row callback")
	if after := pid(); after != before {
		t.Fatalf("the connection changed: backend %d, then %d", before, after)
	}
	ic, ok := pc.Conn().(netconn.Interruptible)
	if !ok {
		t.Fatal("io_mode = blocking gave a connection that cannot be interrupted")
	}
	done := make(chan struct{})
	close(done)
	ic.Arm(done)
	_, err = direct(ctx, c, series, []arg{num(1)}, nil)
	ic.Disarm()
	if !errors.Is(err, os.ErrDeadlineExceeded) || !pc.IsClosed() {
		t.Fatalf("an interrupted statement: %v, connection closed %v; want a deadline error and the connection closed", err, pc.IsClosed())
	}
}

func TestRowsAffected(t *testing.T) {
	for tag, want := range map[string]int64{"INSERT 0 1": 1, "UPDATE 12": 12, "DELETE 0": 0, "SELECT 10000": 10000, "BEGIN": 0, "": 0, "COMMIT": 0, "X 7a": 0} {
		if got := rowsAffected([]byte(tag)); got != want {
			t.Errorf("rowsAffected(%q) = %d, want %d", tag, got, want)
		}
	}
}

// TestIndexBuildProgress: while EndLoad builds the deferred index, the
// store reads the build's progress from pg_stat_progress_create_index:
// the table's rows scanned, then the tuples loaded into the tree, and the
// part of the whole build done.
func TestIndexBuildProgress(t *testing.T) {
	s := fresh(t, nil)
	if err := s.Init(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	said := storetest.IndexBuildProgress(t, s, 100000)
	phases := map[string]bool{}
	for _, p := range said {
		phases[p.Phase] = true
		if p.Estimated {
			t.Errorf("the server's figures are marked estimated: %+v", p)
		}
	}
	t.Logf("phases seen: %v", phases)
}

// TestSendsTheReferencesStatements: every request sends the server the
// statements the reference's PostgreSQL store sends, on the same of its
// two connections, in the same transactions, with the same errors and
// rollbacks (wiretap.RefPaths has them, read from its source and checked
// against its driver's statements in the server's log).
func TestSendsTheReferencesStatements(t *testing.T) {
	u, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := wiretap.Start(wiretap.Postgres, u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close) // after the store's cleanup, which runs first
	u.Host = p.Addr()
	s := fresh(t, store.MapProps{"url": u.String()})
	ctx := context.Background()
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	node, err := s.AddNode(ctx, &graph.Node{Type: graph.NodeType, Version: 1, Time: 1, Data: []byte("n")})
	if err != nil {
		t.Fatal(err)
	}
	p.Take()
	wiretap.CheckRefPaths(t, p, s, wiretap.Dialect{Begin: true, Dup: "23505", Matched: true}, node)
}
