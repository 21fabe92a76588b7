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
	"strings"
	"sync"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
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
			{Name: "mongo_transactions", Default: "auto", Doc: "auto, on or off: link write and count change in one multi-document transaction (on), or atomic single-document steps (off); auto is on when the server supports transactions"},
			{Name: "skip_transactions", Default: "false", Doc: "the reference's switch: true means mongo_transactions=off when that key is not set"},
			{Name: "max_retries", Default: "10", Doc: "attempts of a link-write transaction that fails with a transient transaction error (on mode)"},
			{Name: "check_count", Default: "false", Doc: "on mode: after every link write, recount the visible links of (id1, link_type) inside the transaction and fail if the count document disagrees (slow; for debugging)"},
			{Name: "serialize_writes", Default: "auto", Doc: "auto, on or off: also serialise, inside this process, the link writes of one (id1, link_type) and node id allocation; auto is on for servers whose findAndModify and $inc are not atomic (FerretDB v1)"},
			{Name: "auth_source", Default: "admin", Doc: "database that holds the user (host/port form; in url form use authSource=)"},
			{Name: "tls", Default: "false", Doc: "connect with TLS (host/port form; in url form use tls=true)"},
			{Name: "tls_ca_file", Doc: "CA certificate file (PEM) to verify the server with; implies tls"},
		},
		Open: func(ctx context.Context, o store.Options) (store.Store, error) { return Open(ctx, o) },
		// One connection per worker.
		FilesPerWorker: 1,
	})
}

// Store is the MongoDB store.
type Store struct {
	client                     *mongo.Client
	db                         *mongo.Database
	addr                       string // host:port list for messages
	dbName                     string
	names                      store.Tables
	links, counts, nodes, meta *mongo.Collection

	txn        bool // link writes in multi-document transactions
	txnMode    string
	maxRetries int
	checkCount bool
	// serial, when set, serialises link writes per (id1, link_type) and
	// node id allocation inside this process (serialize_writes).
	serial *stripes
	// pointReads: read several id2s of a multiget by one _id lookup each,
	// for servers that only index _id equality (FerretDB).
	pointReads bool
	server     string // "MongoDB 7.0.2" or "FerretDB v1.24.0"
	logf       func(string, ...any)
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
func Open(ctx context.Context, o store.Options) (*Store, error) {
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
	co := options.Client().ApplyURI(st.uri).
		SetMaxPoolSize(uint64(max(o.Concurrency, 1) + 2)).
		SetConnectTimeout(bound).
		SetServerSelectionTimeout(bound).
		SetAppName("linkbench")
	if st.auth != nil {
		co.SetAuth(*st.auth)
	}
	if st.tlsCfg != nil {
		co.SetTLSConfig(st.tlsCfg)
	}
	if err := co.Validate(); err != nil {
		return nil, fmt.Errorf("MongoDB connection settings: %s", redact(err.Error()))
	}
	client, err := mongo.Connect(co)
	if err != nil {
		return nil, fmt.Errorf("MongoDB connection settings: %s", redact(err.Error()))
	}
	s := &Store{client: client, addr: st.addr, dbName: st.dbName, names: store.TableNames(p), logf: o.Logf}
	if err := validNames(p, st.dbName, s.names); err != nil {
		client.Disconnect(context.Background())
		return nil, err
	}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	s.db = client.Database(st.dbName)
	s.links = s.db.Collection(s.names.Link)
	s.counts = s.db.Collection(s.names.Count)
	s.nodes = s.db.Collection(s.names.Node)
	s.meta = s.db.Collection(store.MetaTable)
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
	if s.maxRetries, err = intKey(p, "max_retries", 10); err != nil {
		return fail(err)
	}
	if s.checkCount, err = store.Bool(p, "check_count", false); err != nil {
		return fail(err)
	}
	if err := s.pickMode(p, hello); err != nil {
		return fail(err)
	}
	if err := s.pickSerial(p); err != nil {
		return fail(err)
	}
	return s, nil
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

func intKey(p store.Props, key string, def int64) (int, error) {
	n, err := store.Int(p, key, def)
	if err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("%s (%s): %d must be at least 1", key, p.Where(key), n)
	}
	return int(n), nil
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
		s.pointReads = true
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
	case "on", "true":
		if !h.transactions {
			return fmt.Errorf("mongo_transactions (%s) is on, but %s at %s (%s) has no multi-document transactions (they need a replica set or a sharded cluster); set mongo_transactions=off or auto",
				p.Where("mongo_transactions"), s.server, s.addr, h.topology)
		}
		s.txn = true
	case "off", "false":
		s.txn = false
	default:
		return fmt.Errorf("mongo_transactions (%s): %q is not auto, on or off", p.Where("mongo_transactions"), mode)
	}
	s.txnMode = "off (atomic single-document writes, $inc on counts)"
	if s.txn {
		s.txnMode = "on (multi-document transactions)"
	}
	if s.checkCount && !s.txn {
		s.logf("mongodb: check_count needs transactions (mongo_transactions=on); ignored")
		s.checkCount = false
	}
	return nil
}

// pickSerial resolves serialize_writes. FerretDB v1 runs findAndModify and
// update as a read followed by a write of the whole document, so two
// concurrent writers of one document can both see the same previous state
// or lose an $inc; the off mode's counting needs those steps atomic.
func (s *Store) pickSerial(p store.Props) error {
	v := strings.ToLower(store.String(p, "serialize_writes", "auto"))
	on := false
	switch v {
	case "auto":
		on = s.pointReads && !s.txn
	case "on", "true":
		on = true
	case "off", "false":
	default:
		return fmt.Errorf("serialize_writes (%s): %q is not auto, on or off", p.Where("serialize_writes"), v)
	}
	if on {
		s.serial = &stripes{}
		s.txnMode += "; writes of one (id1, link_type) serialised in the driver"
	}
	return nil
}

// stripes is a fixed set of mutexes picked by key hash.
type stripes struct {
	mu    [1024]sync.Mutex
	alloc sync.Mutex
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
	codeWriteConflict    = 112
	codeNoSuchTxn        = 251
	codeNamespaceMissing = 26
)

// classify maps driver errors to the graph error kinds.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		switch {
		case se.HasErrorLabel("TransientTransactionError"), se.HasErrorCode(codeWriteConflict), se.HasErrorCode(codeNoSuchTxn),
			se.HasErrorCode(codeDuplicateKey): // two upserts of one new _id raced; the retry finds it
			return graph.Transient(err)
		case se.HasErrorCode(codeNamespaceMissing):
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

// Close implements store.Store.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.client.Disconnect(ctx)
}

// Describe implements store.Describer: the server and the consistency mode
// in force, which the results record.
func (s *Store) Describe(ctx context.Context) (store.Description, error) {
	return store.Description{Version: s.server, Settings: map[string]string{"mongo_transactions": s.txnMode}}, nil
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

// Mode is the consistency mode in force: "on" or "off".
func (s *Store) Mode() string {
	if s.txn {
		return "on"
	}
	return "off"
}
