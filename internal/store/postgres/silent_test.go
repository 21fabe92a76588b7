package postgres

import (
	"context"
	"net"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

// TestSilentServer: a server that accepts connections and never answers
// fails Open at connect_timeout, naming its address.
func TestSilentServer(t *testing.T) {
	storetest.ConnectIsBounded(t, "PostgreSQL", func(ctx context.Context, p store.MapProps) (store.Store, error) {
		return Open(ctx, store.Options{Props: p, Concurrency: 2})
	}, func(addr string) store.MapProps {
		host, port, _ := net.SplitHostPort(addr)
		return store.MapProps{"host": host, "port": port}
	})
}
