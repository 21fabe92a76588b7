package mongo

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

// testURL is the throwaway server of scripts/ferretdb.sh. Under CI=true a
// missing server is a failure, never a skip.
func testURL(t testing.TB) string { return storetest.ServerURL(t, storetest.MongoEnv) }

var dbSeq atomic.Int64

// fresh opens the store on a new database that is dropped afterwards.
func fresh(t *testing.T, extra store.MapProps) *Store { return freshWith(t, extra, nil) }

// freshWith is fresh with a command monitor on the store's clients.
func freshWith(t *testing.T, extra store.MapProps, mon *event.CommandMonitor) *Store {
	t.Helper()
	props := store.MapProps{"url": testURL(t), "dbid": fmt.Sprintf("lbtest_%d_%d", os.Getpid(), dbSeq.Add(1))}
	for k, v := range extra {
		props[k] = v
	}
	s, err := open(context.Background(), store.Options{Props: props, Concurrency: 8}, mon)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.db.Drop(context.Background())
		s.Close()
	})
	return s
}

// TestConformance runs the suite on the default settings: on FerretDB,
// which has no multi-document transactions, the reference's commands
// without them.
func TestConformance(t *testing.T) {
	storetest.RunWith(t, func(t *testing.T) store.Store {
		s := fresh(t, nil)
		if err := s.Init(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		return s
	}, storetest.Options{ResumeStride: 25, Ops: 100}) // FerretDB reads every document of a collection for each command on it
}

// TestKeysAreTheReferences: the _id of a link is link_type, id1, id2 and
// of a count id1, link_type, 8 bytes each, big-endian, as the reference's
// store builds them; for non-negative ids, byte order is numeric order.
func TestKeysAreTheReferences(t *testing.T) {
	if got := fmt.Sprintf("%x", linkID(1, 123456789, 2).Data); got != "00000000075bcd15"+"0000000000000001"+"0000000000000002" {
		t.Fatalf("linkID = %s", got)
	}
	if got := fmt.Sprintf("%x", countID(1, 123456789).Data); got != "0000000000000001"+"00000000075bcd15" {
		t.Fatalf("countID = %s", got)
	}
	ids := []int64{0, 1, 15, 16, 255, 256, 1 << 40, 1<<62 + 3}
	for i := 1; i < len(ids); i++ {
		a, b := ids[i-1], ids[i]
		if string(countID(a, 1).Data) >= string(countID(b, 1).Data) || string(countID(1, a).Data) >= string(countID(1, b).Data) {
			t.Fatalf("count keys of %d and %d out of order", a, b)
		}
	}
}

func TestModeAndSchemaErrors(t *testing.T) {
	ctx := context.Background()
	s := fresh(t, nil)
	// FerretDB has no multi-document transactions: auto means off.
	if s.Mode() != "off" {
		t.Fatalf("auto mode on %s is %s", s.server, s.Mode())
	}
	d, _ := s.Describe(ctx)
	if !strings.Contains(d.Settings["mongo_transactions"], "off") || d.Version == "" {
		t.Fatalf("description %+v", d)
	}
	if err := s.CheckSchema(ctx); err == nil || !strings.Contains(err.Error(), "linkbench init") {
		t.Fatalf("missing collections: %v", err)
	}
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := s.links.Indexes().DropOne(ctx, listIndex); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckSchema(ctx); err == nil || !strings.Contains(err.Error(), listIndex) {
		t.Fatalf("missing index: %v", err)
	}
	if err := s.Init(ctx, false); err != nil {
		t.Fatalf("init over an existing database: %v", err)
	}
	// A database of an older linkbench (hex string _ids) is refused.
	if _, err := s.links.InsertOne(ctx, bson.D{{Key: "_id", Value: "0000000000000001"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckSchema(ctx); err == nil || !strings.Contains(err.Error(), "load --truncate") || !strings.Contains(err.Error(), "string") {
		t.Fatalf("old layout: %v", err)
	}
	// The reference's switch still works.
	if s2 := fresh(t, store.MapProps{"skip_transactions": "true"}); s2.Mode() != "off" {
		t.Fatal("skip_transactions=true is not off")
	}
}

func TestConnectionErrors(t *testing.T) {
	base, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	open := func(props store.MapProps) error {
		s, err := Open(ctx, store.Options{Props: props})
		if err == nil {
			s.Close()
		}
		return err
	}
	wrongPW := *base
	wrongPW.User = url.UserPassword(base.User.Username(), "wrong-secret")
	cases := []struct {
		name  string
		props store.MapProps
		want  []string
	}{
		{"wrong password", store.MapProps{"url": wrongPW.String()}, []string{"authentication failed", base.Host, "check user and password"}},
		{"server down", store.MapProps{"host": "127.0.0.1", "port": "1"}, []string{"127.0.0.1:1", "is the server running", "scripts/ferretdb.sh"}},
		{"transactions on without them", store.MapProps{"url": base.String(), "mongo_transactions": "on"}, []string{"mongo_transactions", "no multi-document transactions", "mongo_transactions=off"}},
		{"bad mode", store.MapProps{"url": base.String(), "mongo_transactions": "sometimes"}, []string{"sometimes", "auto, on or off"}},
		{"bad url", store.MapProps{"url": "http://x"}, []string{"url", "mongodb://"}},
		{"user without password", store.MapProps{"user": "u"}, []string{"password"}},
	}
	for _, c := range cases {
		err := open(c.props)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
		if strings.Contains(err.Error(), "wrong-secret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: message leaks the password or spans lines: %q", c.name, err)
		}
	}
}

// TestCountDocumentMayGoBelowZero pins the reference's delete: hiding a
// visible link decrements the count document even where the stored count
// disagreed (here 0), so the document goes to -1; COUNT_LINK reads 0.
func TestCountDocumentMayGoBelowZero(t *testing.T) {
	ctx := context.Background()
	s := fresh(t, nil)
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadCounts(ctx, []graph.Count{{ID1: 7, LinkType: graph.DefaultLinkType, Count: 0, Time: 1, Version: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadLinks(ctx, []graph.Link{{ID1: 7, LinkType: graph.DefaultLinkType, ID2: 8, Visibility: 1, Time: 1}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.DeleteLink(ctx, 7, graph.DefaultLinkType, 8, false); err != nil || !ok {
		t.Fatalf("DeleteLink: %v %v", ok, err)
	}
	if c, err := s.CountLinks(ctx, 7, graph.DefaultLinkType); err != nil || c != 0 {
		t.Fatalf("count %d %v, want 0", c, err)
	}
	var d bson.M
	if err := s.counts.FindOne(ctx, byID(countID(7, graph.DefaultLinkType))).Decode(&d); err != nil {
		t.Fatal(err)
	}
	if d["count"] != int64(-1) || d["version"] != int64(4) {
		t.Fatalf("count document %v, want count -1 and version 4", d)
	}
}

// TestLockRules: lock documents keep a load from running beside a run on
// one database, and name the holder.
func TestLockRules(t *testing.T) {
	db := fresh(t, nil).dbName
	storetest.LockRules(t, func(t *testing.T) store.Store {
		s, err := Open(context.Background(), store.Options{Props: store.MapProps{"url": testURL(t), "dbid": db}, Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestNamesAreValidated: collection and database names MongoDB would
// refuse (or read as another namespace) are refused by key before any
// command reaches the server.
// Reliability(store): a collection or database name MongoDB would refuse | refused by key before any command reaches the server
func TestNamesAreValidated(t *testing.T) {
	for _, c := range []struct {
		props store.MapProps
		want  string
	}{
		{store.MapProps{"linktable": "links$x"}, "linktable = \"links$x\""},
		{store.MapProps{"nodetable": "system.nodes"}, "nodetable = \"system.nodes\""},
		{store.MapProps{"dbid": "a/b"}, "database name \"a/b\""},
	} {
		c.props["url"] = "mongodb://127.0.0.1:1/"
		_, err := Open(context.Background(), store.Options{Props: c.props})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v", c.props, err)
		}
	}
}

// TestFerretScriptRestartsOnOldData: scripts/ferretdb.sh start on the data
// of a server that was killed, whose setup database is no longer listed
// (its empty SQLite file gone, or the database dropped), starts and
// authenticates instead of failing on the user FerretDB tried to set up
// again (ErrorCodeInsertDuplicateID on system.users).
// Reliability(store): `scripts/ferretdb.sh start` on the data of a killed server | it starts and authenticates (the user is set up only on new data)
func TestFerretScriptRestartsOnOldData(t *testing.T) {
	cache, _ := os.UserCacheDir()
	if _, err := os.Stat(filepath.Join(cache, "linkbench", "ferretdb-v1.24.0")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("FerretDB is not built; run scripts/ferretdb.sh build")
		}
		t.Skip("FerretDB is not built (scripts/ferretdb.sh build)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	dir := filepath.Join(t.TempDir(), "ferret")
	script, _ := filepath.Abs(filepath.Join("..", "..", "..", "scripts", "ferretdb.sh"))
	sh := func(cmd string) (string, error) {
		c := exec.Command("bash", script, cmd)
		c.Env = append(os.Environ(), "LINKBENCH_FERRETDB_PORT="+port, "LINKBENCH_FERRETDB_DIR="+dir)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { sh("stop") })
	for _, step := range []string{"start", "kill"} {
		if out, err := sh(step); err != nil {
			t.Fatalf("%s: %v\n%s", step, err, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "data", "linkbench.sqlite*"))
	for _, f := range files {
		os.Remove(f)
	}
	if out, err := sh("start"); err != nil {
		t.Fatalf("start after an unclean exit: %v\n%s", err, out)
	}
	u, _ := sh("url")
	s, err := Open(context.Background(), store.Options{Props: store.MapProps{"url": strings.TrimSpace(u), "dbid": "lbrestart"}})
	if err != nil {
		t.Fatalf("connect after the restart: %v", err)
	}
	s.Close()
}

// TestCheckCount: check_count compares the count document with the
// visible links after a link write, as the reference's, and fails the
// write when they differ.
func TestCheckCount(t *testing.T) {
	ctx := context.Background()
	s := fresh(t, store.MapProps{"check_count": "true"})
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	lt := graph.DefaultLinkType
	l := graph.Link{ID1: 3, LinkType: lt, ID2: 4, Visibility: 1, Time: 1, Version: 1}
	if _, err := s.AddLink(ctx, &l); err != nil {
		t.Fatalf("consistent write: %v", err)
	}
	if err := s.LoadLinks(ctx, []graph.Link{{ID1: 3, LinkType: lt, ID2: 5, Visibility: 1, Time: 1}}); err != nil {
		t.Fatal(err)
	}
	l.Data = []byte("x")
	if _, err := s.AddLink(ctx, &l); err == nil || !strings.Contains(err.Error(), "check_count: 2 visible links of (3, 123456789) but the count documents say 1") {
		t.Fatalf("write over a wrong count: %v", err)
	}
}
