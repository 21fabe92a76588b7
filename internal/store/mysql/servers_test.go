package mysql

import (
	"testing"

	"github.com/linkbench/linkbench/internal/store/storetest"
)

// TestServersFindsTheLocalServer: @@pid_file leads to the test server.
func TestServersFindsTheLocalServer(t *testing.T) { storetest.CheckLocalServer(t, fresh(t, "InnoDB")) }
