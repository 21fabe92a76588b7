package storetest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// ReconnectAfterRestart restarts the server under an open store (from
// open: empty, of the test's server) with scripts/<script> restart: calls
// that hit the restart must fail as connection errors, and a call must
// succeed within within of the restart, and the writes after it count. It
// restarts the shared server, so it runs only with the outage tests
// (LINKBENCH_OUTAGE_TESTS=1). A store with sessions is called through a
// session opened before the restart, whose connection the restart breaks.
func ReconnectAfterRestart(t *testing.T, script string, within time.Duration, open func(t *testing.T) store.Store) {
	if os.Getenv("LINKBENCH_OUTAGE_TESTS") != "1" {
		t.Skip("restarts the shared server: runs with the outage tests (LINKBENCH_OUTAGE_TESTS=1, make test-outage), not beside other packages' tests")
	}
	path, _ := filepath.Abs(filepath.Join("../../../scripts", script))
	if _, err := os.Stat(path); err != nil {
		t.Skip("scripts/" + script + " not found")
	}
	s := open(t)
	if in, ok := s.(store.Initializer); ok {
		if err := in.Init(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
	ops := s
	if ss, ok := s.(store.Sessioner); ok {
		ops = ss.Session()
		defer ops.Close()
	}
	l := graph.Link{ID1: 1, LinkType: graph.DefaultLinkType, ID2: 2, Visibility: 1, Time: 1}
	if _, err := ops.AddLink(ctx, &l); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", path, "restart").CombinedOutput(); err != nil {
		t.Fatalf("restart: %v\n%s", err, out)
	}
	var err error
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if _, err = ops.CountLinks(ctx, 1, graph.DefaultLinkType); err == nil {
			break
		}
		if !errors.Is(err, graph.ErrConnection) {
			t.Fatalf("error after restart is not a connection error: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // the pool redials on the next call
	}
	if err != nil {
		t.Fatalf("no successful call within %s of the restart: %v", within, err)
	}
	l.ID2 = 3
	if _, err := ops.AddLink(context.Background(), &l); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.CountLinks(ctx, 1, graph.DefaultLinkType); c != 2 {
		t.Fatalf("count %d after restart", c)
	}
}
