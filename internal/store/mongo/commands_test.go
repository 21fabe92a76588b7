package mongo

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// recorder keeps the commands the store's clients send while it is on.
type recorder struct {
	mu   sync.Mutex
	on   bool
	cmds []bson.Raw
}

func (r *recorder) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.on {
			r.cmds = append(r.cmds, slices.Clone(e.Command))
		}
	}}
}

// record returns the commands fn sends.
func (r *recorder) record(fn func()) []bson.Raw {
	r.mu.Lock()
	r.on, r.cmds = true, nil
	r.mu.Unlock()
	fn()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.cmds
}

// envelope is what every command carries and the fixture leaves out.
var envelope = map[string]bool{"lsid": true, "$db": true, "txnNumber": true, "$clusterTime": true, "$readPreference": true}

// render writes a command in the fixture's notation (testdata/reference_commands.txt).
func render(cmd bson.Raw) string {
	elems, _ := cmd.Elements()
	var b strings.Builder
	first := elems[0]
	b.WriteString(first.Key() + ": ")
	if first.Key() == "getMore" {
		b.WriteString("<cursor>")
	} else {
		renderValue(&b, first.Value(), false)
	}
	var rest []bson.RawElement
	for _, e := range elems[1:] {
		if envelope[e.Key()] || e.Key() == "filter" && len(e.Value().Document()) == 5 { // an empty filter is the same as none
			continue
		}
		rest = append(rest, e)
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Key() < rest[j].Key() })
	for _, e := range rest {
		b.WriteString(", " + e.Key() + ": ")
		switch e.Key() {
		case "limit", "skip", "batchSize":
			// The Java driver's int32, whatever the Go driver's type.
			n, _ := e.Value().AsInt64OK()
			b.WriteString(strconv.FormatInt(n, 10) + "i")
		case "updates", "deletes":
			renderValue(&b, e.Value(), true)
		default:
			renderValue(&b, e.Value(), false)
		}
	}
	return b.String()
}

// renderValue writes v; sorted writes a statement's fields by name.
func renderValue(b *strings.Builder, v bson.RawValue, sorted bool) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		elems, _ := v.Document().Elements()
		if sorted {
			sort.Slice(elems, func(i, j int) bool { return elems[i].Key() < elems[j].Key() })
		}
		b.WriteString("{")
		for i, e := range elems {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.Key() + ": ")
			renderValue(b, e.Value(), false)
		}
		b.WriteString("}")
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		b.WriteString("[")
		for i, e := range vals {
			if i > 0 {
				b.WriteString(", ")
			}
			renderValue(b, e, sorted)
		}
		b.WriteString("]")
	case bson.TypeInt32:
		fmt.Fprintf(b, "%di", v.Int32())
	case bson.TypeInt64:
		n := v.Int64()
		if now := time.Now().UnixMilli(); n > now-86_400_000 && n < now+86_400_000 {
			b.WriteString("<now>")
		} else {
			fmt.Fprintf(b, "%dL", n)
		}
	case bson.TypeBinary:
		_, data := v.Binary()
		if len(data) == 16 || len(data) == 24 {
			parts := make([]string, len(data)/8)
			for i := range parts {
				parts[i] = strconv.FormatInt(int64(binary.BigEndian.Uint64(data[i*8:])), 10)
			}
			b.WriteString("bin(" + strings.Join(parts, ".") + ")")
		} else {
			fmt.Fprintf(b, "bin(%x)", data)
		}
	case bson.TypeNull:
		b.WriteString("null")
	default:
		b.WriteString(v.String())
	}
}

// scenario is one fixture block: its name and the reference's commands.
type scenario struct {
	name string
	cmds []string
}

func readFixture(t *testing.T) []scenario {
	t.Helper()
	raw, err := os.ReadFile("testdata/reference_commands.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []scenario
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			out = append(out, scenario{name: strings.TrimPrefix(line, "## ")})
		case line == "" || strings.HasPrefix(line, "#"):
		case len(out) == 0:
			t.Fatalf("fixture line before the first scenario: %s", line)
		default:
			out[len(out)-1].cmds = append(out[len(out)-1].cmds, line)
		}
	}
	return out
}

// adapt turns the reference's commands into those due to a server that
// cannot take them all, as the store decides from the server: without
// transactions no transaction fields and no commit; on FerretDB no
// findAndModify fields and lists sorted with their ties.
func adapt(cmds []string, txn, ferret bool) []string {
	var out []string
	for _, c := range cmds {
		if !txn {
			if strings.HasPrefix(c, "commitTransaction:") {
				continue
			}
			c = strings.ReplaceAll(c, ", autocommit: false", "")
			c = strings.ReplaceAll(c, ", startTransaction: true", "")
		}
		if ferret {
			c = strings.ReplaceAll(c, ", fields: {visibility: 1i, _id: 0i}", "")
			c = strings.ReplaceAll(c, "sort: {time: -1i}", "sort: {time: -1i, id2: -1i}")
		}
		out = append(out, c)
	}
	return out
}

// refused is what a server without transactions gets from a store made to
// use them: the commands up to the one that starts the transaction, which
// it refuses, then the abort of the transaction, as the reference's store
// aborts when a command fails.
func refused(cmds []string) []string {
	for i, c := range cmds {
		if strings.Contains(c, "startTransaction: true") {
			return append(slices.Clone(cmds[:i+1]), "abortTransaction: 1i, autocommit: false")
		}
	}
	return cmds
}

// TestCommandsAreTheReferences pins, op by op, the commands the store
// sends against the reference's (testdata/reference_commands.txt), with
// and without transactions. The test server (FerretDB) has none: there
// the store is made to use them anyway, and the test checks what it sends
// until the server refuses the command that starts the transaction, and
// the abort after it. Against a MongoDB replica set
// (LINKBENCH_TEST_MONGO_URL) the transactions run and every command is
// checked.
func TestCommandsAreTheReferences(t *testing.T) {
	fixture := readFixture(t)
	for _, txn := range []bool{true, false} {
		t.Run(fmt.Sprintf("transactions=%v", txn), func(t *testing.T) {
			rec := &recorder{}
			mode := "off"
			if txn {
				mode = "auto"
			}
			s := freshWith(t, store.MapProps{"mongo_transactions": mode}, rec.monitor())
			if err := s.Init(ctx, false); err != nil {
				t.Fatal(err)
			}
			forced := txn && !s.txn
			s.txn = txn
			got := map[string][]string{}
			run := func(name string, fn func() error) {
				cmds := rec.record(func() {
					if err := fn(); err != nil && !forced {
						t.Errorf("%s: %v", name, err)
					}
				})
				for _, c := range cmds {
					got[name] = append(got[name], render(c))
				}
			}
			// setup writes without transactions where the server refuses
			// them, so that every scenario finds the state it expects.
			setup := func(fn func() error) {
				t.Helper()
				s.txn = txn && !forced
				defer func() { s.txn = txn }()
				if err := fn(); err != nil {
					t.Fatal(err)
				}
			}
			lt := graph.DefaultLinkType
			link := func(id1, id2 int64, vis uint8, version int32, tm int64, data string) *graph.Link {
				return &graph.Link{ID1: id1, LinkType: lt, ID2: id2, Visibility: vis, Version: version, Time: tm, Data: []byte(data)}
			}
			run("ADD_LINK of a new visible link", func() error { return s.AddLinkBlind(ctx, link(1, 2, 1, 1, 1000, "ab")) })
			run("UPDATE_LINK keeping the visibility", func() error { return s.UpdateLinkBlind(ctx, link(1, 2, 1, 2, 1001, "cd")) })
			run("UPDATE_LINK hiding a visible link", func() error { return s.UpdateLinkBlind(ctx, link(1, 2, 0, 2, 1002, "cd")) })
			run("ADD_LINK of a new hidden link", func() error { return s.AddLinkBlind(ctx, link(1, 3, 0, 1, 1003, "ab")) })
			run("ADD_LINK making a hidden link visible", func() error { return s.AddLinkBlind(ctx, link(1, 3, 1, 1, 1004, "ab")) })
			run("DELETE_LINK of a visible link", func() error { return s.DeleteLinkBlind(ctx, 1, lt, 3, false) })
			run("DELETE_LINK of a hidden link", func() error { return s.DeleteLinkBlind(ctx, 1, lt, 3, false) })
			run("DELETE_LINK of an absent link", func() error { return s.DeleteLinkBlind(ctx, 1, lt, 99, false) })
			setup(func() error { return s.AddLinkBlind(ctx, link(1, 4, 1, 1, 1005, "ab")) })
			run("DELETE_LINK expunging a visible link", func() error { return s.DeleteLinkBlind(ctx, 1, lt, 4, true) })
			setup(func() error { return s.AddLinkBlind(ctx, link(1, 2, 1, 2, 1004, "cd")) })
			setup(func() error { return s.AddLinkBlind(ctx, link(1, 3, 1, 2, 1003, "cd")) })
			run("MULTIGET_LINK of two links", func() error { _, err := s.MultigetLinks(ctx, 1, lt, []int64{2, 99}, nil); return err })
			run("GET_LINKS_LIST", func() error {
				ls, err := s.GetLinkList(ctx, graph.NewListQuery(1, lt), nil)
				if err == nil && len(ls) != 2 {
					err = fmt.Errorf("%d links, want 2", len(ls))
				}
				return err
			})
			run("GET_LINKS_LIST of a history query", func() error {
				q := graph.NewListQuery(1, lt)
				q.MaxTime, q.Offset = 1004, 1
				_, err := s.GetLinkList(ctx, q, nil)
				return err
			})
			many := make([]graph.Link, 150)
			for i := range many {
				many[i] = *link(9, int64(i+1), 1, 0, int64(i), "ab")
			}
			setup(func() error { return s.LoadLinks(ctx, many) })
			run("GET_LINKS_LIST of more than one batch", func() error {
				ls, err := s.GetLinkList(ctx, graph.NewListQuery(9, lt), nil)
				if err == nil && len(ls) != 150 {
					err = fmt.Errorf("%d links, want 150", len(ls))
				}
				return err
			})
			run("COUNT_LINK", func() error { _, err := s.CountLinks(ctx, 1, lt); return err })
			for id := int64(1); id <= 3; id++ {
				setup(func() error {
					return s.LoadNodes(ctx, []graph.Node{{ID: id, Type: graph.NodeType, Version: 1, Time: 1}})
				})
			}
			node := &graph.Node{Type: graph.NodeType, Version: 1, Time: 100, Data: []byte("ab")}
			run("ADD_NODE, the process's first", func() error { _, err := s.AddNode(ctx, node); return err })
			run("ADD_NODE, later", func() error { _, err := s.AddNode(ctx, node); return err })
			run("GET_NODE", func() error { _, _, err := s.GetNode(ctx, graph.NodeType, 4); return err })
			run("UPDATE_NODE", func() error {
				_, err := s.UpdateNode(ctx, &graph.Node{ID: 4, Type: graph.NodeType, Version: 2, Time: 101, Data: []byte("cd")})
				return err
			})
			run("DELETE_NODE", func() error { _, err := s.DeleteNode(ctx, graph.NodeType, 4); return err })
			// The load gives each bulk call a deadline (op_timeout); the
			// commands carry no maxTimeMS for it, as the reference's.
			dctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			run("Bulk load of links", func() error { return s.LoadLinks(dctx, []graph.Link{*link(5, 6, 1, 0, 7, "ab")}) })
			run("Bulk load of counts", func() error {
				return s.LoadCounts(dctx, []graph.Count{{ID1: 5, LinkType: lt, Count: 1, Time: 7}})
			})
			run("Bulk load of nodes", func() error {
				return s.LoadNodes(dctx, []graph.Node{{ID: 20, Type: graph.NodeType, Version: 1, Time: 100, Data: []byte("ab")}})
			})
			var sess store.Store
			run("A requester opens its store", func() error { sess = s.Session(); return nil })
			sess.Close()

			for _, sc := range fixture {
				want := adapt(sc.cmds, txn, s.ferret)
				if forced {
					want = refused(want)
				}
				if g := got[sc.name]; !slices.Equal(g, want) {
					t.Errorf("%s: sent\n\t%s\nwant\n\t%s", sc.name, strings.Join(g, "\n\t"), strings.Join(want, "\n\t"))
				}
				delete(got, sc.name)
			}
			for name := range got {
				t.Errorf("scenario %q is not in the fixture", name)
			}
		})
	}
}

// TestSessionReopensAfterAFailedRequest: after a request fails, a
// requester's session closes its client and opens a new one, serverStatus
// first, as the reference's requester does after a failed request
// (clearErrors); the new one serves the next request.
func TestSessionReopensAfterAFailedRequest(t *testing.T) {
	rec := &recorder{}
	s := freshWith(t, nil, rec.monitor())
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	// A node whose type is not a number cannot be read.
	if _, err := s.nodes.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: int64(77)}, {Key: "type", Value: "x"}},
		nodeInsert(78, &graph.Node{Type: graph.NodeType, Version: 1, Time: 1})}); err != nil {
		t.Fatal(err)
	}
	sess := s.Session().(*Store)
	defer sess.Close()
	old := sess.client
	var err error
	var got []string
	for _, c := range rec.record(func() { _, _, err = sess.GetNode(ctx, graph.NodeType, 77) }) {
		if r := render(c); !strings.HasPrefix(r, "endSessions:") { // the old client's, when it ends in time
			got = append(got, r)
		}
	}
	want := []string{"find: \"nodetable\", filter: {_id: 77L}, limit: 1i, singleBatch: true", "serverStatus: 1i"}
	if err == nil || !slices.Equal(got, want) || sess.client == old {
		t.Fatalf("failed GetNode: error %v, sent\n\t%s\nwant\n\t%s (new client: %v)", err, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"), sess.client != old)
	}
	if _, ok, err := sess.GetNode(ctx, graph.NodeType, 78); err != nil || !ok {
		t.Fatalf("GetNode on the reopened session: %v %v", ok, err)
	}
}

var ctx = context.Background()
