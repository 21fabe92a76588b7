package mongo

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/secret"
	"github.com/linkbench/linkbench/internal/store"
)

// Name is the store's registered name.
const Name = "mongodb"

func init() {
	store.Register(store.Driver{
		Abilities: abilities,
		CheckTargets: func(p store.Props) error {
			if store.String(p, "url", "") != "" {
				return errors.New("hosts with url: a MongoDB url names its own servers; give hosts with host/port-style keys (user, password, auth_source) instead of url")
			}
			return nil
		},
		Name:    Name,
		Aliases: []string{"com.facebook.LinkBench.LinkStoreMongoDb2", "com.facebook.LinkBench.LinkStoreMongoDbBasic", "mongo"},
		Keys: []store.KeyDoc{
			{Name: "mongo_transactions", Default: "auto", Doc: "auto, on or off: link writes, node writes and bulk loads each in one multi-document transaction, as the reference (on), or the same commands without transactions, as the reference's skip_transactions (off); auto is on when the server has multi-document transactions"},
			{Name: "skip_transactions", Default: "false", Doc: "the reference's switch: true means mongo_transactions=off when that key is not set"},
			{Name: "check_count", Default: "false", Doc: "after every ADD_LINK and UPDATE_LINK, and every DELETE_LINK that changes a count, compare the count document with the visible links by two aggregations in the write's transaction, as the reference's check_count (slow; for debugging)"},
			{Name: "serialize_writes", Default: "auto", Doc: "auto, on or off: also serialise, inside this process, the link writes of one (id1, link_type); auto is on for servers whose findAndModify and $inc are not atomic (FerretDB v1); the server sees the same commands"},
			{Name: "auth_source", Default: "admin", Doc: "database that holds the user (host/port form; in url form use authSource=)"},
			{Name: "tls", Default: "false", Doc: "connect with TLS (host/port form; in url form use tls=true)"},
			{Name: "tls_ca_file", Doc: "CA certificate file (PEM) to verify the server with; implies tls"},
		},
		Open: func(ctx context.Context, o store.Options) (store.Store, error) { return Open(ctx, o) },
		// A requester session's own client: its pool (sessionPool) and
		// its monitor's connection.
		FilesPerWorker: sessionPool + 1,
	})
}

// Store is the MongoDB store. Open returns the store of the process,
// whose client's pool serves every goroutine; Session returns a
// requester's, with a client and an explicit session of its own, as each
// requester of the reference has.
type Store struct {
	*shared
	client                     *mongo.Client
	db                         *mongo.Database
	links, counts, nodes, meta *mongo.Collection
	// sess is a requester session's explicit session: its link writes,
	// node writes and transactions run on it, as the reference's do on
	// the one session it opens per requester. nil in the process's store,
	// whose transactions each take a session from the client's pool.
	sess *mongo.Session
	// base is, in a session, the process's client (nil in the process's
	// store).
	base *mongo.Client
	// broken: the session could not be started; its operations fail until
	// it is opened again.
	broken bool
}

// shared is what a store and its sessions share.
type shared struct {
	addr   string // host:port list for messages
	dbName string
	names  store.Tables
	// clientOptions returns the options of a new client with a pool of
	// the given size (the monitor is set only by tests).
	clientOptions func(pool uint64) *options.ClientOptions

	txn        bool // multi-document transactions
	txnMode    string
	checkCount bool
	// ferret: the server is FerretDB v1, which does not implement
	// findAndModify's fields and sorts in memory (forms).
	ferret bool
	forms  string
	// serial, when set, serialises link writes per (id1, link_type)
	// inside this process (serialize_writes).
	serial *stripes
	server string // "MongoDB 7.0.2" or "FerretDB v1.24.0 (...)"
	logf   func(string, ...any)

	ids         nodeIDs
	loadedNodes atomic.Bool // this process bulk-loaded nodes
}

// settings are what Open reads from the config.
type settings struct {
	uri                string
	auth               *options.Credential
	tlsCfg             *tls.Config
	addr, dbName, user string
}

func readSettings(p store.Props) (settings, error) {
	var st settings
	st.dbName = store.DatabaseName(p, "linkdb0")
	user := store.String(p, "user", "")
	pw, hasPW := p.Get("password")
	u, err := store.URL(p)
	if err != nil {
		return st, err
	}
	if u != "" {
		if !strings.HasPrefix(u, "mongodb://") && !strings.HasPrefix(u, "mongodb+srv://") {
			return st, fmt.Errorf("url (%s): expected mongodb://[user:password@]host:port/[?options]", p.Where("url"))
		}
		pu, err := url.Parse(u)
		if err != nil {
			return st, fmt.Errorf("url (%s): not a valid mongodb:// URL; %s", p.Where("url"), store.URLHint)
		}
		st.uri, st.addr = u, pu.Host
		if pu.User != nil {
			st.user = pu.User.Username()
		}
		if user != "" && pu.User == nil {
			// user/password keys beside a url without credentials.
			st.auth = &options.Credential{Username: user, Password: pw, PasswordSet: hasPW, AuthSource: store.String(p, "auth_source", "admin")}
			st.user = user
		}
	} else {
		host := store.String(p, "host", "127.0.0.1")
		port := store.String(p, "port", "27017")
		st.addr = net.JoinHostPort(host, port)
		st.uri = "mongodb://" + st.addr + "/"
		if user != "" {
			if !hasPW {
				return st, fmt.Errorf("user (%s) is set but password is not: set both, or neither", p.Where("user"))
			}
			st.auth = &options.Credential{Username: user, Password: pw, PasswordSet: true, AuthSource: store.String(p, "auth_source", "admin")}
			st.user = user
		}
	}
	useTLS, err := store.Bool(p, "tls", false)
	if err != nil {
		return st, err
	}
	if ca := store.String(p, "tls_ca_file", ""); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return st, fmt.Errorf("tls_ca_file (%s): %v", p.Where("tls_ca_file"), err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return st, fmt.Errorf("tls_ca_file (%s): %s holds no PEM certificate", p.Where("tls_ca_file"), ca)
		}
		st.tlsCfg = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	} else if useTLS {
		st.tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return st, nil
}

// Open connects, checks that the server answers and picks the consistency
// mode.
func Open(ctx context.Context, o store.Options) (*Store, error) { return open(ctx, o, nil) }

// open is Open with a command monitor on every client (tests record what
// the server is sent).
func open(ctx context.Context, o store.Options, mon *event.CommandMonitor) (*Store, error) {
	p := o.Props
	st, err := readSettings(p)
	if err != nil {
		return nil, err
	}
	bound, err := store.ConnectTimeout(p)
	if err != nil {
		return nil, err
	}
	// A connection of the pool has connect_timeout from the dial to the
	// end of its handshake; an operation waits as long for a server to
	// send it to.
	clientOptions := func(pool uint64) *options.ClientOptions {
		co := options.Client().ApplyURI(st.uri).
			SetMaxPoolSize(pool).
			SetConnectTimeout(bound).
			SetServerSelectionTimeout(bound).
			// The reference's Java driver (3.11) polls the server every
			// 10 s on a connection of its own; streaming would add one.
			SetServerMonitoringMode(options.ServerMonitoringModePoll).
			SetAppName("linkbench")
		if st.auth != nil {
			co.SetAuth(*st.auth)
		}
		if st.tlsCfg != nil {
			co.SetTLSConfig(st.tlsCfg)
		}
		if mon != nil {
			co.SetMonitor(mon)
		}
		return co
	}
	co := clientOptions(uint64(max(o.Concurrency, 1) + 2))
	if err := co.Validate(); err != nil {
		return nil, fmt.Errorf("MongoDB connection settings: %s", redact(err.Error()))
	}
	client, err := mongo.Connect(co)
	if err != nil {
		return nil, fmt.Errorf("MongoDB connection settings: %s", redact(err.Error()))
	}
	sh := &shared{addr: st.addr, dbName: st.dbName, names: store.TableNames(p), clientOptions: clientOptions, logf: o.Logf}
	s := &Store{shared: sh}
	s.bind(client)
	if err := validNames(p, st.dbName, s.names); err != nil {
		client.Disconnect(context.Background())
		return nil, err
	}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	fail := func(err error) (*Store, error) {
		client.Disconnect(context.Background())
		return nil, err
	}
	var hello helloInfo
	err = store.Connect(ctx, store.Peer{Kind: "MongoDB", Addr: s.addr}, bound, func(ctx context.Context) error {
		var err error
		hello, err = s.hello(ctx)
		return err
	}, func() {
		dctx, cancel := context.WithTimeout(context.Background(), bound)
		client.Disconnect(dctx)
		cancel()
	}, func(err error) error { return s.connectError(err, st.user, bound) })
	if err != nil {
		return nil, err
	}
	if s.checkCount, err = store.Bool(p, "check_count", false); err != nil {
		return fail(err)
	}
	if _, ok := p.Get("max_retries"); ok {
		// The reference's store retried a transient error itself, up to
		// max_retries attempts 20 ms x n apart; here the run retries it.
		s.logf("mongodb: max_retries (%s) is the reference's key and is not read: transient errors are retried by the run, up to retry_attempts", p.Where("max_retries"))
	}
	if err := s.pickMode(p, hello); err != nil {
		return fail(err)
	}
	if err := s.pickSerial(p); err != nil {
		return fail(err)
	}
	s.forms = "reference"
	if s.ferret {
		s.forms = "FerretDB: findAndModify without fields (FerretDB v1 does not implement it), lists sorted {time: -1, id2: -1} (FerretDB sorts in memory, so time ties would come in no order)"
	}
	return s, nil
}

// bind makes client the store's.
func (s *Store) bind(client *mongo.Client) {
	s.client = client
	s.db = client.Database(s.dbName)
	s.links = s.db.Collection(s.names.Link)
	s.counts = s.db.Collection(s.names.Count)
	s.nodes = s.db.Collection(s.names.Node)
	s.meta = s.db.Collection(store.MetaTable)
}

// validNames checks the database and collection names against MongoDB's
// rules, so that a name is refused with its key instead of failing (or
// naming another namespace) at the server.
func validNames(p store.Props, db string, t store.Tables) error {
	if db == "" || len(db) > 63 || strings.ContainsAny(db, "/\\. \"$*<>:|?\x00") {
		return fmt.Errorf("database name %q (dbid/dbprefix, or the url's path): not a valid MongoDB database name (at most 63 characters, none of /\\. \"$*<>:|?)", db)
	}
	for key, name := range map[string]string{"linktable": t.Link, "counttable": t.Count, "nodetable": t.Node} {
		if name == "" || strings.ContainsAny(name, "$\x00") || strings.HasPrefix(name, "system.") {
			return fmt.Errorf("%s = %q (%s): not a valid MongoDB collection name (no '$', not system.*)", key, name, p.Where(key))
		}
	}
	return nil
}

// helloInfo is what the server says about itself.
type helloInfo struct {
	transactions bool
	topology     string
}

// hello asks the server what it is: its version (buildInfo) and whether it
// can run multi-document transactions (hello: a replica set member or a
// mongos, with sessions).
func (s *Store) hello(ctx context.Context) (helloInfo, error) {
	var h struct {
		SetName    string `bson:"setName"`
		Msg        string `bson:"msg"`
		SessionTTL *int64 `bson:"logicalSessionTimeoutMinutes"`
		MaxWire    int32  `bson:"maxWireVersion"`
	}
	if err := s.client.Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&h); err != nil {
		return helloInfo{}, err
	}
	var bi struct {
		Version string `bson:"version"`
		Ferret  string `bson:"ferretdbVersion"`
	}
	if err := s.db.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&bi); err != nil {
		return helloInfo{}, err
	}
	s.server = "MongoDB " + bi.Version
	if bi.Ferret != "" {
		s.server = "FerretDB " + bi.Ferret + " (MongoDB " + bi.Version + " protocol)"
		s.ferret = true
	}
	info := helloInfo{topology: "standalone"}
	switch {
	case h.SetName != "":
		info.topology = "replica set " + h.SetName
		info.transactions = h.SessionTTL != nil && h.MaxWire >= 7
	case h.Msg == "isdbgrid":
		info.topology = "sharded (mongos)"
		info.transactions = h.SessionTTL != nil && h.MaxWire >= 8
	}
	if bi.Ferret != "" {
		info.transactions = false // FerretDB v1 accepts sessions but has no transactions
	}
	return info, nil
}

// pickMode resolves mongo_transactions against what the server can do.
func (s *Store) pickMode(p store.Props, h helloInfo) error {
	mode := strings.ToLower(store.String(p, "mongo_transactions", ""))
	if mode == "" {
		skip, err := store.Bool(p, "skip_transactions", false)
		if err != nil {
			return err
		}
		mode = "auto"
		if skip {
			mode = "off"
		}
	}
	switch mode {
	case "auto":
		s.txn = h.transactions
		s.txnMode = "on (multi-document transactions, as the reference)"
		if !s.txn {
			s.txnMode = fmt.Sprintf("off (%s, %s, has no multi-document transactions: the reference's commands without them, as its skip_transactions)", s.server, h.topology)
		}
		return nil
	case "on", "true":
		if !h.transactions {
			return fmt.Errorf("mongo_transactions (%s) is on, but %s at %s (%s) has no multi-document transactions (they need a replica set or a sharded cluster); set mongo_transactions=off or auto",
				p.Where("mongo_transactions"), s.server, s.addr, h.topology)
		}
		s.txn = true
		s.txnMode = "on (multi-document transactions, as the reference)"
	case "off", "false":
		s.txn = false
		s.txnMode = "off (set: the reference's commands without transactions, as its skip_transactions)"
	default:
		return fmt.Errorf("mongo_transactions (%s): %q is not auto, on or off", p.Where("mongo_transactions"), mode)
	}
	return nil
}

// pickSerial resolves serialize_writes. FerretDB v1 runs findAndModify and
// update as a read followed by a write of the whole document, so two
// concurrent writers of one document can both see the same previous state
// or lose an $inc. Serialising the writers of one (id1, link_type) in the
// driver changes when commands are sent, not which.
func (s *Store) pickSerial(p store.Props) error {
	v := strings.ToLower(store.String(p, "serialize_writes", "auto"))
	on := false
	switch v {
	case "auto":
		on = s.ferret && !s.txn
	case "on", "true":
		on = true
	case "off", "false":
	default:
		return fmt.Errorf("serialize_writes (%s): %q is not auto, on or off", p.Where("serialize_writes"), v)
	}
	if on {
		s.serial = &stripes{}
	}
	return nil
}

// stripes is a fixed set of mutexes picked by key hash.
type stripes struct {
	mu [1024]sync.Mutex
}

func (st *stripes) lock(id1, lt int64) *sync.Mutex {
	h := uint64(id1)*0x9e3779b97f4a7c15 ^ uint64(lt)*0xc2b2ae3d27d4eb4f
	m := &st.mu[(h>>32)%uint64(len(st.mu))]
	m.Lock()
	return m
}

// redact hides the passwords of a message.
func redact(msg string) string { return secret.Text(msg) }

// connectError turns a failed first contact into one line naming the
// server and the fix (nil: no more to say than store.Connect does).
func (s *Store) connectError(err error, user string, bound time.Duration) error {
	var ce mongo.CommandError
	msg := err.Error()
	switch {
	case errors.As(err, &ce) && (ce.Code == 18 || ce.Code == 13) || strings.Contains(msg, "AuthenticationFailed") || strings.Contains(msg, "auth error") || strings.Contains(msg, "authentication failed"):
		return fmt.Errorf("cannot connect to MongoDB at %s: authentication failed for user %q; check user and password (or url, and authSource / auth_source)", s.addr, user)
	case errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(msg, "connection refused"):
		return fmt.Errorf("cannot connect to MongoDB at %s: connection refused; is the server running? (scripts/ferretdb.sh start runs a local MongoDB-protocol server)", s.addr)
	case strings.Contains(msg, "server selection"):
		// The driver's own wait for a server, of the same bound.
		return &store.NoAnswerError{Server: store.Peer{Kind: "MongoDB", Addr: s.addr}, Bound: bound}
	}
	return nil
}

// Error codes of the server that matter here.
const (
	codeDuplicateKey     = 11000
	codeNamespaceMissing = 26
)

// retryCodes are the error codes the reference's store retries (besides
// any error labelled TransientTransactionError): LockTimeout, LockBusy,
// WriteConflict, ConflictingOperationInProgress, TooManyLocks,
// TransactionTooOld, AtomicityFailure, SnapshotTooOld,
// SnapshotUnavailable, NoSuchTransaction.
var retryCodes = []int{24, 46, 112, 117, 208, 225, 226, 239, 246, 251}

// classify maps driver errors to the graph error kinds. Transient are the
// errors the reference's store retries; a duplicate key is not one.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		if se.HasErrorLabel("TransientTransactionError") || slices.ContainsFunc(retryCodes, se.HasErrorCode) {
			return graph.Transient(err)
		}
		if se.HasErrorCode(codeNamespaceMissing) {
			return graph.Schema(fmt.Errorf("%v; run `linkbench init` to create the collections", err))
		}
	}
	if mongo.IsNetworkError(err) || strings.Contains(err.Error(), "server selection") || strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "connection(") || strings.Contains(err.Error(), "client is disconnected") {
		return graph.Connection(err)
	}
	return err
}

// Ping implements store.Pinger.
func (s *Store) Ping(ctx context.Context) error { return classify(s.client.Ping(ctx, nil)) }

// Addr implements store.Addresser.
func (s *Store) Addr() string { return s.addr }

// Close implements store.Store; a session's closes its session and its
// client, as the reference's requester closes its store.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.base != nil {
		return s.closeSession(ctx)
	}
	return s.client.Disconnect(ctx)
}

// Describe implements store.Describer: the server and what, of the
// reference's commands, it is sent (chosen from what it can do), which
// the results record.
func (s *Store) Describe(ctx context.Context) (store.Description, error) {
	serial := "off"
	if s.serial != nil {
		serial = "on (link writes of one (id1, link_type) serialised in this process)"
	}
	return store.Description{Version: s.server, Settings: map[string]string{
		"mongo_transactions": s.txnMode,
		"mongo_commands":     s.forms,
		"serialize_writes":   serial,
	}}, nil
}

// Servers implements store.ServerLocator with the pid that serverStatus
// reports (mongod does; a server that does not leaves it 0).
func (s *Store) Servers(ctx context.Context) ([]store.ServerInfo, error) {
	var st struct {
		PID int64 `bson:"pid"`
	}
	info := store.ServerInfo{Addr: s.addr}
	if err := s.client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err == nil {
		info.PID = int(st.PID)
	} else if ctx.Err() != nil {
		return nil, err
	}
	return []store.ServerInfo{info}, nil
}

// Mode is the transaction mode in force: "on" or "off".
func (s *Store) Mode() string {
	if s.txn {
		return "on"
	}
	return "off"
}
