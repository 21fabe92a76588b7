package mysql

import (
	"errors"
	"sync/atomic"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
)

// TestRefusedInfileFallsBackForGood: a server that refuses LOAD DATA
// LOCAL INFILE (1148) makes every bulk write, nodes and counts as well as
// links, fall back to INSERTs from then on, without asking again; any
// other error of a LOAD DATA is the write's error.
func TestRefusedInfileFallsBackForGood(t *testing.T) {
	s := &Store{noInfile: &atomic.Bool{}}
	calls := 0
	refused := func() error {
		calls++
		return &gomysql.MySQLError{Number: 1148, Message: "The used command is not allowed with this MariaDB version"}
	}
	if ok, err := s.tryInfile("links", refused); ok || err != nil {
		t.Fatalf("refused LOAD DATA: ok %v, err %v; want the INSERT fallback", ok, err)
	}
	if ok, err := s.tryInfile("links", refused); ok || err != nil || calls != 1 {
		t.Fatalf("after a refusal: ok %v, err %v, %d LOAD DATAs sent; want 1 and the fallback", ok, err, calls)
	}

	s = &Store{noInfile: &atomic.Bool{}}
	full := &gomysql.MySQLError{Number: 1114, Message: "The table is full"}
	if ok, err := s.tryInfile("links", func() error { return full }); !ok || !errors.Is(err, full) {
		t.Fatalf("failed LOAD DATA: ok %v, err %v; want its error", ok, err)
	}
	if ok, err := s.tryInfile("links", func() error { return nil }); !ok || err != nil {
		t.Fatalf("LOAD DATA after another error: ok %v, err %v", ok, err)
	}
}
