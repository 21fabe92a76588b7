package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/netconn"
)

// Name is the store's registered name.
const Name = "mysql"

func init() {
	store.Register(store.Driver{
		Abilities: abilities,
		Name:      Name,
		Aliases:   []string{"com.facebook.LinkBench.LinkStoreMysql", "mariadb"},
		Keys: []store.KeyDoc{
			{Name: "mysql_engine", Default: "innodb", Doc: "storage engine: innodb or rocksdb"},
			{Name: "mysql_partitions", Default: "0", Doc: "PARTITION BY KEY(id1) PARTITIONS n on linktable (0 = none)"},
			{Name: "tls", Doc: "go-sql-driver tls setting: true, skip-verify, preferred or a registered name"},
			{Name: "defer_index", Default: "true", Doc: "build the id1_type index after a bulk load"},
			{Name: store.LinkWritesKey, Default: "reference", Doc: store.LinkWritesDoc + " (here: the stored procedure linkbench_write_<linktable>; not on TiDB)"},
		},
		Open: func(ctx context.Context, o store.Options) (store.Store, error) { return Open(ctx, o) },
		// Three pools (reads, writes, loads) of one connection per worker.
		FilesPerWorker: 3,
	})
}

// Store is the MySQL store.
type Store struct {
	r, w, load *sql.DB
	addr       string
	db         string
	engine     string
	partitions int64
	kind       string // "MySQL", "MariaDB" or "TiDB", from the version string
	useProc    bool   // link_writes = routine: link writes in one CALL of the procedure
	socks      *sockets
	t          store.Tables
	qLink      string // t.Link quoted, for the multiget's text
	deferIndex bool
	st         *stmts       // the request statements of the pools
	noInfile   *atomic.Bool // the server refused LOAD DATA LOCAL INFILE
	sess       *session     // set in a session's copy of the store (Session)
	release    func()       // gives back the Ps reserved for the connections (netconn.Mode.Reserve)
	cfg        *gomysql.Config
	logf       func(string, ...any)
	// refused, when set (by tests), runs after each refusal of Lock,
	// before the holder is looked up.
	refused func()
}

// isInfileRefused reports the errors of a server that does not allow
// LOAD DATA LOCAL INFILE (local_infile=OFF, or a proxy that blocks it).
func isInfileRefused(err error) bool {
	var me *gomysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1148 || me.Number == 3948 || me.Number == 2068 || me.Number == 1235)
}

// dsnConfig builds the driver config from url or the separate keys.
func dsnConfig(p store.Props) (*gomysql.Config, error) {
	var cfg *gomysql.Config
	u, err := store.URL(p)
	if err != nil {
		return nil, err
	}
	if u != "" {
		if strings.HasPrefix(u, "mysql://") {
			pu, err := url.Parse(u)
			if err != nil {
				return nil, fmt.Errorf("url (%s): expected mysql://user:password@host:port/database; %s", p.Where("url"), store.URLHint)
			}
			cfg = gomysql.NewConfig()
			cfg.Net, cfg.Addr = "tcp", pu.Host
			if pu.Port() == "" {
				cfg.Addr = net.JoinHostPort(pu.Hostname(), "3306")
			}
			cfg.User = pu.User.Username()
			cfg.Passwd, _ = pu.User.Password()
			cfg.DBName = strings.TrimPrefix(pu.Path, "/")
		} else {
			c, err := gomysql.ParseDSN(u)
			if err != nil {
				return nil, fmt.Errorf("url (%s): not a mysql:// URL or go-sql-driver DSN", p.Where("url"))
			}
			cfg = c
		}
	} else {
		cfg = gomysql.NewConfig()
		cfg.Net = "tcp"
		cfg.Addr = net.JoinHostPort(store.String(p, "host", "127.0.0.1"), store.String(p, "port", "3306"))
		cfg.User = store.String(p, "user", "root")
		cfg.Passwd, _ = p.Get("password")
		cfg.DBName = store.DatabaseName(p, "linkdb0")
	}
	// One target of a sharded store (package shard): its host and database
	// replace those of url or host/port/dbid.
	if h := store.String(p, "target_host", ""); h != "" {
		cfg.Addr = h
	}
	if d := store.String(p, "target_database", ""); d != "" {
		cfg.DBName = d
	}
	if v := store.String(p, "tls", ""); v != "" {
		cfg.TLSConfig = v
	}
	cfg.Params = map[string]string{}
	cfg.InterpolateParams = false
	cfg.ParseTime = false
	cfg.Timeout = store.DefaultConnectTimeout // Open sets connect_timeout
	cfg.MultiStatements = false
	cfg.ClientFoundRows = true // UPDATE reports matched rows, as the SPEC's "a row matched"
	// latin1 on the wire: payload bytes reach the latin1 columns unchanged.
	dsn := cfg.FormatDSN()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	out, err := gomysql.ParseDSN(dsn + sep + "charset=latin1")
	if err != nil {
		return nil, err
	}
	if out.Params == nil {
		out.Params = map[string]string{}
	}
	return out, nil
}

// Open connects the read, write and load pools.
func Open(ctx context.Context, o store.Options) (*Store, error) {
	p := o.Props
	cfg, err := dsnConfig(p)
	if err != nil {
		return nil, err
	}
	engine := strings.ToLower(store.String(p, "mysql_engine", "innodb"))
	if engine != "innodb" && engine != "rocksdb" {
		return nil, fmt.Errorf("mysql_engine = %q (%s): expected innodb or rocksdb", engine, p.Where("mysql_engine"))
	}
	parts, err := store.Int(p, "mysql_partitions", 0)
	if err != nil {
		return nil, err
	}
	deferIdx, err := store.Bool(p, "defer_index", true)
	if err != nil {
		return nil, err
	}
	noBinlog, err := store.Bool(p, "mysql_disable_binlog_load", false)
	if err != nil {
		return nil, err
	}
	n := max(o.Concurrency, 1) + 2
	mode, err := netconn.ParseMode(store.String(p, "io_mode", ""), o.Concurrency, o.Requests, p.Where("io_mode"))
	if err != nil {
		return nil, err
	}
	if err := store.Removed(p, "mysql_write_procedure", "link writes go as the reference's statements, whatever the requesters; link_writes = routine calls the procedure instead"); err != nil {
		return nil, err
	}
	useProc, err := store.LinkWrites(p)
	if err != nil {
		return nil, err
	}
	if err := ident.CheckTables(p, store.TableNames(p), procPrefix); err != nil {
		return nil, err
	}
	bound, err := store.ConnectTimeout(p)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = bound
	s := &Store{addr: cfg.Addr, db: cfg.DBName, engine: engine, partitions: parts, deferIndex: deferIdx, t: store.TableNames(p), useProc: useProc, release: func() {}, cfg: cfg, logf: o.Logf,
		socks: &sockets{}, st: &stmts{}, noInfile: &atomic.Bool{}}
	s.qLink = q(s.t.Link)
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	s.socks.dialer = netconn.Dialer{Mode: mode, Timeout: cfg.Timeout}
	// Each user waits on one connection at a time (a session holds one of
	// each pool but runs one statement at a time).
	s.release = mode.Reserve(n, o.Concurrency)
	open := func(params map[string]string, interpolate, foundRows bool) (*sql.DB, error) {
		c := cfg.Clone()
		c.InterpolateParams = interpolate
		c.ClientFoundRows = foundRows
		own := make(map[string]string, len(c.Params)+len(params))
		for k, v := range c.Params {
			own[k] = v
		}
		c.Params = own
		for k, v := range params {
			c.Params[k] = v
		}
		c.DialFunc = s.socks.dial
		c.Logger = newDriverLog(s.socks)
		conn, err := gomysql.NewConnector(c)
		if err != nil {
			return nil, err
		}
		db := sql.OpenDB(conn)
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
		db.SetConnMaxLifetime(time.Hour)
		return db, nil
	}
	// The reads, the node writes and the rest run on r, the link writes on
	// w, as the reference's two connections per requester. Neither sets an
	// isolation level: the server's applies, as it does to the reference's.
	// An UPDATE on w reports the rows it changed (the reference's driver
	// asks for that, useAffectedRows); one on r those it matched, which is
	// what UPDATE_NODE reports.
	if s.r, err = open(nil, false, true); err != nil {
		return nil, err
	}
	if s.w, err = open(nil, false, false); err != nil {
		return nil, err
	}
	loadParams := map[string]string{"unique_checks": "0"}
	if noBinlog {
		loadParams["sql_log_bin"] = "0"
	}
	// Bulk inserts are sent as text: one round trip per statement instead
	// of prepare, execute and close of a statement used once.
	if s.load, err = open(loadParams, true, true); err != nil {
		return nil, err
	}
	var version string
	err = store.Connect(ctx, store.Peer{Kind: "MySQL", Addr: s.addr}, bound, func(ctx context.Context) error {
		for _, db := range []*sql.DB{s.r, s.w, s.load} {
			if err := db.PingContext(ctx); err != nil {
				return err
			}
		}
		return s.r.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version)
	}, func() { s.Close() }, func(err error) error { return s.connectError(err, cfg.User) })
	if err != nil {
		return nil, err
	}
	s.kind = serverKind(version)
	if s.kind == "TiDB" {
		// TiDB's LOAD DATA re-encodes bytes above 127 of a latin1 column
		// as UTF-8; its multi-row INSERTs keep them.
		s.noInfile.Store(true)
	}
	return s, nil
}

// connectError turns a failed connection into one line naming the
// server and the fix (nil: no more to say than store.Connect does).
func (s *Store) connectError(err error, user string) error {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1045:
			return fmt.Errorf("cannot connect to MySQL at %s: access denied for user %q; check user and password (or url)", s.addr, user)
		case 1049:
			return fmt.Errorf("cannot connect to MySQL at %s: database %q does not exist; create it (CREATE DATABASE %s) or set dbid/dbprefix", s.addr, s.db, s.db)
		case 1044:
			return fmt.Errorf("cannot connect to MySQL at %s: user %q may not use database %q; grant it privileges", s.addr, user, s.db)
		}
		return fmt.Errorf("cannot connect to MySQL at %s: %s (error %d)", s.addr, me.Message, me.Number)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("cannot connect to MySQL at %s: connection refused; is the server running? (scripts/mariadb.sh start runs a local one)", s.addr)
	}
	return nil
}

// classify maps driver errors to the graph error kinds.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1213, 1205, 1180, 1020:
			return graph.Transient(err)
		case 9007, 8002, 8022, 8028, 9006:
			// TiDB: write conflicts of optimistic and pessimistic
			// transactions, a retry-limit hit, a schema change under the
			// transaction, GC life time: all worth another try.
			return graph.Transient(err)
		case 1146, 1054:
			return graph.Schema(fmt.Errorf("%s; run `linkbench init` to create the schema", me.Message))
		case 2006, 2013, 1927, 1053:
			return graph.Connection(err)
		case 1969, 3024:
			return fmt.Errorf("%w (the server's max_statement_time / max_execution_time cancelled it)", err)
		}
		return err
	}
	var ne net.Error
	// sql.ErrConnDone: a session's connection that an earlier attempt
	// found broken (database/sql closes it).
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, gomysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) || errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) {
		return graph.Connection(err)
	}
	return err
}

// Ping implements store.Pinger.
func (s *Store) Ping(ctx context.Context) error { return classify(s.r.PingContext(ctx)) }

// Addr implements store.Addresser.
func (s *Store) Addr() string { return s.addr }

// Close implements store.Store.
func (s *Store) Close() error {
	if s.sess != nil {
		s.sess.unwatch()
		s.sess.drop()
		return nil
	}
	s.st.close()
	var errs []error
	for _, db := range []*sql.DB{s.r, s.w, s.load} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	s.release()
	return errors.Join(errs...)
}
