package storetest

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/store"
)

// SilentListener listens on a loopback port, accepts every connection and
// never writes a byte, as a server stopped with SIGSTOP (whose kernel
// still completes the handshakes), a hung one or another program on the
// port does. It returns its host:port; the test's end closes it.
func SilentListener(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// ConnectIsBounded opens a store of kind (open, with props that point it
// at a silent listener, plus connect_timeout) and checks that Open fails
// within connect_timeout and a little more, naming the server's address
// and the bound; then that a cancelled context (Ctrl-C) ends the
// connecting at once.
//
// Reliability(server): a server that accepts connections and never answers (a listener that never writes, a server stopped with SIGSTOP before the command, another program on its port) | the store's open fails at `connect_timeout` (default 10 s: the dial, TLS, the handshake and authentication, and the first query together): one line naming the server's address and the bound, for PostgreSQL, MySQL and MongoDB; Ctrl-C ends the wait at once
func ConnectIsBounded(t *testing.T, kind string, open func(ctx context.Context, props store.MapProps) (store.Store, error), props func(addr string) store.MapProps) {
	addr := SilentListener(t)
	p := props(addr)
	p["connect_timeout"] = "1"
	start := time.Now()
	st, err := open(context.Background(), p)
	took := time.Since(start)
	if err == nil {
		st.Close()
		t.Fatalf("%s at a silent listener opened", kind)
	}
	want := "cannot connect to " + kind + " at " + addr + ": no answer within 1 s (connect_timeout)"
	if !strings.Contains(err.Error(), want) || took > 2500*time.Millisecond || took < 900*time.Millisecond {
		t.Fatalf("after %v: %v\nwant %q within 1 s", took, err, want)
	}
	p["connect_timeout"] = "60"
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(300 * time.Millisecond) // connecting is under way: a silent listener never ends it
		cancel()
	}()
	start = time.Now()
	st, err = open(ctx, p)
	if err == nil {
		st.Close()
		t.Fatal("opened")
	}
	if took := time.Since(start); took > 2*time.Second || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("cancelled after 300 ms: %v after %v", err, took)
	}
}
