package wiretap

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// Dialect is what the reference's store for one server sends beyond what
// every SQL store of it sends alike (LinkStoreSql).
type Dialect struct {
	// Begin: the server sees a BEGIN open each transaction (PostgreSQL's
	// JDBC driver sends one with the first statement after autocommit was
	// turned off; MySQL's connection itself runs with autocommit off).
	Begin bool
	// Dup is the server's error code for a duplicate key: 23505, 1062.
	Dup string
	// Elide: the driver ends a transaction only when the server said one
	// is open, which an error does not (MySQL's JDBC driver with
	// useLocalTransactionState): no ROLLBACK follows an ADD_LINK's failed
	// INSERT, and the update path goes on in the server's transaction.
	// PostgreSQL's driver reads the failed transaction from the server and
	// rolls it back.
	Elide bool
	// Matched: the server's UPDATE reports the rows it matched, so an
	// identical rewrite commits (PostgreSQL, MyRocks); InnoDB reports none
	// changed, and the reference rolls it back.
	Matched bool
}

// A RefPath is one path of a request of the reference's SQL stores and
// the statements it sends, each as its connection ("r": the requester's
// autocommit connection, "w": its link-write connection, autocommit off)
// and its Kind. They are read from the reference's source
// (LinkStoreSql.newLinkLoop, addLinkImpl, updateLinkImpl, deleteLinkImpl,
// getNodeImpl and the others, and LinkStorePgsql / LinkStoreMysql for
// the dialects, with what their JDBC drivers add: a BEGIN, the rollbacks
// they elide) and were checked against the statements the reference's
// driver sent PostgreSQL (log_statement = all) and MariaDB (the general
// log) in a request phase; cmd/linkbench TestReferenceSendsWhatLinkbenchSends
// checks them against the reference's own run where the machine has it.
type RefPath struct {
	Name string
	Run  func(ctx context.Context, st store.Store) error
	Want []string
}

const refType = 123456789

func refLink(id2 int64, vis uint8, data string) *graph.Link {
	return &graph.Link{ID1: 1, LinkType: refType, ID2: id2, Visibility: vis, Data: []byte(data), Time: 5, Version: 1}
}

// RefPaths are the paths of every request in the order they run on a
// store that holds no link of id1 1 yet and the node node.
func RefPaths(d Dialect, node int64) []RefPath {
	tx := func(stmts ...string) []string {
		if d.Begin {
			stmts = append([]string{"w: BEGIN"}, stmts...)
		}
		return stmts
	}
	join := func(parts ...[]string) []string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	insert := tx("w: INSERT LINKTABLE", "w: INSERT COUNTTABLE UPSERT", "w: COMMIT")
	dupThenRead := join(tx("w: INSERT LINKTABLE !"+d.Dup), []string{"w: ROLLBACK"}, tx("w: SELECT LINKTABLE FOR UPDATE", "w: UPDATE LINKTABLE"))
	if d.Elide {
		dupThenRead = join(tx("w: INSERT LINKTABLE !"+d.Dup), []string{"w: SELECT LINKTABLE FOR UPDATE", "w: UPDATE LINKTABLE"})
	}
	identicalEnd := "w: ROLLBACK"
	if d.Matched {
		identicalEnd = "w: COMMIT"
	}
	add := func(l *graph.Link) func(context.Context, store.Store) error {
		return func(ctx context.Context, st store.Store) error { _, err := st.AddLink(ctx, l); return err }
	}
	upd := func(l *graph.Link) func(context.Context, store.Store) error {
		return func(ctx context.Context, st store.Store) error { _, err := st.UpdateLink(ctx, l); return err }
	}
	del := func(id2 int64) func(context.Context, store.Store) error {
		return func(ctx context.Context, st store.Store) error {
			_, err := st.DeleteLink(ctx, 1, refType, id2, false)
			return err
		}
	}
	n := &graph.Node{ID: node, Type: graph.NodeType, Version: 2, Time: 3, Data: []byte("new")}
	return []RefPath{
		{"ADD_LINK of a new link", add(refLink(2, 1, "a")), insert},
		{"ADD_LINK hiding a stored link", add(refLink(2, 0, "a")), join(dupThenRead, []string{"w: UPDATE COUNTTABLE", "w: COMMIT"})},
		{"ADD_LINK changing a stored link, not its visibility", add(refLink(2, 0, "b")), join(dupThenRead, []string{"w: COMMIT"})},
		{"ADD_LINK of an identical link", add(refLink(2, 0, "b")), join(dupThenRead, []string{identicalEnd})},
		{"UPDATE_LINK of no link", upd(refLink(3, 1, "c")), join(tx("w: SELECT LINKTABLE FOR UPDATE"), []string{"w: ROLLBACK"}, insert)},
		{"UPDATE_LINK showing a hidden link", upd(refLink(2, 1, "d")), tx("w: SELECT LINKTABLE FOR UPDATE", "w: UPDATE LINKTABLE", "w: UPDATE COUNTTABLE", "w: COMMIT")},
		{"DELETE_LINK of a visible link", del(2), tx("w: SELECT LINKTABLE FOR UPDATE", "w: UPDATE LINKTABLE", "w: UPDATE COUNTTABLE", "w: COMMIT")},
		{"DELETE_LINK of a hidden link", del(2), tx("w: SELECT LINKTABLE FOR UPDATE", "w: ROLLBACK")},
		{"DELETE_LINK of no link", del(9), tx("w: SELECT LINKTABLE FOR UPDATE", "w: ROLLBACK")},
		{"ADD_NODE", func(ctx context.Context, st store.Store) error {
			_, err := st.AddNode(ctx, &graph.Node{Type: graph.NodeType, Version: 1, Time: 2, Data: []byte("n")})
			return err
		}, []string{"r: INSERT NODETABLE"}},
		{"GET_NODE", func(ctx context.Context, st store.Store) error {
			_, _, err := st.GetNode(ctx, graph.NodeType, node)
			return err
		},
			[]string{"r: SELECT NODETABLE"}},
		{"UPDATE_NODE", func(ctx context.Context, st store.Store) error { _, err := st.UpdateNode(ctx, n); return err },
			[]string{"r: UPDATE NODETABLE"}},
		{"COUNT_LINK", func(ctx context.Context, st store.Store) error { _, err := st.CountLinks(ctx, 1, refType); return err },
			[]string{"r: SELECT COUNTTABLE"}},
		{"GET_LINKS_LIST", func(ctx context.Context, st store.Store) error {
			_, err := st.GetLinkList(ctx, graph.NewListQuery(1, refType), nil)
			return err
		}, []string{"r: SELECT LINKTABLE"}},
		// The multiget is the one statement the reference does not
		// prepare: its ids are written in its text.
		{"MULTIGET_LINK", func(ctx context.Context, st store.Store) error {
			_, err := st.MultigetLinks(ctx, 1, refType, []int64{2, 3, 4}, nil)
			return err
		}, []string{"r: SELECT LINKTABLE TEXT"}},
		{"DELETE_NODE", func(ctx context.Context, st store.Store) error {
			_, err := st.DeleteNode(ctx, graph.NodeType, node)
			return err
		},
			[]string{"r: DELETE NODETABLE"}},
	}
}

// CheckRefPaths runs every RefPath on a session of st, whose connections
// go through p, and fails t where the statements the server received
// differ from the path's. st holds the node node and no link of id1 1.
func CheckRefPaths(t *testing.T, p *Proxy, st store.Store, d Dialect, node int64) {
	t.Helper()
	ctx := context.Background()
	sess := st
	if s, ok := st.(store.Sessioner); ok {
		sess = s.Session()
		defer sess.Close()
	}
	// The session's connections: its autocommit one runs the first node
	// read, its other one the first link write (of another id1).
	if _, _, err := sess.GetNode(ctx, graph.NodeType, node); err != nil {
		t.Fatal(err)
	}
	warm, _ := p.Take()
	if _, err := sess.AddLink(ctx, &graph.Link{ID1: 2, LinkType: refType, ID2: 1, Visibility: 1}); err != nil {
		t.Fatal(err)
	}
	more, _ := p.Take()
	roles := map[int]string{}
	for _, s := range warm {
		if Kind(s) == "SELECT NODETABLE" {
			roles[s.Conn] = "r"
		}
	}
	for _, s := range more {
		if roles[s.Conn] == "" && strings.Contains(Kind(s), "LINKTABLE") {
			roles[s.Conn] = "w"
		}
	}
	for _, path := range RefPaths(d, node) {
		if err := path.Run(ctx, sess); err != nil {
			t.Fatalf("%s: %v", path.Name, err)
		}
		stmts, _ := p.Take()
		var got []string
		for _, s := range stmts {
			role := roles[s.Conn]
			if role == "" {
				role = fmt.Sprintf("connection %d", s.Conn)
			}
			got = append(got, role+": "+Kind(s))
		}
		if strings.Join(got, "\n") != strings.Join(path.Want, "\n") {
			t.Errorf("%s sent\n\t%s\nthe reference sends\n\t%s", path.Name, strings.Join(got, "\n\t"), strings.Join(path.Want, "\n\t"))
		}
	}
}
