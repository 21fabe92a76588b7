package mysql

import (
	"context"
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

// TestSessionKeepsItsConnections: a session runs every operation on the
// two connections it took, one of each pool, and its Close closes the
// statements it prepared on them (database/sql then frees them in the
// server) and gives the connections back.
func TestSessionKeepsItsConnections(t *testing.T) {
	ctx := context.Background()
	s := withOneLink(t)
	if _, err := s.CountLinks(ctx, 1, 1); err != nil { // the pools' statements
		t.Fatal(err)
	}
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
	if n := s.r.Stats().InUse; n != 1 {
		t.Fatalf("%d connections of the read pool in use, want the session's 1", n)
	}
	getNode := sess.sess.st.getNode
	if getNode == nil {
		t.Fatal("the session has no GET_NODE statement of its own")
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.r.Stats().InUse + s.w.Stats().InUse; n != 0 {
		t.Fatalf("%d connections still in use after the session closed", n)
	}
	// Closed, not merely left on a connection given back (database/sql's
	// message for that would be "connection is already closed").
	if err := getNode.QueryRow(int64(1), int32(1)).Err(); err == nil || !strings.Contains(err.Error(), "statement is closed") {
		t.Fatalf("the session's GET_NODE statement after Close: %v, want it closed", err)
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

// TestSessionClientTransactions: without the procedure a session runs a
// link write's statements on its own write connection, with autocommit off
// as the reference's link-write connection has it, and its node writes on
// the read connection. The write pool here has one connection, the
// session's: a transaction that took another would wait for it until the
// deadline. That connection does not go back to the pool with autocommit
// off.
func TestSessionClientTransactions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := fresh(t, "innodb", "mysql_write_procedure", "false")
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
