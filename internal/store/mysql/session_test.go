package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
)

// connID is the server's id of the session's read (or write) connection.
func connID(t *testing.T, sess *Store, write bool) int64 {
	t.Helper()
	c := sess.sess.r
	if write {
		c = sess.sess.w
	}
	if c == nil {
		t.Fatal("the session holds no connection")
	}
	var id int64
	if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// openStmts is how many statements c's connection has prepared and not
// closed, by the server's count.
func openStmts(t *testing.T, c *sql.Conn) int64 {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), "SHOW SESSION STATUS WHERE Variable_name IN ('Com_stmt_prepare', 'Com_stmt_close')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var open int64
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		if strings.EqualFold(name, "Com_stmt_close") {
			n = -n
		}
		open += n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return open
}

// pooledOpenStmts is openStmts of the one connection of a pool limited
// to one.
func pooledOpenStmts(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return openStmts(t, c)
}

// TestSessionKeepsItsConnections: a session runs every operation on the
// two connections it took, one of each pool, and its Close closes the
// statements it prepared on them in the server and gives the connections
// back. Each pool here has one connection, so the session's are the ones
// the pools have before and after it.
func TestSessionKeepsItsConnections(t *testing.T) {
	ctx := context.Background()
	s := withOneLink(t)
	s.r.SetMaxOpenConns(1)
	s.w.SetMaxOpenConns(1)
	if _, err := s.CountLinks(ctx, 1, 1); err != nil { // the pools' statements
		t.Fatal(err)
	}
	r0, w0 := pooledOpenStmts(t, s.r), pooledOpenStmts(t, s.w)
	sess := s.Session().(*Store)
	if _, err := sess.CountLinks(ctx, 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.AddNode(ctx, &graph.Node{Type: 1, Data: []byte("n")}); err != nil {
		t.Fatal(err)
	}
	r, w := connID(t, sess, false), connID(t, sess, true)
	for i := 0; i < 20; i++ {
		if _, _, err := sess.GetNode(ctx, 1, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: int64(10 + i), Visibility: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if r2, w2 := connID(t, sess, false), connID(t, sess, true); r2 != r || w2 != w {
		t.Fatalf("the session's connections changed from %d, %d to %d, %d", r, w, r2, w2)
	}
	// Its own statements, prepared once: the reads and the node writes on
	// the read connection, the CALL on the write connection (the
	// procedure's store, withOneLink).
	if dr, dw := openStmts(t, sess.sess.r)-r0, openStmts(t, sess.sess.w)-w0; dr != 6 || dw != 1 {
		t.Fatalf("the session prepared %d statements on its read connection and %d on its write connection; want 6 and 1", dr, dw)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.r.Stats().InUse + s.w.Stats().InUse; n != 0 {
		t.Fatalf("%d connections still in use after the session closed", n)
	}
	if r1, w1 := pooledOpenStmts(t, s.r), pooledOpenStmts(t, s.w); r1 != r0 || w1 != w0 {
		t.Fatalf("after the session closed its connections hold %d and %d open statements, %d and %d before it", r1, w1, r0, w0)
	}
	if n, err := s.CountLinks(ctx, 1, 1); err != nil || n != 21 {
		t.Fatalf("count after the session = %d, %v; want 21", n, err)
	}
}

// TestSessionReplacesABrokenConnection: when the server drops a session's
// connection, or its socket is closed, the operation that finds it fails
// as a connection error and the next one runs on a new connection.
func TestSessionReplacesABrokenConnection(t *testing.T) {
	ctx := context.Background()
	s := withOneLink(t)
	sess := s.Session().(*Store)
	defer sess.Close()
	if _, err := sess.CountLinks(ctx, 1, 1); err != nil {
		t.Fatal(err)
	}
	old := connID(t, sess, false)
	if _, err := s.load.Exec("KILL CONNECTION ?", old); err != nil {
		t.Fatal(err)
	}
	_, err := sess.CountLinks(ctx, 1, 1)
	if err == nil || !errors.Is(err, graph.ErrConnection) {
		t.Fatalf("count on a killed connection = %v, want a connection error", err)
	}
	if n, err := sess.CountLinks(ctx, 1, 1); err != nil || n != 1 {
		t.Fatalf("count after the kill = %d, %v; want 1", n, err)
	}
	if id := connID(t, sess, false); id == old {
		t.Fatalf("the session still reads on the killed connection %d", id)
	}
	// A socket closed on this side fails the statement before it is sent:
	// database/sql then closes the session's connection and its next
	// attempt finds it closed (sql.ErrConnDone), a connection error too.
	s.socks.abort()
	if _, err := sess.CountLinks(ctx, 1, 1); err == nil || !errors.Is(err, graph.ErrConnection) {
		t.Fatalf("count on a closed socket = %v, want a connection error", err)
	}
	if n, err := sess.CountLinks(ctx, 1, 1); err != nil || n != 1 {
		t.Fatalf("count after the closed socket = %d, %v; want 1", n, err)
	}
}

// A session's list reads copy the rows' data into one buffer it keeps
// (store.Sessioner); the store's own lists give each row its own data.
func TestSessionListsReuseTheirBuffer(t *testing.T) {
	ctx := context.Background()
	s := withOneLink(t)
	for i := range 20 {
		if _, err := s.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: int64(10 + i), Visibility: 1, Data: []byte(fmt.Sprintf("data of link %d", i)), Time: int64(100 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	sess := s.Session().(*Store)
	defer sess.Close()
	q := graph.ListQuery{ID1: 1, LinkType: 1, MaxTime: 1 << 40, Limit: 100}
	var inBuffer []bool
	for _, st := range []*Store{sess, sess, s} {
		got, err := st.GetLinkList(ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 21 || string(got[0].Data) != "data of link 19" {
			t.Fatalf("%d links, the first with data %q", len(got), got[0].Data)
		}
		buf := sess.sess.listBuf
		inBuffer = append(inBuffer, cap(buf) > 0 && &buf[:1][0] == &got[0].Data[:1][0])
	}
	// The first list grew the buffer; from the second on the rows' data
	// is in it from the start.
	if !inBuffer[1] || inBuffer[2] {
		t.Fatalf("first row's data in the session's buffer: %v for the session's second list and %v for the store's; want true, false", inBuffer[1], inBuffer[2])
	}
}

// TestSessionClientTransactions: a session runs a link write's
// statements on its own write connection, with autocommit off
// as the reference's link-write connection has it, and its node writes on
// the read connection. The write pool here has one connection, the
// session's: a transaction that took another would wait for it until the
// deadline. That connection does not go back to the pool with autocommit
// off.
func TestSessionClientTransactions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := fresh(t, "innodb")
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	s.w.SetMaxOpenConns(1)
	sess := s.Session().(*Store)
	var id int64
	done := make(chan error, 1)
	go func() {
		for id2 := int64(2); id2 <= 4; id2++ {
			if res, err := sess.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: id2, Visibility: 1, Data: []byte("a")}); err != nil || res != graph.Inserted {
				done <- fmt.Errorf("AddLink %d in the session = %v, %v", id2, res, err)
				return
			}
		}
		if ok, err := sess.DeleteLink(ctx, 1, 1, 3, false); err != nil || !ok {
			done <- fmt.Errorf("DeleteLink in the session = %v, %v", ok, err)
			return
		}
		var err error
		id, err = sess.AddNode(ctx, &graph.Node{Type: 1, Data: []byte("n")})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		// The operations ignore the context's deadline while they wait for
		// a connection of the pool; the test must not wait as long.
		t.Fatal("the session's writes did not end in 20 s: waiting for a second connection of the write pool?")
	}
	var auto int
	if err := sess.sess.w.QueryRowContext(ctx, "SELECT @@autocommit").Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("the session's write connection: autocommit %d, %v; want 0", auto, err)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	// Committed, as another connection sees them.
	if n, err := s.CountLinks(ctx, 1, 1); err != nil || n != 2 {
		t.Fatalf("count after the session = %d, %v; want 2", n, err)
	}
	if _, ok, err := s.GetNode(ctx, 1, id); err != nil || !ok {
		t.Fatalf("the session's node from the pool: found %v, %v", ok, err)
	}
	if err := s.w.QueryRowContext(ctx, "SELECT @@autocommit").Scan(&auto); err != nil || auto != 1 {
		t.Fatalf("the write pool's connection after the session: autocommit %d, %v; want 1", auto, err)
	}
}

// TestSessionRequestsAllocateLittle: a session's request operations run
// their statements on its driver connections (raw.go), below database/sql,
// whose statement, rows and scan bookkeeping took about a fifth of the
// driver's CPU a request at 4 requesters. The limits are the allocations
// counted with the driver-level statements; through database/sql the same
// operations made 19, 17, 37, 25, 7, 9 and 38. What is left is mostly the
// driver's: each argument and each integer or text value of a row goes
// into an interface value (driver.Value); the multiget's rows carry the
// reference's seven columns.
func TestSessionRequestsAllocateLittle(t *testing.T) {
	ctx := context.Background()
	s := withOneLink(t)
	for i := range 9 {
		if _, err := s.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: int64(10 + i), Visibility: 1, Data: []byte("some link data"), Time: int64(1000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	id, err := s.AddNode(ctx, &graph.Node{Type: 1, Data: []byte("a node's data")})
	if err != nil {
		t.Fatal(err)
	}
	sess := s.Session().(*Store)
	defer sess.Close()
	tx := fresh(t, "innodb")
	if err := tx.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	txSess := tx.Session().(*Store)
	defer txSess.Close()
	tl := &graph.Link{ID1: 1, LinkType: 1, ID2: 2, Visibility: 1, Data: []byte("link data")}
	q := graph.ListQuery{ID1: 1, LinkType: 1, MaxTime: 1 << 40, Limit: 100}
	dst := make([]graph.Link, 0, 16)
	n := &graph.Node{ID: id, Type: 1, Version: 2, Time: 3, Data: []byte("new data")}
	l := &graph.Link{ID1: 1, LinkType: 1, ID2: 12, Visibility: 1, Data: []byte("other data"), Time: 5000}
	var failed error
	check := func(err error) {
		if err != nil && failed == nil {
			failed = err
		}
	}
	ops := []struct {
		name  string
		limit float64
		run   func()
	}{
		{"GetNode", 5, func() {
			_, ok, err := sess.GetNode(ctx, 1, id)
			if err == nil && !ok {
				err = errors.New("GetNode found nothing")
			}
			check(err)
		}},
		{"CountLinks", 4, func() { _, err := sess.CountLinks(ctx, 1, 1); check(err) }},
		{"GetLinkList", 25, func() {
			got, err := sess.GetLinkList(ctx, q, dst[:0])
			if err == nil && len(got) != 10 {
				err = fmt.Errorf("GetLinkList: %d links, want 10", len(got))
			}
			check(err)
		}},
		{"MultigetLinks", 21, func() {
			got, err := sess.MultigetLinks(ctx, 1, 1, []int64{2, 10, 11}, dst[:0])
			if err == nil && len(got) != 3 {
				err = fmt.Errorf("MultigetLinks: %d links, want 3", len(got))
			}
			check(err)
		}},
		{"UpdateNode", 5, func() { _, err := sess.UpdateNode(ctx, n); check(err) }},
		{"UpdateLinkBlind", 7, func() { check(sess.UpdateLinkBlind(ctx, l)) }},
		// The reference's statements from the client (read for update,
		// update, commit): a new time every time, so the link is rewritten.
		{"UpdateLinkBlind, client transaction", 22, func() {
			tl.Time++
			check(txSess.UpdateLinkBlind(ctx, tl))
		}},
	}
	for _, op := range ops {
		op.run() // statements prepared, buffers grown
		got := testing.AllocsPerRun(50, op.run)
		if failed != nil {
			t.Fatalf("%s: %v", op.name, failed)
		}
		t.Logf("%s: %.1f allocations", op.name, got)
		if got > op.limit {
			t.Errorf("%s on a session: %.1f allocations, want at most %.0f", op.name, got, op.limit)
		}
	}
}
