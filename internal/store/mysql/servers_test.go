package mysql

import (
	"context"
	"testing"

	"github.com/linkbench/linkbench/internal/sysmon"
)

// TestServersFindsTheLocalServer: the test server runs on this machine,
// so its pid file leads to a live process (what the resource figures of
// the results follow).
func TestServersFindsTheLocalServer(t *testing.T) {
	s := fresh(t, "InnoDB")
	infos, err := s.Servers(context.Background())
	if err != nil || len(infos) != 1 {
		t.Fatalf("Servers: %v, %v", infos, err)
	}
	in := infos[0]
	if in.DataDir == "" || in.PIDFile == "" {
		t.Fatalf("no data directory or pid file: %+v", in)
	}
	pid, why := sysmon.Locate("", sysmon.Server{Addr: in.Addr, PIDFile: in.PIDFile, DataDir: in.DataDir})
	if pid == 0 {
		t.Fatalf("the local test server was not located: %s", why)
	}
}
