package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestConnectIsBounded: Connect returns at its bound even when the
// driver's connect ignores its context, and releases what it opened once
// it returns; the store's reading of an error comes first; a cancelled
// context says so.
func TestConnectIsBounded(t *testing.T) {
	srv := Peer{Kind: "PostgreSQL", Addr: "127.0.0.1:5"}
	none := func(error) error { return nil }
	release, undone := make(chan struct{}), make(chan struct{})
	start := time.Now()
	err := Connect(context.Background(), srv, 100*time.Millisecond, func(context.Context) error { <-release; return nil }, func() { close(undone) }, none)
	var na *NoAnswerError
	if took := time.Since(start); took > time.Second || !errors.As(err, &na) || !errors.Is(err, context.DeadlineExceeded) ||
		err.Error() != "cannot connect to PostgreSQL at 127.0.0.1:5: no answer within 0.1 s (connect_timeout): the server is stopped (SIGSTOP), hung, overloaded or cut off, or another program listens on that port; check host and port" {
		t.Fatalf("after %v: %v", took, err)
	}
	close(release)
	<-undone

	refused := errors.New("cannot connect to PostgreSQL at 127.0.0.1:5: connection refused")
	err = Connect(context.Background(), srv, time.Second, func(context.Context) error { return errors.New("dial: refused") }, func() {},
		func(error) error { return refused })
	if err != refused {
		t.Fatalf("the store's reading: %v", err)
	}
	err = Connect(context.Background(), srv, time.Second, func(context.Context) error { return errors.New("odd") }, func() {}, none)
	if err == nil || err.Error() != "cannot connect to PostgreSQL at 127.0.0.1:5: odd" {
		t.Fatalf("no reading: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = Connect(ctx, srv, time.Minute, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, func() {}, none)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted while connecting") {
		t.Fatalf("cancelled: %v", err)
	}
	if d, err := ConnectTimeout(MapProps{"connect_timeout": "2.5"}); d != 2500*time.Millisecond || err != nil {
		t.Fatalf("connect_timeout 2.5: %v %v", d, err)
	}
	if _, err := ConnectTimeout(MapProps{"connect_timeout": "-1"}); err == nil {
		t.Fatal("connect_timeout -1 accepted")
	}
}
