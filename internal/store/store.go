package store

import (
	"context"

	"github.com/linkbench/linkbench/internal/graph"
)

// Store is the set of operations of SPEC section 2.
//
// A Store is safe for concurrent use by many goroutines: the runner opens
// one per process and shares it between all loaders and requesters. Link
// writes are atomic and isolated per (id1, link_type) so that after any mix
// of concurrent operations every count row equals the number of visible
// links. Errors are wrapped with the kinds of package graph (transient,
// connection, schema); the caller decides whether to retry.
type Store interface {
	// AddLink inserts l, or overwrites visibility, data, time and version of
	// the existing (id1, link_type, id2), adjusting the count row on a
	// visibility transition; the count row's version is incremented and its
	// time set to now whenever the link write happens.
	AddLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error)
	// UpdateLink has the same end state as AddLink (an upsert).
	UpdateLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error)
	// DeleteLink hides (expunge=false) or deletes (expunge=true) a link;
	// a visible link decrements the count (never below 0). It reports
	// whether the link existed. Absent links are a no-op.
	DeleteLink(ctx context.Context, id1, linkType, id2 int64, expunge bool) (bool, error)
	// MultigetLinks appends to dst the existing links among id2s, hidden
	// ones included, in any order.
	MultigetLinks(ctx context.Context, id1, linkType int64, id2s []int64, dst []graph.Link) ([]graph.Link, error)
	// GetLinkList appends to dst the page of visible links selected by q,
	// time descending, ties broken by id2 descending.
	GetLinkList(ctx context.Context, q graph.ListQuery, dst []graph.Link) ([]graph.Link, error)
	// CountLinks returns the count row's value, 0 when there is none.
	CountLinks(ctx context.Context, id1, linkType int64) (int64, error)

	// AddNode inserts n with a store-assigned id (ignoring n.ID), greater
	// than every loaded id, and returns that id.
	AddNode(ctx context.Context, n *graph.Node) (int64, error)
	// GetNode returns the node, and false when it is absent or of another type.
	GetNode(ctx context.Context, nodeType int32, id int64) (graph.Node, bool, error)
	// UpdateNode overwrites version, time and data where id and type match.
	UpdateNode(ctx context.Context, n *graph.Node) (bool, error)
	// DeleteNode deletes where id and type match.
	DeleteNode(ctx context.Context, nodeType int32, id int64) (bool, error)

	// Close releases connections and files. The store is unusable afterwards.
	Close() error
}

// LoadInfo describes the graph a load writes.
type LoadInfo struct {
	StartID1 int64
	MaxID1   int64 // exclusive; the node id allocator starts here after the load
	// Nodes, Links and Counts are the rows of the whole graph (0 when
	// unknown), the rows a finishing step such as an index build covers.
	Nodes, Links, Counts int64
	// Stage, when set, is told by BeginLoad and EndLoad about each named
	// step of their work that can take a while (an index build, ANALYZE, a
	// checkpoint, a flush): it is called when the step starts, with the
	// rows it covers (0 when unknown), and returns the function to call
	// when it ends. Use BeginStage, which works without one.
	Stage func(name string, rows int64) (end func())
	// Partial is set when this process loads one part of a graph that
	// several processes load (a --shard load): EndLoad then does only
	// what this process's own rows need (making them durable) and leaves
	// the deferred indexes, the node id allocator and the statistics to
	// the EndLoad of the process that finishes the graph, called once
	// every part is loaded with Partial unset.
	Partial bool
}

// BeginStage reports the start of a named step of a load's work and
// returns the function that reports its end.
func (i LoadInfo) BeginStage(name string, rows int64) (end func()) {
	if i.Stage == nil {
		return func() {}
	}
	return i.Stage(name, rows)
}

// BulkLoader is the load-phase path. Every store of this project has one.
// LoadNodes uses the explicit node ids; LoadLinks does no count
// maintenance; LoadCounts writes count rows as given. The Load methods are
// called concurrently by many loaders between BeginLoad and EndLoad. The
// slices passed to them (and the Data they point to) are only valid during
// the call: the loader reuses them for the next batch.
type BulkLoader interface {
	// BeginLoad prepares for a bulk load (e.g. drops a deferred index).
	BeginLoad(ctx context.Context, info LoadInfo) error
	LoadNodes(ctx context.Context, nodes []graph.Node) error
	LoadLinks(ctx context.Context, links []graph.Link) error
	LoadCounts(ctx context.Context, counts []graph.Count) error
	// EndLoad finishes a load: sets the node id allocator to at least
	// info.MaxID1, builds the deferred indexes that are missing (whichever
	// process dropped them), refreshes statistics; each step is reported
	// through info.BeginStage. With info.Partial it leaves all of these.
	// It is idempotent: a second EndLoad of a finished graph builds
	// nothing.
	EndLoad(ctx context.Context, info LoadInfo) error
}

// Initializer creates the store's schema. Init is idempotent; with drop it
// first removes existing objects.
type Initializer interface {
	Init(ctx context.Context, drop bool) error
}

// SchemaChecker reports missing or wrong tables (graph.ErrSchema, naming
// the fix) before any work starts.
type SchemaChecker interface {
	CheckSchema(ctx context.Context) error
}

// Resetter empties all tables, keeping the schema.
type Resetter interface {
	Reset(ctx context.Context) error
}

// EmptyChecker reports whether the store holds no nodes, links or counts.
type EmptyChecker interface {
	IsEmpty(ctx context.Context) (bool, error)
}

// MetaStore keeps a small key/value record of how the graph was loaded.
type MetaStore interface {
	// GetMeta returns the recorded values, empty when none were recorded.
	GetMeta(ctx context.Context) (map[string]string, error)
	// PutMeta replaces the recorded values.
	PutMeta(ctx context.Context, meta map[string]string) error
}

// Journaler is a store that can resume an interrupted load. The load
// journal (which units of work were started and which are durably written)
// lives in the metadata, and bulk calls made with a context marked by
// WithSkipExisting leave rows whose key already exists as they are, so a
// unit that was partly written can be written again.
type Journaler interface {
	MetaStore
	// UpdateMeta deletes the keys that start with deletePrefix (none when
	// it is empty), then sets the given keys, leaving all others; in one
	// transaction where the store has them.
	UpdateMeta(ctx context.Context, set map[string]string, deletePrefix string) error
	// ClaimMeta sets key to value unless the key is set already, and
	// returns the value the key then holds: of several processes that
	// claim one key at once, exactly one finds its own value (the
	// processes of a --shard load decide so which one finishes the graph).
	ClaimMeta(ctx context.Context, key, value string) (string, error)
}

type skipExistingKey struct{}

// WithSkipExisting marks ctx for bulk calls that must skip rows whose key
// already exists instead of failing on them (replay of a partly written
// unit on load --resume). The rows replayed are identical to those
// written before, so skipping and overwriting are the same.
func WithSkipExisting(ctx context.Context) context.Context {
	return context.WithValue(ctx, skipExistingKey{}, true)
}

// SkipExisting reports whether ctx was marked by WithSkipExisting.
func SkipExisting(ctx context.Context) bool {
	v, _ := ctx.Value(skipExistingKey{}).(bool)
	return v
}

// Scanner streams the data the consistency check needs, ordered by
// (id1, link_type) ascending, so the check works on graphs larger than memory.
type Scanner interface {
	// ScanCounts calls fn for every count row.
	ScanCounts(ctx context.Context, fn func(c graph.Count) error) error
	// ScanVisibleLinkCounts calls fn with the number of visible links of
	// every (id1, link_type) that has at least one.
	ScanVisibleLinkCounts(ctx context.Context, fn func(id1, linkType, visible int64) error) error
	// NodeIDRange returns the smallest and largest node id, ok=false when
	// there are no nodes.
	NodeIDRange(ctx context.Context) (min, max int64, ok bool, err error)
}

// Sizer reports the bytes the store occupies on disk.
type Sizer interface {
	SizeOnDisk(ctx context.Context) (int64, error)
}

// Sessioner is a store that can give one worker a session: a Store whose
// request operations run on one connection it keeps between them, instead
// of taking one from the pool and giving it back around every operation (a
// Java requester of the reference holds its connections in the same way).
// A broken connection is given up and the next operation takes another.
// Only the request operations are for sessions; Close gives the connection
// back and leaves the store open. A session is used by one goroutine.
// The links a session's GetLinkList returns, and the node its GetNode
// returns, may share their Data with those of its next GetLinkList or
// GetNode (a JDBC result set is read before the next statement runs, too);
// copy what must outlive that.
type Sessioner interface {
	Session() Store
}

// RefWriter is a store whose link writes are the reference's
// statements, which differ from graph's rules in two corners: a count row
// that already disagrees with its links is not kept at zero or above
// (the reference adds -1 to it as it is), and where the server's UPDATE
// reports the rows it matched rather than those it changed (matched:
// PostgreSQL) an identical rewrite of a link is reported graph.Updated
// where graph.WriteOutcome says graph.Unchanged. It is not an ability: the
// conformance suite reads it to know what to expect.
type RefWriter interface {
	RefWrites() (on, matched bool)
}

// BlindLinkWriter is a store whose link writes cost less when their
// caller does not read what they found. The request phase does not read it
// (nor does the reference's requester, which only logs it at trace level);
// a MySQL store's procedure then leaves out the result set that carries it.
// Each write is AddLink's, UpdateLink's or DeleteLink's, with the same end
// state and the same errors.
type BlindLinkWriter interface {
	AddLinkBlind(ctx context.Context, l *graph.Link) error
	UpdateLinkBlind(ctx context.Context, l *graph.Link) error
	DeleteLinkBlind(ctx context.Context, id1, linkType, id2 int64, expunge bool) error
}

// Blind returns st's blind link writes, or, when it has none, Reported(st).
func Blind(st Store) BlindLinkWriter {
	if b, ok := st.(BlindLinkWriter); ok {
		return b
	}
	return Reported(st)
}

// Reported returns st's AddLink, UpdateLink and DeleteLink as blind link
// writes: each write reports its outcome, which is dropped.
func Reported(st Store) BlindLinkWriter { return outcomeDropped{st} }

type outcomeDropped struct{ st Store }

func (d outcomeDropped) AddLinkBlind(ctx context.Context, l *graph.Link) error {
	_, err := d.st.AddLink(ctx, l)
	return err
}

func (d outcomeDropped) UpdateLinkBlind(ctx context.Context, l *graph.Link) error {
	_, err := d.st.UpdateLink(ctx, l)
	return err
}

func (d outcomeDropped) DeleteLinkBlind(ctx context.Context, id1, linkType, id2 int64, expunge bool) error {
	_, err := d.st.DeleteLink(ctx, id1, linkType, id2, expunge)
	return err
}

// MaxListBuf is the largest buffer a session keeps for its list reads'
// data between them (a list of 10,000 rows of the 2017 workload's data,
// 23 bytes on average, takes a quarter of it).
const MaxListBuf = 1 << 20

// ListData collects the data of one result's rows in one growing buffer:
// a few allocations per result instead of one per row. Slices handed out
// stay valid when the buffer grows (they keep the old array). A session's
// lists start from the buffer it kept (ListDataFrom) and keep it for the
// next list (Keep).
type ListData struct{ buf []byte }

// ListDataFrom starts a list's data in a session's kept buffer *keep,
// emptied; with keep nil (no session), in a new one.
func ListDataFrom(keep *[]byte) ListData {
	if keep == nil {
		return ListData{}
	}
	return ListData{buf: (*keep)[:0]}
}

// Add copies v into the buffer and returns the copy, capped so that later
// copies cannot write into it; an empty v gives an empty, non-nil slice.
func (d *ListData) Add(v []byte) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	off := len(d.buf)
	d.buf = append(d.buf, v...)
	return d.buf[off:len(d.buf):len(d.buf)]
}

// Keep keeps the buffer, emptied, as *keep for the session's next list,
// unless keep is nil (no session) or the buffer grew past MaxListBuf.
func (d *ListData) Keep(keep *[]byte) {
	if keep != nil && cap(d.buf) <= MaxListBuf {
		*keep = d.buf[:0]
	}
}

// ServerLocator is a store backed by a database server. It says where the
// server of each target is, as far as the server tells, so that a driver
// running on the same machine can measure the server's CPU, memory and
// disk use (a store without it keeps its data inside the driver process).
type ServerLocator interface {
	// Servers describes the server of every target (one unless sharded).
	// Fields the server does not reveal (or that the user may not read)
	// are left empty; an error means the server could not be asked.
	Servers(ctx context.Context) ([]ServerInfo, error)
}

// ServerInfo is where one database server runs.
type ServerInfo struct {
	// Addr is the host:port (or Unix socket directory) the store connects to.
	Addr string
	// PID is the server's process id when the server reports it itself.
	PID int
	// PIDFile is the server's pid file, a path on the server's machine.
	PIDFile string
	// DataDir is the server's data directory, a path on the server's machine.
	DataDir string
}

// Describer reports the server or engine version and the settings that
// affect durability and results (e.g. synchronous_commit), for the results.
type Describer interface {
	Describe(ctx context.Context) (Description, error)
}

// Description is what a Describer reports.
type Description struct {
	Version  string            `json:"version"`
	Settings map[string]string `json:"settings,omitempty"`
}

// Addresser names where a store's data lives (host:port of a server, a
// file), for messages about a server that does not answer. It must not
// talk to the server.
type Addresser interface {
	Addr() string
}

// AddrOf is the store's address, or "" when it has none.
func AddrOf(st Store) string {
	if a, ok := st.(Addresser); ok {
		return a.Addr()
	}
	return ""
}

// BatchHinter is a BulkLoader whose fastest path wants larger batches than
// the reference's default bulk_insert_count (1024 rows), such as COPY. The
// load phase uses the hint unless the user set bulk_insert_count.
type BatchHinter interface {
	BulkBatchRows() int
}

// DataPather is an embedded store that keeps its data in a file or
// directory of the local file system (recorded with the results: the file
// system and device under it shape the figures).
type DataPather interface {
	DataPath() string
}
