package postgres

import (
	"testing"

	"github.com/linkbench/linkbench/internal/store/storetest"
)

// TestServersFindsTheLocalServer: the data directory's postmaster.pid
// leads to the test server's postmaster.
func TestServersFindsTheLocalServer(t *testing.T) { storetest.CheckLocalServer(t, fresh(t, nil)) }
