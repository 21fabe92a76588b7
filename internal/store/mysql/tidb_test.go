package mysql

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

// tidbFresh opens the store on a new database of the opt-in TiDB server
// (LINKBENCH_TEST_TIDB, the url `scripts/tidb.sh url` prints; `make
// test-tidb` sets it). TiDB takes minutes to build, so this test is never
// part of make test.
func tidbFresh(t *testing.T) *Store {
	t.Helper()
	raw := os.Getenv("LINKBENCH_TEST_TIDB")
	if raw == "" {
		t.Skip("LINKBENCH_TEST_TIDB not set (make test-tidb)")
	}
	base, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := Open(context.Background(), store.Options{Props: store.MapProps{"url": base.String()}})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("lbtidb_%d_%d", os.Getpid(), dbSeq.Add(1))
	if _, err := admin.w.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	u := *base
	u.Path = "/" + name
	s, err := Open(context.Background(), store.Options{Props: store.MapProps{"url": u.String()}, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		admin, err := Open(context.Background(), store.Options{Props: store.MapProps{"url": base.String()}})
		if err == nil {
			admin.w.Exec("DROP DATABASE IF EXISTS " + name)
			admin.Close()
		}
	})
	if err := s.Init(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTiDBConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return tidbFresh(t) })
}

func TestTiDBIsDetected(t *testing.T) {
	s := tidbFresh(t)
	d, err := s.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Version, "TiDB") || d.Settings["server_kind"] != "TiDB" {
		t.Fatalf("description %+v: want the TiDB version and server_kind TiDB", d)
	}
}
