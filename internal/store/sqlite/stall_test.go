package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"testing"
	"time"

	sqlite "modernc.org/sqlite"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// stall holds the statement that calls lb_stall() inside SQLite, as a
// disk that does not finish an fsync holds a commit (modernc's SQLite has
// no Go file layer that writes to slow down): stalled gets a value when
// one starts, and it returns once released is closed.
var stall = struct {
	stalled  chan struct{}
	released chan struct{}
}{make(chan struct{}, 1), make(chan struct{})}

func init() {
	sqlite.MustRegisterScalarFunction("lb_stall", 0, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		stall.stalled <- struct{}{}
		<-stall.released
		return int64(1), nil
	})
}

// TestCloseWithAStatementHeld: the store's Close waits for the statement
// in flight on the writer's connection (closing its prepared statements
// needs that connection), which a stalled disk holds for as long as it
// stalls; closing within a bound returns at the bound, naming the
// database. Before, a run exited only when the fsync returned.
// Reliability(store): closing a SQLite or Pebble store while its disk holds an fsync (a statement or commit in flight) | `store.CloseWithin` returns at its bound with "the store at PATH did not close in N s (disk or server stuck)" (the command's `close_timeout`); the store finishes closing on its own if the disk comes back
func TestCloseWithAStatementHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lb.db")
	s, err := Open(context.Background(), store.Options{Props: store.MapProps{"sqlite_path": path}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	// A link write prepares the store's statements on the writer's
	// connection, which Close then closes.
	if _, err := s.AddLink(ctx, &graph.Link{ID1: 1, LinkType: 1, ID2: 2, Visibility: 1, Data: []byte("d")}); err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() {
		_, err := s.w.ExecContext(context.Background(), "INSERT INTO linkbench_meta (k, v) SELECT 'stall', lb_stall()")
		held <- err
	}()
	<-stall.stalled
	start := time.Now()
	err = store.CloseWithin(s, 300*time.Millisecond)
	var stuck *store.CloseStuckError
	if took := time.Since(start); took > 1500*time.Millisecond || !errors.As(err, &stuck) ||
		err.Error() != "the store at "+path+" did not close in 0.3 s (disk or server stuck)" {
		t.Fatalf("after %v: %v", took, err)
	}
	close(stall.released)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
}
