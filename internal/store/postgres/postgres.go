package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/secret"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/netconn"
)

// Name is the store's registered name.
const Name = "postgres"

func init() {
	store.Register(store.Driver{
		Abilities: abilities,
		Name:      Name,
		Aliases:   []string{"com.facebook.LinkBench.LinkStorePgsql", "pgsql", "postgresql"},
		Keys: []store.KeyDoc{
			{Name: "pg_schema", Doc: "schema of the tables (default: dbid, or dbprefix followed by 0, as the reference)", IsName: true},
			{Name: "pg_database", Default: "linkbench", Doc: "database to connect to when url is not set (the reference's fixed name)", IsName: true},
			{Name: "sslmode", Default: "prefer", Doc: "disable, allow, prefer, require, verify-ca or verify-full"},
			{Name: "sslrootcert", Doc: "CA certificate file for verify-ca / verify-full"},
			{Name: "defer_index", Default: "true", Doc: "build the id1_type index after a bulk load"},
			{Name: store.LinkWritesKey, Default: "reference", Doc: store.LinkWritesDoc + " (here: the function linkbench_write_<linktable>)"},
		},
		Open: func(ctx context.Context, o store.Options) (store.Store, error) { return Open(ctx, o) },
		// Two connections per requester, as the reference keeps.
		FilesPerWorker: 2,
	})
}

// Store is the PostgreSQL store.
type Store struct {
	// pool holds the connections of reads, node writes and the store's
	// own statements, wpool those of link writes: a requester's two
	// (Session), as the reference's, never trade roles when a session
	// gives them back and another takes them.
	pool, wpool *pgxpool.Pool
	addr        string // host:port for messages
	db, schema  string
	t           store.Tables // schema-qualified, quoted
	raw         store.Tables // bare names
	q           queries      // request-phase statements
	deferIndex  bool
	ioMode      netconn.Mode
	release     func()                    // gives back the Ps reserved for the connections (netconn.Mode.Reserve)
	lockConn    *atomic.Pointer[pgx.Conn] // the session of Lock's advisory locks (shared by sessions)
	conns       conns                     // where request statements but the link writes get their connection
	wconns      conns                     // where link writes get theirs: conns, or a session's second one
	useFunc     bool                      // link_writes = routine: link writes in one call of the write function
	// listBuf, in a session, is the buffer its list reads copy the rows'
	// data into, and GetNode the node's, kept for the next; nil on the
	// shared store, whose reads each get a new one.
	listBuf *[]byte
	// refTx, in a session, is its link writes' transaction, kept for the
	// next (nil on the shared store, whose writes each get a new one).
	refTx *refTx
	// refused, when set (by tests), runs after each refused try of
	// Lock's own key, before the holders are looked up.
	refused func()
}

// connString builds the connection string from url or the separate keys.
func connString(p store.Props) (string, error) {
	raw, err := store.URL(p)
	if err != nil {
		return "", err
	}
	if raw != "" {
		if !strings.HasPrefix(raw, "postgres://") && !strings.HasPrefix(raw, "postgresql://") {
			return "", fmt.Errorf("url (%s): expected postgres://user:password@host:port/database", p.Where("url"))
		}
		return raw, nil
	}
	host := store.String(p, "host", "127.0.0.1")
	port := store.String(p, "port", "5432")
	// The reference connects to the database "linkbench" and keeps the
	// tables in a schema named by dbid, so each can use the other's data.
	u := &url.URL{Scheme: "postgres", Host: net.JoinHostPort(host, port), Path: "/" + store.String(p, "pg_database", "linkbench")}
	user := store.String(p, "user", "postgres")
	if pw, ok := p.Get("password"); ok {
		u.User = url.UserPassword(user, pw)
	} else {
		u.User = url.User(user)
	}
	q := url.Values{}
	q.Set("sslmode", store.String(p, "sslmode", "prefer"))
	if ca := store.String(p, "sslrootcert", ""); ca != "" {
		q.Set("sslrootcert", ca)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Open connects and checks that the server answers.
func Open(ctx context.Context, o store.Options) (*Store, error) {
	p := o.Props
	cs, err := connString(p)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(cs)
	if err != nil {
		// pgx's message may quote a piece of a password that has an
		// unescaped '@' or '/' in it: say what to do instead.
		if store.String(p, "url", "") != "" {
			return nil, fmt.Errorf("url (%s): not a valid postgres:// URL; %s", p.Where("url"), store.URLHint)
		}
		return nil, fmt.Errorf("PostgreSQL connection settings: %v", redactErr(err))
	}
	// One target of a sharded store (package shard): its host and database
	// replace those of url or host/port/dbid.
	if h := store.String(p, "target_host", ""); h != "" {
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			return nil, fmt.Errorf("hosts: %q is not host:port", h)
		}
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("hosts: %q has no valid port", h)
		}
		cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(n)
		cfg.ConnConfig.Fallbacks = nil
	}
	if d := store.String(p, "target_database", ""); d != "" {
		cfg.ConnConfig.Database = d
	}
	mode, err := netconn.ParseMode(store.String(p, "io_mode", ""), o.Concurrency, o.Requests, p.Where("io_mode"))
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"pg_write_function", "pg_write_connection"} {
		if err := store.Removed(p, k, "link writes go as the reference's statements on each requester's second connection, whatever the requesters; link_writes = routine calls the write function instead"); err != nil {
			return nil, err
		}
	}
	useFunc, err := store.LinkWrites(p)
	if err != nil {
		return nil, err
	}
	// A session keeps two connections (Session), as the reference's
	// requesters do: one of pool, one of wpool.
	cfg.MaxConns = int32(max(o.Concurrency, 1) + 2)
	cfg.MinConns = 0
	// Every connection of the pool, the first ones and those made during
	// a phase, has connect_timeout from the dial to the end of its
	// authentication.
	if cfg.ConnConfig.ConnectTimeout, err = store.ConnectTimeout(p); err != nil {
		return nil, err
	}
	cfg.HealthCheckPeriod = 5 * time.Second
	deferIdx, err := store.Bool(p, "defer_index", true)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.DialFunc = netconn.Dialer{Mode: mode, Timeout: cfg.ConnConfig.ConnectTimeout}.DialContext
	s := &Store{
		addr:       net.JoinHostPort(cfg.ConnConfig.Host, fmt.Sprint(cfg.ConnConfig.Port)),
		db:         cfg.ConnConfig.Database,
		deferIndex: deferIdx,
		raw:        store.TableNames(p),
		ioMode:     mode,
		useFunc:    useFunc,
		release:    func() {},
		lockConn:   new(atomic.Pointer[pgx.Conn]),
	}
	s.schema = store.String(p, "pg_schema", store.DatabaseName(p, "linkdb0"))
	if err := checkNames(p, s.schema, s.raw); err != nil {
		return nil, err
	}
	s.t = store.Tables{Link: s.qualified(s.raw.Link), Count: s.qualified(s.raw.Count), Node: s.qualified(s.raw.Node)}
	s.q = s.buildQueries()
	s.release = mode.Reserve(2*int(cfg.MaxConns), o.Concurrency)
	err = store.Connect(ctx, store.Peer{Kind: "PostgreSQL", Addr: s.addr}, cfg.ConnConfig.ConnectTimeout, func(ctx context.Context) error {
		var err error
		if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return err
		}
		if s.wpool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return err
		}
		return s.pool.Ping(ctx)
	}, func() {
		for _, p := range []*pgxpool.Pool{s.pool, s.wpool} {
			if p != nil {
				p.Close()
			}
		}
		s.release()
	}, func(err error) error { return s.connectError(err, cfg.ConnConfig.User) })
	if err != nil {
		return nil, err
	}
	s.conns, s.wconns = pooled{s.pool}, pooled{s.wpool}
	return s, nil
}

// redactErr hides a password that a parse error might echo.
func redactErr(err error) string { return secret.Text(err.Error()) }

// connectError turns a failed connection into one line naming the
// server and the fix (nil: no more to say than store.Connect does).
func (s *Store) connectError(err error, user string) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return fmt.Errorf("cannot connect to PostgreSQL at %s: authentication failed for user %q; check user and password (or url)", s.addr, user)
		case "3D000":
			return fmt.Errorf("cannot connect to PostgreSQL at %s: database %q does not exist; create it (CREATE DATABASE %s) or set dbid/dbprefix", s.addr, s.db, s.db)
		}
		return fmt.Errorf("cannot connect to PostgreSQL at %s: %s (SQLSTATE %s)", s.addr, pe.Message, pe.Code)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("cannot connect to PostgreSQL at %s: connection refused; is the server running? (scripts/postgres.sh start runs a local one)", s.addr)
	}
	return nil
}

// classify maps driver errors to the graph error kinds.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", "55P03":
			return graph.Transient(err)
		case "42P01", "42703", "42883":
			return graph.Schema(fmt.Errorf("%s; run `linkbench init` to create the schema", pe.Message))
		case "57014":
			if strings.Contains(pe.Message, "statement timeout") {
				return fmt.Errorf("%w (the server's statement_timeout, set for this user or database or in the url's options, cancelled it)", err)
			}
		}
		if strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" {
			return graph.Connection(err)
		}
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.SafeToRetry(err) ||
		strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "connection refused") {
		return graph.Connection(err)
	}
	return err
}

// Ping implements store.Pinger.
func (s *Store) Ping(ctx context.Context) error { return classify(s.pool.Ping(ctx)) }

// Addr implements store.Addresser.
func (s *Store) Addr() string { return s.addr }

// Close implements store.Store. A session's gives its connection back.
func (s *Store) Close() error {
	if h, ok := s.conns.(*held); ok {
		h.drop()
		s.wconns.(*held).drop()
		return nil
	}
	if c := s.lockConn.Swap(nil); c != nil {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c.Exec(cctx, "SELECT pg_advisory_unlock_all()")
		c.Close(cctx)
		cancel()
	}
	s.pool.Close()
	s.wpool.Close()
	s.release()
	return nil
}
