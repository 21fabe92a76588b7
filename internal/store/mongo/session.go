package mongo

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// Session implements store.Sessioner: a requester's store with a client
// of its own (its connection and its monitor's), an explicit session for
// its link writes, node writes and transactions, and serverStatus run once
// when it opens, as each requester of the reference opens its store. It
// is used by one goroutine.
func (s *Store) Session() store.Store {
	c := &Store{shared: s.shared, base: s.client}
	c.open(context.Background())
	return c
}

// sessionPool is the pool of a session's client: one goroutine uses one
// connection at a time; a second may be opened while a broken one closes.
const sessionPool = 2

// open connects a session's client, starts its session and runs
// serverStatus, as the reference's store checks a new connection (the
// client connects lazily: this is where it does). A failure is logged and
// left to the first operation to report.
func (s *Store) open(ctx context.Context) {
	client, err := mongo.Connect(s.clientOptions(sessionPool))
	if err != nil {
		// Open connected with the same options; should they fail here,
		// the session uses the process's client.
		s.logf("mongodb: session client: %v", redact(err.Error()))
		client = s.base
	}
	s.bind(client)
	if s.sess, err = client.StartSession(); err != nil {
		s.logf("mongodb: session: %v", redact(err.Error()))
		s.broken = true
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	ctx, end := noDeadline(ctx)
	defer end()
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Err(); err != nil {
		s.logf("mongodb: serverStatus on a new connection: %v", redact(err.Error()))
	}
}

// closeSession ends the session and its client (not the process's).
func (s *Store) closeSession(ctx context.Context) error {
	if s.sess != nil {
		s.sess.EndSession(ctx)
	}
	if s.client == s.base {
		return nil
	}
	return s.client.Disconnect(ctx)
}

// done ends an operation of a session: after a failure the reference's
// requester closes its store's session and client and opens them again
// (clearErrors); a transient error is retried first, as the reference's
// store retries it, so only errors the run does not retry reopen. An
// operation the run ended (its context done: op_timeout, the end of the
// phase) reopens nothing: its connection is closed already. ctx (the
// operation's) bounds the reopening.
func (s *Store) done(ctx context.Context, err error) error {
	if err == nil || s.base == nil || graph.IsTransient(err) || ctx.Err() != nil {
		return err
	}
	old := *s
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		old.closeSession(ctx)
	}()
	s.sess, s.broken = nil, false
	s.open(ctx)
	return err
}

// explicit is ctx carrying the session's explicit session, for the
// commands the reference sends on its session; the process's store sends
// them on an implicit one.
func (s *Store) explicit(ctx context.Context) context.Context {
	if s.sess == nil {
		return ctx
	}
	return mongo.NewSessionContext(ctx, s.sess)
}

// inTxn runs fn as the reference runs a command block: in a multi-document
// transaction (mongo_transactions on) that commits when fn succeeds and is
// aborted when fn or the commit fails; without transactions, fn's commands
// alone. fn's commands that the reference sends on its session must use
// the context fn is given. There is no retry here: transient errors go
// back to the run, which retries the operation, so a new transaction.
func (s *Store) inTxn(ctx context.Context, fn func(ctx context.Context) error) error {
	if s.broken {
		return graph.Connection(errSessionBroken)
	}
	if !s.txn {
		return classify(fn(s.explicit(ctx)))
	}
	sess := s.sess
	if sess == nil {
		var err error
		if sess, err = s.client.StartSession(); err != nil {
			return classify(err)
		}
		defer sess.EndSession(context.WithoutCancel(ctx))
	}
	if err := sess.StartTransaction(); err != nil {
		return classify(err)
	}
	if err := fn(mongo.NewSessionContext(ctx, sess)); err != nil {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		actx, end := noDeadline(actx)
		defer end()
		sess.AbortTransaction(actx)
		return classify(err)
	}
	return classify(sess.CommitTransaction(ctx))
}

// errSessionBroken is the error of a session that could not be started.
var errSessionBroken = errors.New("mongodb: the requester's session could not be started; see the log")

// noDeadline is ctx without its deadline: ended when ctx ends, but the
// driver, which turns a deadline into maxTimeMS on every command, sends
// none (the reference's commands carry none). Every operation runs on it.
func noDeadline(ctx context.Context) (context.Context, func()) {
	if _, ok := ctx.Deadline(); !ok {
		return ctx, func() {}
	}
	c, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return c, func() {
		stop()
		cancel(nil)
	}
}
